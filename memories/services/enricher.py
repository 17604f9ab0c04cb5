"""The enricher: the memories written with ``MM_ENRICH_LATER`` enriched a moment after their
answer (``meaning-memory enrich --follow``, which ``serve`` runs, or once by hand).

It takes the due pending rows of one writer at a time (``enrich_pending``), at most
``MM_ENRICH_BATCH``, with ``FOR UPDATE SKIP LOCKED`` (two enrichers never take the same row),
and hands them to ``enrichment.enrich_rows`` in one transaction. A row whose memory another
transaction holds (an erasure, a supersession) stays pending and is tried again a moment later.

An enrichment that fails is tried again after a pause that doubles each time (at most an hour);
after ``MM_ENRICH_ATTEMPTS`` tries it stays ``failed``, with its error, for a curator to retry
(the admin's enrichment list, ``meaning-memory enrich --retry-failed``). One memory that fails
keeps no other of its group from its enrichment. A consolidation run enriches its workspace's
pending memories first (``enrich_workspace``), so that no phase reads a memory without its
entities. Every time here is the database's clock, as the rows' own are.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import DateTimeField, ExpressionWrapper
from django.db.models.functions import Now

from memories.metrics import ENRICH_LAG_SECONDS, ENRICHED
from memories.models import MemoryEnrichment
from memories.services.enrichment import CHANNEL, enrich_rows

logger = logging.getLogger(__name__)

#: The first pause before a failed enrichment is tried again (doubling each time), the longest.
RETRY_SECONDS = 10
RETRY_SECONDS_MOST = 3600
#: The pause before a row whose memory another transaction held is tried again.
HELD_SECONDS = 0.2
#: How long a consolidation run waits for its workspace's rows another enricher holds.
WORKSPACE_WAIT_SECONDS = 120


@dataclass
class Drained:
    #: The rows taken: enriched, held (tried again in a moment) or failed (tried again later).
    taken: int = 0
    enriched: int = 0
    held: int = 0
    #: Rows that failed this time (``failed`` of them for good), by memory.
    retried: list[int] = field(default_factory=list)
    failed: int = 0
    #: Seconds from each enriched memory's write to its enrichment.
    lags: list[float] = field(default_factory=list)


def enrich_pending(*, workspace_id: int | None = None, batch: int | None = None) -> Drained:
    """The pending rows that are due of one writer (the oldest's; of one workspace, or any),
    at most ``batch`` (``MM_ENRICH_BATCH``), enriched in one transaction. Rows another
    enricher holds are skipped."""
    size = batch or settings.MM_ENRICH_BATCH
    done = Drained()
    due = MemoryEnrichment.objects.filter(state=MemoryEnrichment.State.PENDING, next_at__lte=Now())
    if workspace_id is not None:
        due = due.filter(workspace_id=workspace_id)
    with transaction.atomic():
        oldest = (
            due.select_for_update(skip_locked=True)
            .order_by("next_at", "memory_id")
            .values_list("workspace_id", "agent_id")
            .first()
        )
        if oldest is None:
            return done
        workspace, agent_id = oldest
        group = list(
            due.select_for_update(skip_locked=True)
            .filter(workspace_id=workspace, agent_id=agent_id)
            .order_by("next_at", "memory_id")[:size]
        )
        done.taken = len(group)
        try:
            with transaction.atomic():
                _count(done, enrich_rows(workspace, agent_id, group))
            return done
        except Exception:
            logger.exception("enrichment of %d memories failed; trying each", len(group))
        for row in group:  # one memory that fails keeps no other from its enrichment
            try:
                with transaction.atomic():
                    _count(done, enrich_rows(workspace, agent_id, [row]))
            except Exception as error:
                logger.exception("enrichment of memory %d failed", row.memory_id)
                done.retried.append(row.memory_id)
                done.failed += _failed(row, error)
    return done


def _count(done: Drained, enriched) -> None:
    done.lags += enriched.lags
    done.enriched += len(enriched.lags)
    done.held += len(enriched.held)
    for row in enriched.held:
        _again_in(row, seconds=HELD_SECONDS)


def enrich_workspace(workspace_id: int) -> int:
    """Every memory of the workspace pending when it is called enriched now, due or not (a
    consolidation run's first step), waiting for those another enricher or writer holds; how
    many were enriched. A memory whose enrichment fails has its try and is not waited for;
    memories written meanwhile are enriched along, never waited for (a steady stream of writes
    would keep the run from starting)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        (started,) = cursor.fetchone()
    earlier = MemoryEnrichment.objects.filter(
        workspace_id=workspace_id, state=MemoryEnrichment.State.PENDING, created_at__lte=started
    )
    earlier.update(next_at=Now())
    total, tried = 0, set()
    deadline = time.monotonic() + WORKSPACE_WAIT_SECONDS
    while True:
        done = enrich_pending(workspace_id=workspace_id)
        total += done.enriched
        tried.update(done.retried)
        if not earlier.exclude(memory_id__in=tried).exists():
            return total
        if done.enriched or done.retried:
            continue
        if time.monotonic() > deadline:
            logger.warning("workspace %d: pending enrichments still held; going on", workspace_id)
            return total
        time.sleep(HELD_SECONDS / 4)


def retry_failed(*, workspace_id: int | None = None) -> int:
    """The failed enrichments (of one workspace, or all) made pending again, due now."""
    rows = MemoryEnrichment.objects.filter(state=MemoryEnrichment.State.FAILED)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return rows.update(
        state=MemoryEnrichment.State.PENDING, attempts=0, next_at=Now(), last_error=""
    )


def _failed(row: MemoryEnrichment, error: Exception) -> int:
    """The row tried once more, later; past the last try, ``failed``. 1 if it failed now."""
    attempts = row.attempts + 1
    gave_up = attempts >= settings.MM_ENRICH_ATTEMPTS
    pause = min(RETRY_SECONDS * 2 ** min(attempts - 1, 30), RETRY_SECONDS_MOST)
    MemoryEnrichment.objects.filter(workspace_id=row.workspace_id, memory_id=row.memory_id).update(
        attempts=attempts,
        last_error=f"{type(error).__name__}: {error}"[:2000],
        state=MemoryEnrichment.State.FAILED if gave_up else MemoryEnrichment.State.PENDING,
        next_at=_later(pause),
    )
    return int(gave_up)


def _again_in(row: MemoryEnrichment, *, seconds: float) -> None:
    MemoryEnrichment.objects.filter(workspace_id=row.workspace_id, memory_id=row.memory_id).update(
        next_at=_later(seconds)
    )


def _later(seconds: float) -> ExpressionWrapper:
    return ExpressionWrapper(Now() + timedelta(seconds=seconds), output_field=DateTimeField())


def follow(*, idle_seconds: float = 5.0, stop=lambda: False, report=None) -> None:
    """Enrich as memories come (``meaning-memory enrich --follow``): after each write's
    notice, and every ``idle_seconds`` in any case (a notice sent while no enricher listened,
    a retry that came due). A database that goes away is waited for, one line logged; any
    other error is logged and the next batch taken."""
    import psycopg
    from django.db import DatabaseError, close_old_connections

    listener = None
    while not stop():
        try:
            if listener is None:
                listener = _listen()
            done = enrich_pending()
        except (DatabaseError, psycopg.Error) as error:
            logger.warning("enricher: the database is away (%s); trying again", error)
            listener = _closed(listener)
            close_old_connections()
            connection.close()
            time.sleep(1.0)
            continue
        except Exception:
            logger.exception("enricher: a batch failed; going on")
            time.sleep(1.0)
            continue
        for lag in done.lags:
            ENRICH_LAG_SECONDS.observe(lag)
        ENRICHED.labels("enriched").inc(done.enriched)
        ENRICHED.labels("failed").inc(done.failed)
        if report is not None and (done.enriched or done.failed):
            report(done)
        if done.enriched or done.retried:
            continue  # more may be due already
        try:
            _drain(listener, HELD_SECONDS if done.held else idle_seconds)
        except Exception:  # the listening connection broke: a new one next time
            listener = _closed(listener)
    _closed(listener)


def _listen():
    import psycopg

    listener = psycopg.connect(**_connection_params(), autocommit=True)
    listener.execute(f"LISTEN {CHANNEL}")
    return listener


def _closed(listener) -> None:
    if listener is not None:
        with contextlib.suppress(Exception):
            listener.close()
    return None


def _drain(listener, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for a notice; then take the others already waiting."""
    for _ in listener.notifies(timeout=timeout, stop_after=1):
        pass
    for _ in listener.notifies(timeout=0.001):
        pass


def _connection_params() -> dict[str, Any]:
    params = dict(connection.get_connection_params())
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    return params
