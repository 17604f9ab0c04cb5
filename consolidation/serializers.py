"""The arguments of starting a consolidation run (the REST API and the MCP tool)."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from consolidation.phases import PHASES
from memories import rules
from memories.serializers import (
    BLANK_MESSAGES,
    INTEGER_MESSAGES,
    SEARCH_QUERY,
    Flag,
    Integer,
    Rule,
    StrictSerializer,
    Text,
)


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


class SagaInput(StrictSerializer):
    #: Exactly one of them (the OpenAPI schema says so: ``memories.api.schema``).
    one_of = ("query", "thread_id")

    query = Text(
        required=False,
        trim_whitespace=False,
        error_messages=BLANK_MESSAGES,
        validators=[SEARCH_QUERY],
        help_text="The story you are after, in your words (or give a thread_id).",
    )
    thread_id = Text(
        required=False,
        validators=[
            Rule(lambda value: rules.public_id(value, "thread id"), pattern=rules.PUBLIC_ID_PATTERN)
        ],
        help_text="A thread's id (or give a query).",
    )
    limit = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.search_limit, minimum=1, maximum=settings.MM_SEARCH_MAX_LIMIT)],
        help_text=f"How many memories, 1 to {settings.MM_SEARCH_MAX_LIMIT}; default 20.",
    )

    def validate(self, attrs):
        if ("query" in attrs) == ("thread_id" in attrs):
            raise serializers.ValidationError(
                {"query": ["give a query or a thread_id (one of them, not both)."]}
            )
        return attrs
