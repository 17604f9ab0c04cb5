"""The context every phase gets: the run, its watermarks and progress, and the memories
written since a watermark."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from consolidation.models import (
    ConsolidationRun,
    PhaseWatermark,
)
from memories.models import (
    Memory,
)

#: Memories read a statement.
BATCH = 200


@dataclass
class PhaseContext:
    run: ConsolidationRun
    #: Phase name, done, total: after each step of a phase.
    progress: Callable[[str, int, int], None] | None = None

    @property
    def workspace_id(self) -> int:
        return self.run.workspace_id

    def watermark(self, phase: str) -> int:
        mark = PhaseWatermark.objects.filter(workspace_id=self.workspace_id, phase=phase).first()
        return mark.through_id if mark is not None else 0

    def advance(self, phase: str, through_id: int) -> None:
        """Move the phase's watermark (never back; not in a dry run)."""
        if self.run.dry_run or through_id <= self.watermark(phase):
            return
        PhaseWatermark.objects.update_or_create(
            workspace_id=self.workspace_id, phase=phase, defaults={"through_id": through_id}
        )

    def step(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)


#: The memories Open Threads and fact extraction read: episodic ones and events.
EPISODIC = Q(memory_type=Memory.MemoryType.EPISODIC) | Q(category=Memory.Category.EVENT)


def written_since(context: PhaseContext, through: int, high: int, *where: Q, **more: Any):
    """The workspace's active memories with ids in (``through``, ``high``], oldest first, and
    ``where`` / ``more`` besides."""
    return Memory.objects.filter(
        *where,
        workspace_id=context.workspace_id,
        status=Memory.Status.ACTIVE,
        id__gt=through,
        id__lte=high,
        **more,
    ).order_by("id")


def newest_id(workspace_id: int) -> int:
    found = Memory.objects.filter(workspace_id=workspace_id).order_by("-id").first()
    return found.pk if found is not None else 0
