"""The STARE readiness report: built from the registry and the recorded check runs only.

Per check, its latest run counts: ``pass`` when it passed for the current code and
configuration and against the check's current threshold, ``fail`` when it failed for them,
``stale`` when it was recorded for other code, configuration or threshold, ``pending`` when it
never ran. Per capability:

* verdict: ``pending`` when it is not built or a check is pending, ``fail`` when a check
  failed, else ``stale`` when a check is stale, else ``pass`` (every check passed);
* evidence: the highest kind of its passing checks (``none`` < ``synthetic`` <
  ``gated-eval``), capped below the lowest kind of a failing check: the report never claims
  evidence beyond a failing check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from readiness.evidence import code_version, config_version
from readiness.models import Evidence
from readiness.registry import CAPABILITIES, NOT_BUILT, Capability, Check

LEVELS = ("none", "synthetic", "gated-eval")


@dataclass(frozen=True)
class CheckStatus:
    check: Check
    status: str  # pass, fail, stale, pending
    evidence: Evidence | None


@dataclass(frozen=True)
class CapabilityReport:
    capability: Capability
    deployment: str
    evidence: str
    verdict: str
    checks: list[CheckStatus]

    def to_dict(self) -> dict[str, Any]:
        c = self.capability
        return {
            "dim": c.dim,
            "capability": c.name,
            "summary": c.summary,
            "implementation": c.implementation,
            "deployment": self.deployment,
            "switch": c.switch or None,
            "evidence": self.evidence,
            "verdict": self.verdict,
            "checks": [
                {
                    "id": s.check.id,
                    "kind": s.check.kind,
                    "metric": s.check.metric,
                    "threshold": s.check.threshold,
                    "status": s.status,
                    "value": s.evidence.value if s.evidence else None,
                    "dataset": s.evidence.dataset if s.evidence else None,
                    "recorded_at": s.evidence.created_at.isoformat() if s.evidence else None,
                    "blocks": s.check.blocks,
                }
                for s in self.checks
            ],
        }


def _status(capability: Capability, check: Check, latest: Evidence | None) -> str:
    if latest is None:
        return "pending"
    current = (
        latest.code_version == code_version(capability)
        and latest.config_version == config_version(capability)
        and latest.threshold == check.threshold
        and latest.kind == check.kind
    )
    if not current:
        return "stale"
    passed = latest.passed and latest.value is not None and latest.value >= check.threshold
    return "pass" if passed else "fail"


def capability_report(capability: Capability, latest: dict[str, Evidence]) -> CapabilityReport:
    statuses = [
        CheckStatus(check, _status(capability, check, latest.get(check.id)), latest.get(check.id))
        for check in capability.checks
    ]
    kinds = {s.status: [] for s in statuses}
    for s in statuses:
        kinds[s.status].append(LEVELS.index(s.check.kind))
    level = max(kinds.get("pass", []), default=0)
    if kinds.get("fail"):
        level = min(level, min(kinds["fail"]) - 1)
    if capability.implementation == NOT_BUILT or not statuses or kinds.get("pending"):
        verdict = "fail" if kinds.get("fail") else "pending"
    elif kinds.get("fail"):
        verdict = "fail"
    elif kinds.get("stale"):
        verdict = "stale"
    else:
        verdict = "pass"
    return CapabilityReport(
        capability=capability,
        deployment="off" if capability.implementation == NOT_BUILT else capability.deployment(),
        evidence=LEVELS[max(level, 0)],
        verdict=verdict,
        checks=statuses,
    )


def readiness_report() -> list[CapabilityReport]:
    latest: dict[str, Evidence] = {}
    # The latest run is the last row written (ids grow; clocks can step back).
    for evidence in Evidence.objects.order_by("check_id", "-id").distinct("check_id"):
        latest[evidence.check_id] = evidence
    return [capability_report(c, latest) for c in CAPABILITIES]


def table(reports: list[CapabilityReport]) -> str:
    lines = [
        "| Dim | Capability | implementation | deployment | evidence | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in reports:
        c = r.capability
        lines.append(
            f"| {c.dim} | {c.name} | {c.implementation} | {r.deployment} | {r.evidence} "
            f"| {r.verdict} |"
        )
    return "\n".join(lines) + "\n"


def full_text(reports: list[CapabilityReport]) -> str:
    """The table, then every check that does not pass, with what it blocks."""
    lines = [table(reports), "Open checks:", ""]
    open_checks = [(r, s) for r in reports for s in r.checks if s.status != "pass"]
    for r, s in open_checks:
        value = "" if s.evidence is None else f", last value {s.evidence.value}"
        lines.append(
            f"- {r.capability.key} `{s.check.id}` ({s.check.kind}, {s.status}{value}): "
            f"{s.check.metric} ≥ {s.check.threshold}; blocks {s.check.blocks}"
        )
    not_built = [r.capability.key for r in reports if r.capability.implementation == NOT_BUILT]
    if not_built:
        lines.append(f"- not built yet: {', '.join(not_built)}")
    if not open_checks and not not_built:
        lines.append("- none")
    return "\n".join(lines) + "\n"
