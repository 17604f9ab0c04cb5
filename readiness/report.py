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
from readiness.models import EvaluationRun, Evidence
from readiness.registry import CAPABILITIES, NOT_BUILT, Capability, Check
from readiness.release import release_evidence

LEVELS = ("none", "synthetic", "gated-eval")


@dataclass(frozen=True)
class CheckStatus:
    check: Check
    status: str  # pass, fail, stale, pending
    evidence: Evidence | None
    not_run: str = ""  # why the latest evaluation run could not run it, when it could not


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
                    "source": source(s.evidence),
                    "blocks": s.check.blocks,
                    "not_run": s.not_run or None,
                }
                for s in self.checks
            ],
        }


def source(evidence: Evidence | None) -> str | None:
    """Whose run it is: ``release`` (shipped with the package) or ``install`` (this one's)."""
    if evidence is None:
        return None
    return "release" if getattr(evidence, "release", False) else "install"


def _status(
    capability: Capability,
    check: Check,
    latest: Evidence | None,
    versions: tuple[str, str] | None = None,
) -> str:
    """The check's status from its latest run; current means recorded for ``versions`` (code,
    configuration), by default the capability's now."""
    if latest is None:
        return "pending"
    code, config = versions or (code_version(capability), config_version(capability))
    current = (
        latest.code_version == code
        and latest.config_version == config
        and latest.threshold == check.threshold
        and latest.kind == check.kind
    )
    if not current:
        return "stale"
    passed = latest.passed and latest.value is not None and latest.value >= check.threshold
    return "pass" if passed else "fail"


def capability_report(
    capability: Capability,
    latest: dict[str, Evidence],
    *,
    versions: tuple[str, str] | None = None,
    not_run: dict[str, str] | None = None,
) -> CapabilityReport:
    """The capability's row from its checks' latest runs (``versions``: judge them as current
    for that code and configuration instead of today's, as the history does)."""
    statuses = [
        CheckStatus(
            check,
            _status(capability, check, latest.get(check.id), versions),
            latest.get(check.id),
            (not_run or {}).get(check.id, ""),
        )
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
    """Each capability's row from its checks' latest runs: the install's own, else the
    release's (``readiness.release``), judged alike."""
    latest: dict[str, Evidence] = release_evidence()
    # The latest run is the last row written (ids grow; clocks can step back).
    for evidence in Evidence.objects.order_by("check_id", "-id").distinct("check_id"):
        latest[evidence.check_id] = evidence
    # The last finished run says what it could not run (backfilled runs of old rows say nothing).
    last = (
        EvaluationRun.objects.filter(finished_at__isnull=False)
        .order_by("-started_at", "-id")
        .first()
    )
    not_run = last.not_run if last is not None else {}
    return [capability_report(c, latest, not_run=not_run) for c in CAPABILITIES]


HEADER = (
    "| Dim | Capability | implementation | deployment | evidence | verdict |\n"
    "|---|---|---|---|---|---|\n"
)


def table(reports: list[CapabilityReport]) -> str:
    """The report as a Markdown table: the dimension in bold with its name, every other cell
    as code (what an agent pastes, and what the JSON gives as plain values)."""
    rows = []
    for r in reports:
        c = r.capability
        cells = (c.name, c.implementation, r.deployment, r.evidence, r.verdict)
        rows.append(f"| **{c.dimension}** | " + " | ".join(f"`{v}`" for v in cells) + " |\n")
    return HEADER + "".join(rows) + _release_note(reports)


def _release_note(reports: list[CapabilityReport]) -> str:
    """Under the table, when any verdict rests on the release's runs: which, and of when."""
    released = [
        (r.capability.key, s.evidence)
        for r in reports
        for s in r.checks
        if source(s.evidence) == "release"
    ]
    if not released:
        return ""
    keys = list(dict.fromkeys(key for key, _ in released))
    last = max(e.created_at for _, e in released)
    version = next((e.release_version for _, e in released if e.release_version), "")
    of = f"{last:%Y-%m-%d}" + (f", engine {version}" if version else "")
    return (
        f"\nFrom the release's runs ({of}), where this install has not run a check: "
        f"{', '.join(keys)}. `meaning-memory stare-eval` records this install's own.\n"
    )


def _shown(value: float | None) -> str:
    return "none" if value is None else f"{value:.4g}"


def full_text(reports: list[CapabilityReport]) -> str:
    """The table, then every check that does not pass, with what it blocks (and why the last
    evaluation could not run it, when it could not)."""
    lines = [table(reports), "Open checks:", ""]
    open_checks = [(r, s) for r in reports for s in r.checks if s.status != "pass"]
    for r, s in open_checks:
        value = "" if s.evidence is None else f", last value {_shown(s.evidence.value)}"
        if source(s.evidence) == "release":
            value += ", the release's run"
        line = (
            f"- **{r.capability.dimension}** `{r.capability.name}`: `{s.check.id}` "
            f"(`{s.check.kind}`, `{s.status}`{value}): {s.check.metric} ≥ {s.check.threshold}; "
            f"blocks {s.check.blocks}"
        )
        if s.not_run:
            line += f"; the last evaluation could not run it: {s.not_run}"
        lines.append(line)
    not_built = [r.capability.key for r in reports if r.capability.implementation == NOT_BUILT]
    if not_built:
        lines.append(f"- not built yet: {', '.join(not_built)}")
    if not open_checks and not not_built:
        lines.append("- none")
    return "\n".join(lines) + "\n"
