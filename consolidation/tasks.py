"""Background jobs (django-q2): a queued consolidation run, executed by a worker."""

from __future__ import annotations

from consolidation.models import ConsolidationRun
from consolidation.services import consolidation_execute

#: The function name a queued run's job is stored under.
RUN = "consolidation.tasks.run_consolidation"


def run_consolidation(run_pk: int) -> dict[str, str]:
    """Execute a queued run (a run already started or ended is left as it is)."""
    run = ConsolidationRun.objects.filter(pk=run_pk, status=ConsolidationRun.Status.QUEUED).first()
    if run is None:
        return {"status": "not queued"}
    run = consolidation_execute(run)
    return {"run_id": run.run_id, "status": run.status}
