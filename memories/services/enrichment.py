"""Enrichment: what the engine understands of a new memory (the names it mentions and their
entities, the writer's entities and links, the claimant it is attributed to, its A score),
stored either in the write's own transaction or, with ``MM_ENRICH_LATER``, a moment after the
write is acknowledged.

A write is acknowledged once it is durable and searchable (the row, its vectors, its words, its
idempotency key and provenance, a supersession the writer asked for); with ``MM_ENRICH_LATER``
the same transaction inserts a ``MemoryEnrichment`` row with what the writer gave that only the
enrichment stores (``given``). The enricher (``meaning-memory enrich --follow``, which
``serve`` runs) takes pending rows a batch at a time (``enrich_pending``), recognises their
texts, and in one transaction per writer resolves the claimants, stores the relations and the
A scores (``understand``: the very code a write without ``MM_ENRICH_LATER`` runs) and deletes
the rows. A process killed anywhere leaves either the row (enriched by the next enricher) or
the whole enrichment: never half of it, never twice.

An enrichment that fails is tried again after a pause that doubles each time; after
``MM_ENRICH_ATTEMPTS`` tries it stays ``failed``, with its error, for a curator to retry (the
admin's enrichment list, ``meaning-memory enrich --retry-failed``). A consolidation run enriches
its workspace's pending memories first (``enrich_workspace``), so that no phase reads a memory
without its entities. A memory's answer says ``enrichment``: ``done``, ``pending`` or
``failed``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Case, IntegerField, Value, When
from django.utils import timezone

from memories.commands import EntityRef
from memories.metrics import ENRICH_LAG_SECONDS, ENRICHED
from memories.models import Agent, Memory, MemoryEnrichment
from memories.services.asymmetry import asymmetry_fill
from memories.services.relations import (
    LinkRef,
    Recognised,
    WrittenRelations,
    attributed_entities,
    names_of,
    recognise,
    store_relations,
)

logger = logging.getLogger(__name__)

#: The channel a write's transaction notifies when it leaves a memory to enrich.
CHANNEL = "mm_enrich"
#: The first pause before a failed enrichment is tried again (doubling each time).
RETRY_SECONDS = 10


@dataclass
class Understood:
    """One new memory's enrichment: what its writer gave, and what its text names."""

    memory: Memory
    entities: list[EntityRef] = field(default_factory=list)
    links: list[LinkRef] = field(default_factory=list)
    #: The name and origin of the claimant to resolve (a writer's or a cue's), or None.
    claimant: tuple[str, str] | None = None
    recognised: Recognised = field(default_factory=Recognised)

    def relations(self) -> WrittenRelations:
        return WrittenRelations(self.memory, self.entities, self.links, self.recognised)


def attribute(items: Sequence[Understood], *, agent: Agent | None) -> list[Memory]:
    """Set ``attributed_to`` on the memories whose claimant is named (it may make an entity,
    locked with the names their relations resolve next); the memories set."""
    named = [item for item in items if item.claimant is not None]
    if not named:
        return []
    found = attributed_entities(
        named[0].memory.workspace_id,
        [item.claimant for item in named],
        agent=agent,
        also_lock=names_of([item.relations() for item in items]),
    )
    for item, entity in zip(named, found, strict=True):
        item.memory.attributed_to_id = entity
    return [item.memory for item in named]


def relate(items: Sequence[Understood], *, agent: Agent | None) -> None:
    """The saved memories' relations, then their A scores (which read the relations)."""
    store_relations([item.relations() for item in items], agent=agent)
    asymmetry_fill([item.memory for item in items])


def given(item: Understood) -> dict[str, Any]:
    """What a pending row keeps of what the writer gave (``MemoryEnrichment.given``)."""
    data: dict[str, Any] = {}
    if item.entities:
        data["entities"] = [[e.name, e.kind] for e in item.entities]
    if item.links:
        data["links"] = [[ref.target.pk, ref.kind, ref.weight] for ref in item.links]
    if item.claimant is not None:
        data["claimant"] = list(item.claimant)
    return data


def leave_for_later(items: Sequence[Understood], *, agent: Agent) -> None:
    """Inside the write's transaction: a pending row for each saved memory, and a word to the
    enricher (delivered when the transaction commits)."""
    MemoryEnrichment.objects.bulk_create(
        [
            MemoryEnrichment(
                memory=item.memory,
                workspace_id=item.memory.workspace_id,
                agent=agent,
                given=given(item),
            )
            for item in items
        ],
        batch_size=500,
    )
    with connection.cursor() as cursor:
        cursor.execute(f"NOTIFY {CHANNEL}")


@dataclass
class Drained:
    enriched: int = 0
    failed: int = 0
    #: Seconds from each enriched memory's write to its enrichment.
    lags: list[float] = field(default_factory=list)


