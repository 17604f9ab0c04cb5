"""A consolidation run the worker executes gives way to requests: after each step of a phase
(a batch of at most ``consolidation.phases.context.BATCH`` memories), outside any transaction,
it rests ``MM_WORKER_REST`` times as long as the step worked, at most ``MAX_REST_SECONDS``.

It is the run's progress callback (``consolidation_execute(run, progress=...)``), which every
phase calls after each step. A run that ``meaning-memory consolidate`` executes in its own
process does not rest (someone is waiting for it)."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.db import connection

#: The longest rest after one step, in seconds.
MAX_REST_SECONDS = 5.0


def in_transaction() -> bool:
    return connection.in_atomic_block


class Rest:
    def __init__(
        self,
        ratio: float,
        *,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        self.ratio = ratio
        self.clock, self.sleep = clock or time.monotonic, sleep or time.sleep
        self.worked_since = self.clock()

    def __call__(self, phase: str, done: int, total: int) -> None:
        # Inside a transaction a rest would hold its locks and its snapshot: the work goes on
        # counting until the next step outside one.
        if self.ratio <= 0 or in_transaction():
            return
        worked = self.clock() - self.worked_since
        self.sleep(min(worked * self.ratio, MAX_REST_SECONDS))
        self.worked_since = self.clock()
