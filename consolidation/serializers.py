"""The arguments of starting a consolidation run (the REST API and the MCP tool)."""

from __future__ import annotations

from rest_framework import serializers

from consolidation.phases import PHASES
from memories.serializers import Flag, StrictSerializer


class ConsolidateInput(StrictSerializer):
    phases = serializers.ListField(
        child=serializers.ChoiceField(
            choices=list(PHASES),
            error_messages={"invalid_choice": f"must be one of: {', '.join(PHASES)}."},
        ),
        required=False,
        allow_empty=False,
        help_text=f"The phases to run, in run order whatever the order given: {', '.join(PHASES)} "
        "(default all).",
    )
    dry_run = Flag(
        required=False,
        default=False,
        help_text="true: report what each phase would do and write nothing.",
    )
