"""Background jobs (django-q2). Each takes ids or nothing, calls one service, returns a summary."""

from __future__ import annotations

from dataclasses import asdict

from memories.indexing import workspace_indexes_sync


def sync_workspace_indexes() -> dict[str, list[int]]:
    return asdict(workspace_indexes_sync())


def ensure_schedules() -> None:
    """Create or update the engine's recurring jobs (idempotent)."""
    from django_q.models import Schedule

    Schedule.objects.update_or_create(
        name="memories: workspace vector indexes",
        defaults={
            "func": "memories.tasks.sync_workspace_indexes",
            "schedule_type": Schedule.HOURLY,
            "repeats": -1,
        },
    )
