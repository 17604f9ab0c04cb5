"""Start-up checks of the readiness app: a capability switched on for ranking before its
evidence allows it stops the engine (``meaning-memory serve`` and ``migrate`` run them)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register
from django.db.utils import DatabaseError

from readiness.registry import capability


@register(Tags.database)
def check_asymmetry_ranking(app_configs, databases=None, **kwargs):
    """MM_ASYMMETRY_RANKING needs A's verdict to be ``pass``: every check recorded, current
    and at its threshold (the gated one on LIAR-shaped data above all)."""
    if not settings.MM_ASYMMETRY_RANKING or not databases:
        return []
    from readiness.report import readiness_report

    checks = capability("A/encoding").checks
    hint = (
        "Unset MM_ASYMMETRY_RANKING, or record passing evidence: meaning-memory stare-eval "
        "--liar-train TRAIN --liar-eval EVAL (checks: " + ", ".join(c.id for c in checks) + ")."
    )
    try:
        report = next(r for r in readiness_report() if r.capability.key == "A/encoding")
    except DatabaseError:  # not migrated yet: no evidence at all
        message = (
            "MM_ASYMMETRY_RANKING is on, but this database holds no readiness evidence yet "
            "(not migrated): a.encoding.liar_auc has not passed"
        )
        return [Error(message, id="readiness.E001", hint=hint)]
    if report.verdict == "pass":
        return []
    found = []
    for status in report.checks:
        if status.status == "pass":
            continue
        value = status.evidence.value if status.evidence is not None else None
        shown = "no evidence" if status.evidence is None else f"value {value}"
        found.append(
            f"{status.check.id} is {status.status} ({shown}, threshold {status.check.threshold})"
        )
    return [
        Error(
            "MM_ASYMMETRY_RANKING is on, but Asymmetry's readiness verdict is "
            f"{report.verdict}: " + "; ".join(found),
            id="readiness.E001",
            hint=hint,
        )
    ]
