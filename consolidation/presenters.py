"""A consolidation run as plain data, for every adapter."""

from __future__ import annotations

from typing import Any

from consolidation.models import ConsolidationRun
from memories.services import iso


def run_to_dict(run: ConsolidationRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "status": run.status,
        "trigger": run.trigger,
        "phases": run.phases,
        "dry_run": run.dry_run,
        "counts": run.counts,
        "timings": run.timings,
        "error": run.error,
        "created_at": iso(run.created_at),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
    }