def enrich_pending(*, workspace_id: int | None = None, batch: int | None = None) -> Drained:
    """The pending rows that are due of one writer (the oldest's; of one workspace, or any),
    at most ``batch`` (``MM_ENRICH_BATCH``), enriched in one transaction. Rows another
    enricher holds are skipped."""
    size = batch or settings.MM_ENRICH_BATCH
    done = Drained()
    due = MemoryEnrichment.objects.filter(
        state=MemoryEnrichment.State.PENDING, next_at__lte=timezone.now()
    )
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
        try:
            with transaction.atomic():
                done.lags += _enrich(workspace, agent_id, group)
            done.enriched += len(group)
            return done
        except Exception:
            logger.exception("enrichment of %d memories failed; trying each", len(group))
        for row in group:  # one memory that fails keeps no other from its enrichment
            try:
                with transaction.atomic():
                    done.lags += _enrich(workspace, agent_id, [row])
                done.enriched += 1
            except Exception as error:
                logger.exception("enrichment of memory %d failed", row.memory_id)
                done.failed += _failed([row], error)
    return done


def enrich_workspace(workspace_id: int) -> int:
    """Every pending memory of the workspace enriched now, due or not (a consolidation run's
    first step); how many."""
    MemoryEnrichment.objects.filter(
        workspace_id=workspace_id, state=MemoryEnrichment.State.PENDING
    ).update(next_at=timezone.now())
    total = 0
    while True:
        done = enrich_pending(workspace_id=workspace_id)
        total += done.enriched
        if not done.enriched:
            return total


def retry_failed(*, workspace_id: int | None = None) -> int:
    """The failed enrichments (of one workspace, or all) made pending again, due now."""
    rows = MemoryEnrichment.objects.filter(state=MemoryEnrichment.State.FAILED)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return rows.update(
        state=MemoryEnrichment.State.PENDING, attempts=0, next_at=timezone.now(), last_error=""
    )


def _enrich(workspace_id: int, agent_id: int | None, rows: list[MemoryEnrichment]) -> list[float]:
    agent = (
        Agent.objects.select_related("workspace").filter(pk=agent_id).first() if agent_id else None
    )
    # The memories are locked before anything else is (in one order): a writer that holds one
    # of them (superseding it, say) is waited for here, never in the middle of the links, where
    # the link rows' checks of the memory and the degree rows the writer's update also takes
    # would make a deadlock.
    memories = {
        m.pk: m
        for m in Memory.objects.select_for_update(no_key=True, of=("self",))
        .filter(workspace_id=workspace_id, pk__in=[row.memory_id for row in rows])
        .order_by("pk")
    }
    targets = {
        m.pk: m
        for m in Memory.objects.filter(
            workspace_id=workspace_id,
            pk__in={link[0] for row in rows for link in row.given.get("links", [])},
        )
    }
    items = []
    for row in rows:
        memory = memories.get(row.memory_id)
        if memory is None:  # erased meanwhile (its row goes with it)
            continue
        items.append(
            Understood(
                memory,
                entities=[EntityRef(name, kind) for name, kind in row.given.get("entities", [])],
                # A memory linked to may have been erased since: its link goes with it.
                links=[
                    LinkRef(targets[pk], kind, weight)
                    for pk, kind, weight in row.given.get("links", [])
                    if pk in targets
                ],
                claimant=tuple(row.given["claimant"]) if "claimant" in row.given else None,
            )
        )
    for item, found in zip(
        items, recognise(workspace_id, [item.memory.text for item in items]), strict=True
    ):
        item.recognised = found
    claimed = attribute(items, agent=agent)
    if claimed:
        Memory.objects.filter(workspace_id=workspace_id, pk__in=[m.pk for m in claimed]).update(
            attributed_to_id=_case({m.pk: m.attributed_to_id for m in claimed})
        )
    relate(items, agent=agent)
    MemoryEnrichment.objects.filter(
        workspace_id=workspace_id, memory_id__in=[row.memory_id for row in rows]
    ).delete()
    now = timezone.now()
    return [(now - row.created_at).total_seconds() for row in rows]


def _case(values: dict[int, int]) -> Case:
    return Case(
        *[When(pk=pk, then=Value(value)) for pk, value in values.items()],
        output_field=IntegerField(),
    )


def _failed(rows: list[MemoryEnrichment], error: Exception) -> int:
    """Each row tried once more, later; past the last try, ``failed``. How many failed now."""
    gave_up = 0
    message = f"{type(error).__name__}: {error}"[:2000]
    for row in rows:
        row.attempts += 1
        row.last_error = message
        if row.attempts >= settings.MM_ENRICH_ATTEMPTS:
            row.state = MemoryEnrichment.State.FAILED
            gave_up += 1
        row.next_at = timezone.now() + timedelta(seconds=RETRY_SECONDS * 2 ** (row.attempts - 1))
    MemoryEnrichment.objects.bulk_update(rows, ["attempts", "last_error", "state", "next_at"])
    return gave_up


def follow(*, idle_seconds: float = 5.0, stop=lambda: False, report=None) -> None:
    """Enrich as memories come (``meaning-memory enrich --follow``): after each write's
    notice, and every ``idle_seconds`` in any case (a notice sent while no enricher listened,
    a retry that came due). A database that goes away is waited for, one line logged."""
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
        for lag in done.lags:
            ENRICH_LAG_SECONDS.observe(lag)
        ENRICHED.labels("enriched").inc(done.enriched)
        ENRICHED.labels("failed").inc(done.failed)
        if report is not None and (done.enriched or done.failed):
            report(done)
        if done.enriched or done.failed:
            continue  # more may be due already
        try:
            _drain(listener, idle_seconds)
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
