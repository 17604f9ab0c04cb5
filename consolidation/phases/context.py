"""The context every phase gets: the run, its watermarks and progress, and the memories
written since a watermark."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
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
#: The longest rest after one step (``PhaseContext.rest``), in seconds.
MAX_REST_SECONDS = 5.0


@dataclass
class PhaseContext:
    run: ConsolidationRun
    #: Phase name, done, total: after each step of a phase.
    progress: Callable[[str, int, int], None] | None = None
    #: After each step, outside any transaction, the run rests this many times as long as
    #: the step worked (the worker's ``MM_WORKER_REST``), so that a long run leaves the
    #: machine's CPUs, and PostgreSQL's, to requests; 0: no rest.
    rest: float = 0.0
    _worked_since: float = field(default_factory=lambda: time.monotonic(), repr=False)

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
        if self.rest > 0 and not in_transaction():
            worked = time.monotonic() - self._worked_since
            time.sleep(min(worked * self.rest, MAX_REST_SECONDS))
            self._worked_since = time.monotonic()


def in_transaction() -> bool:
    return connection.in_atomic_block


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
