"""Background jobs (django-q2): a queued consolidation run, executed by a worker."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Max
from django_q.tasks import async_task

from consolidation.erasure import purge_storage
from consolidation.models import ConsolidationRun, PhaseWatermark
from consolidation.phases import PHASES
from consolidation.rest import Rest
from consolidation.services import consolidation_execute, consolidation_start
from memories.errors import Conflict
from memories.models import Memory, Workspace


def purge_erased(workspace_id: int) -> dict[str, int]:
    """After an erasure: the erased rows' bytes out of consolidation's tables' files."""
    return purge_storage()


#: The function name a queued run's job is stored under.
RUN = "consolidation.tasks.run_consolidation"


def run_consolidation(run_pk: int) -> dict[str, str]:
    """Execute a queued run (a run already started or ended is left as it is), resting
    ``MM_WORKER_REST`` times as long as each step worked (``consolidation.rest``)."""
    run = ConsolidationRun.objects.filter(pk=run_pk, status=ConsolidationRun.Status.QUEUED).first()
    if run is None:
        return {"status": "not queued"}
    run = consolidation_execute(run, progress=Rest(settings.MM_WORKER_REST))
    return {"run_id": run.run_id, "status": run.status}


#: The function name of the scheduled job that queues the runs due.
DUE = "consolidation.tasks.queue_due_runs"


def queue_due_runs() -> dict[str, int]:
    """Queue a run (trigger ``schedule``) for each workspace with memories its first phase has
    not read yet; a workspace with a run in progress is skipped until the next time. Each run
    is its own job, so workers take different workspaces at once."""
    first = next(iter(PHASES))
    # Two statements, each grouped by workspace, rather than one join of workspaces to their
    # memories: spread over machines by workspace, each machine answers for its own.
    newest = (
        Memory.objects.order_by()
        .values("workspace_id")
        .annotate(newest=Max("id"))
        .values_list("workspace_id", "newest")
    )
    read = dict(
        PhaseWatermark.objects.filter(phase=first).values_list("workspace_id", "through_id")
    )
    queued = skipped = 0
    for pk, newest_id in sorted(newest):
        if newest_id <= (read.get(pk) or 0):
            continue
        try:
            run = consolidation_start(workspace=Workspace(pk=pk), trigger="schedule")
        except Conflict:
            skipped += 1
            continue
        async_task(RUN, run.pk)
        queued += 1
    return {"queued": queued, "busy": skipped}


def ensure_schedules() -> None:
    """Create, update or remove consolidation's recurring job (every ``MM_CONSOLIDATE_EVERY``
    minutes; 0 removes it)."""
    from django_q.models import Schedule

    name = "consolidation: runs due"
    minutes = int(settings.MM_CONSOLIDATE_EVERY)
    if minutes <= 0:
        Schedule.objects.filter(name=name).delete()
        return
    Schedule.objects.update_or_create(
        name=name,
        defaults={
            "func": DUE,
            "schedule_type": Schedule.MINUTES,
            "minutes": minutes,
            "repeats": -1,
        },
    )


def queue_after_import(sender: object, *, workspace_id: int, stored: int, **kwargs: object) -> None:
    """After a bulk import stored memories, queue a run (trigger ``bulk``) unless
    ``MM_CONSOLIDATE_AFTER_IMPORT`` is off or a run of the workspace is queued or running (it
    reads the new memories anyway, or the next one does)."""
    if not settings.MM_CONSOLIDATE_AFTER_IMPORT or stored <= 0:
        return
    try:
        run = consolidation_start(workspace=Workspace(pk=workspace_id), trigger="bulk")
    except Conflict:
        return
    async_task(RUN, run.pk)
