"""The shapes of the readiness report's answers (``CapabilityReport.to_dict``,
``CapabilityHistory.to_dict``) for the OpenAPI schema, on the memories API's ``Answer``
(``memories.api.answers``)."""

from __future__ import annotations

from rest_framework import serializers

from memories.api.answers.memories import Answer
from readiness.models import Evidence
from readiness.registry import DIMENSIONS
from readiness.report import LEVELS

#: A check's status, and a capability's verdict (``readiness.report``).
VERDICTS = ("pass", "fail", "stale", "pending")
#: Whose run a check's latest evidence is (``readiness.report.source``).
SOURCES = ("release", "install")


class CheckAnswer(Answer):
    """A check as the registry declares it."""

    id = serializers.CharField()
    kind = serializers.ChoiceField(choices=Evidence.Kind.choices)
    metric = serializers.CharField()
    threshold = serializers.FloatField()


class CheckStatusAnswer(CheckAnswer):
    """A check in the report: its latest run (null fields when it never ran)."""

    status = serializers.ChoiceField(choices=VERDICTS)
    value = serializers.FloatField(allow_null=True)
    dataset = serializers.CharField(allow_null=True)
    recorded_at = serializers.DateTimeField(allow_null=True)
    source = serializers.ChoiceField(choices=SOURCES, allow_null=True)
    blocks = serializers.CharField(help_text="What a failure (or no run) holds back.")
    not_run = serializers.CharField(
        allow_null=True, help_text="Why the last evaluation run could not run it."
    )


class CapabilityReportAnswer(Answer):
    """A capability's row of the report: how far it is built, deployed and evidenced.

    ``CapabilityReport.to_dict``."""

    dim = serializers.ChoiceField(choices=list(DIMENSIONS))
    capability = serializers.CharField()
    summary = serializers.CharField()
    implementation = serializers.CharField(help_text="GA, beta, preview or not built.")
    deployment = serializers.CharField()
    switch = serializers.CharField(allow_null=True, help_text="The setting that switches it.")
    evidence = serializers.ChoiceField(choices=LEVELS)
    verdict = serializers.ChoiceField(choices=VERDICTS)
    checks = CheckStatusAnswer(many=True)


class ReadinessAnswer(Answer):
    """The STARE readiness report: each capability's row, and the report as a table."""

    capabilities = CapabilityReportAnswer(many=True)
    table = serializers.CharField(help_text="The report as a markdown table.")


class MeasuredAnswer(Answer):
    """One check's row of one run."""

    value = serializers.FloatField(allow_null=True)
    threshold = serializers.FloatField()
    passed = serializers.BooleanField()
    dataset = serializers.CharField()
    dataset_sha256 = serializers.CharField()
    dataset_bytes = serializers.IntegerField(allow_null=True)


class PointAnswer(Answer):
    """A capability after one run that measured it.

    ``history.Point.to_dict``."""

    run = serializers.IntegerField(allow_null=True, help_text="Null: a row outside a run.")
    recorded_at = serializers.DateTimeField()
    engine_version = serializers.CharField()
    code_version = serializers.CharField()
    config_version = serializers.CharField()
    verdict = serializers.ChoiceField(choices=VERDICTS)
    evidence = serializers.ChoiceField(choices=LEVELS)
    changed = serializers.BooleanField()
    previous_verdict = serializers.ChoiceField(choices=VERDICTS, allow_null=True)
    checks = serializers.DictField(child=MeasuredAnswer(), help_text="By check id.")


class CapabilityHistoryAnswer(Answer):
    """A capability's checks and its verdict after each run that measured it.

    ``CapabilityHistory.to_dict``."""

    dim = serializers.ChoiceField(choices=list(DIMENSIONS))
    capability = serializers.CharField()
    key = serializers.CharField()
    checks = CheckAnswer(many=True)
    runs = PointAnswer(many=True, help_text="Oldest first.")


class HistoryAnswer(Answer):
    """Each capability's evidence over time."""

    capabilities = CapabilityHistoryAnswer(many=True)
