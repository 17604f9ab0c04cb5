"""Enrichment: what the engine understands of a new memory (the names it mentions and their
entities, the writer's entities and links, the claimant it is attributed to, its A score),
stored either in the write's own transaction or, with ``MM_ENRICH_LATER``, a moment after the
write is acknowledged.

A write is acknowledged once it is durable and searchable (the row, its vectors, its words, its
idempotency key and provenance, a supersession the writer asked for); with ``MM_ENRICH_LATER``
the same transaction inserts a ``MemoryEnrichment`` row with what the writer gave that only the
enrichment stores (``given``). The enricher (``memories.services.enricher``) later hands a
writer's pending rows to ``enrich_rows``, which recognises their texts, resolves the claimants,
stores the relations and the A scores (``attribute`` and ``relate``: the very code a write
without ``MM_ENRICH_LATER`` runs) and deletes the rows, in one transaction. A process killed
anywhere leaves either the row (enriched by the next enricher) or the whole enrichment: never
half of it, never twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Case, IntegerField, Value, When

from memories.commands import EntityRef
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

#: The channel a write's transaction notifies when it leaves a memory to enrich.
CHANNEL = "mm_enrich"


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
class Enriched:
    """What ``enrich_rows`` did with its rows."""

    #: Seconds from each enriched memory's write to its enrichment (the database's clock).
    lags: list[float] = field(default_factory=list)
    #: The rows left pending because another transaction held their memory, or a memory they
    #: link to, at that moment (an erasure or a supersession): tried again a moment later.
    held: list[MemoryEnrichment] = field(default_factory=list)


def enrich_rows(workspace_id: int, agent_id: int | None, rows: list[MemoryEnrichment]) -> Enriched:
    """The pending ``rows`` (one writer's, locked by the caller) enriched in the caller's
    transaction and deleted; those whose memory or link target another transaction holds are
    left alone (``Enriched.held``).

    Nothing here waits for a memory's lock: the names are recognised before any is taken, the
    memories are locked with ``SKIP LOCKED`` (a writer superseding or erasing one may hold it
    while it waits for this transaction's rows) and so are the keys of the memories they link
    to. A memory a transaction holds is enriched on a later try, never in a deadlock."""
    agent = (
        Agent.objects.select_related("workspace").filter(pk=agent_id).first() if agent_id else None
    )
    ids = [row.memory_id for row in rows]
    texts = dict(
        Memory.objects.filter(workspace_id=workspace_id, pk__in=ids).values_list("pk", "text")
    )
    found = dict(zip(texts, recognise(workspace_id, list(texts.values())), strict=True))
    memories = {
        m.pk: m
        for m in Memory.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
        .filter(workspace_id=workspace_id, pk__in=ids)
        .order_by("pk")
    }
    wanted = {link[0] for row in rows for link in row.given.get("links", [])}
    targets = {
        m.pk: m
        for m in Memory.objects.filter(workspace_id=workspace_id, pk__in=wanted - memories.keys())
    }
    held_targets = targets.keys() - _key_shared(workspace_id, targets.keys())
    targets.update((pk, m) for pk, m in memories.items() if pk in wanted)
    done = Enriched()
    items, enriched = [], []
    for row in rows:
        memory = memories.get(row.memory_id)
        links = row.given.get("links", [])
        if row.memory_id in texts and (
            memory is None or any(link[0] in held_targets for link in links)
        ):
            done.held.append(row)
            continue
        enriched.append(row)
        if memory is None:  # erased meanwhile (its row goes with it)
            continue
        items.append(
            Understood(
                memory,
                entities=[EntityRef(name, kind) for name, kind in row.given.get("entities", [])],
                # A memory linked to may have been erased since: its link goes with it.
                links=[LinkRef(targets[pk], kind, w) for pk, kind, w in links if pk in targets],
                claimant=tuple(row.given["claimant"]) if "claimant" in row.given else None,
                recognised=found[memory.pk],
            )
        )
    claimed = attribute(items, agent=agent)
    if claimed:
        Memory.objects.filter(workspace_id=workspace_id, pk__in=[m.pk for m in claimed]).update(
            attributed_to_id=_case({m.pk: m.attributed_to_id for m in claimed})
        )
    relate(items, agent=agent)
    if enriched:
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {MemoryEnrichment._meta.db_table} "
                "WHERE workspace_id = %s AND memory_id = ANY(%s) "
                "RETURNING EXTRACT(EPOCH FROM clock_timestamp() - created_at)",
                [workspace_id, [row.memory_id for row in enriched]],
            )
            done.lags = [float(lag) for (lag,) in cursor.fetchall()]
    return done


def _key_shared(workspace_id: int, pks) -> set[int]:
    """Of the memories ``pks``, those whose key this transaction could share (``FOR KEY
    SHARE``, what a link's foreign key check takes): not those a transaction erases."""
    if not pks:
        return set()
    pk = Memory._meta.pk.column
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {pk} FROM {Memory._meta.db_table} WHERE workspace_id = %s AND {pk} = ANY(%s) "
            "FOR KEY SHARE SKIP LOCKED",
            [workspace_id, list(pks)],
        )
        return {pk for (pk,) in cursor.fetchall()}


def _case(values: dict[int, int]) -> Case:
    return Case(
        *[When(pk=pk, then=Value(value)) for pk, value in values.items()],
        output_field=IntegerField(),
    )
