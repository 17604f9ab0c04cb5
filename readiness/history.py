"""Each capability's evidence over time: per evaluation run, its checks' values against their
thresholds, the code and configuration they were measured for, and the verdict the report gave
right after that run, marked when it differs from the one before.

A run is one ``stare-eval`` (``EvaluationRun``); a row recorded outside one counts as a run of
its own. After each run the verdict is judged as the report judged it then: a check's latest
row is current when it was recorded for the code and configuration of that run's rows (older
rows for other versions are stale), against today's registry (its checks and thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from readiness.models import Evidence
from readiness.registry import CAPABILITIES, Capability
from readiness.report import capability_report

#: How many of a capability's latest runs the history shows by default, and at most.
DEFAULT_RUNS = 30
MAX_RUNS = 500


@dataclass
class Point:
    """A capability after one run that measured it."""

    run: int | None  # the evaluation run, None for a row recorded outside one
    recorded_at: str
    engine_version: str
    code_version: str
    config_version: str
    verdict: str
    evidence: str
    previous_verdict: str | None
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def when(self) -> str:
        """``2026-12-02 14:12`` (UTC)."""
        return self.recorded_at[:16].replace("T", " ")

    @property
    def changed(self) -> bool:
        return self.previous_verdict is not None and self.previous_verdict != self.verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "recorded_at": self.recorded_at,
            "engine_version": self.engine_version,
            "code_version": self.code_version,
            "config_version": self.config_version,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "changed": self.changed,
            "previous_verdict": self.previous_verdict,
            "checks": self.checks,
        }


@dataclass
class CapabilityHistory:
    capability: Capability
    points: list[Point]

    def to_dict(self) -> dict[str, Any]:
        c = self.capability
        return {
            "dim": c.dim,
            "capability": c.name,
            "key": c.key,
            "checks": [
                {"id": k.id, "kind": k.kind, "metric": k.metric, "threshold": k.threshold}
                for k in c.checks
            ],
            "runs": [p.to_dict() for p in self.points],
        }


def _groups(rows: list[Evidence]) -> list[list[Evidence]]:
    """The rows by run, in the order they were written (a row outside a run alone)."""
    groups: dict[Any, list[Evidence]] = {}
    for row in rows:
        groups.setdefault(row.run_id if row.run_id is not None else ("row", row.pk), []).append(row)
    return list(groups.values())


def readiness_history(
    capabilities: tuple[Capability, ...] = CAPABILITIES, runs: int = DEFAULT_RUNS
) -> list[CapabilityHistory]:
    """Each capability's last ``runs`` points, oldest first."""
    ids = {check.id for c in capabilities for check in c.checks}
    rows = list(Evidence.objects.filter(check_id__in=ids).select_related("run").order_by("id"))
    owner = {check.id: c for c in capabilities for check in c.checks}
    latest: dict[str, Evidence] = {}
    points: dict[Capability, list[Point]] = {c: [] for c in capabilities}
    for group in _groups(rows):
        touched: dict[Capability, list[Evidence]] = {}
        for row in group:
            latest[row.check_id] = row
            touched.setdefault(owner[row.check_id], []).append(row)
        for capability, measured in touched.items():
            last = measured[-1]
            report = capability_report(
                capability, latest, versions=(last.code_version, last.config_version)
            )
            before = points[capability]
            before.append(
                Point(
                    run=last.run_id,
                    recorded_at=last.created_at.isoformat(),
                    engine_version=last.run.engine_version if last.run else "",
                    code_version=last.code_version,
                    config_version=last.config_version,
                    verdict=report.verdict,
                    evidence=report.evidence,
                    previous_verdict=before[-1].verdict if before else None,
                    checks={
                        row.check_id: {
                            "value": row.value,
                            "threshold": row.threshold,
                            "passed": row.passed,
                            "dataset": row.dataset,
                            "dataset_sha256": row.dataset_sha256,
                            "dataset_bytes": row.dataset_bytes,
                        }
                        for row in measured
                    },
                )
            )
    return [CapabilityHistory(c, points[c][-runs:]) for c in capabilities]
