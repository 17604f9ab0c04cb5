"""Background jobs (django-q2). Each takes ids or nothing, calls one service, returns a summary."""

from __future__ import annotations

from dataclasses import asdict

from memories.indexing import workspace_indexes_sync
from memories.models import Workspace
from memories.services import link_backfill
from memories.services.purge import purge_storage


def sync_workspace_indexes() -> dict[str, object]:
    return asdict(workspace_indexes_sync())


def link_workspace(workspace_id: int) -> dict[str, int]:
    """Entities and links for the workspace's memories that have none yet (queued after a bulk
    import; see ``meaning-memory link``)."""
    workspace = Workspace.objects.filter(pk=workspace_id).first()
    if workspace is None:
        return {"memories": 0, "links": 0}
    done = link_backfill(workspace=workspace)
    return {"memories": done.memories, "links": done.links}


def purge_erased(workspace_id: int) -> dict[str, int]:
    """After an erasure: the erased rows' bytes out of the tables' files and indexes."""
    return purge_storage(workspace_id)


def heartbeat() -> str:
    """A job that only says the worker runs jobs: ``/readyz`` reads when it last succeeded."""
    return "alive"


#: The function name the heartbeat's job is stored under (django-q2's task records).
HEARTBEAT = "memories.tasks.heartbeat"


def ensure_schedules() -> None:
    """Create or update the engine's recurring jobs (idempotent)."""
    from django_q.models import Schedule

    Schedule.objects.update_or_create(
        name="memories: worker heartbeat",
        defaults={
            "func": HEARTBEAT,
            "schedule_type": Schedule.MINUTES,
            "minutes": 1,
            "repeats": -1,
        },
    )
    Schedule.objects.update_or_create(
        name="memories: workspace vector indexes",
        defaults={
            "func": "memories.tasks.sync_workspace_indexes",
            "schedule_type": Schedule.HOURLY,
            "repeats": -1,
        },
    )
