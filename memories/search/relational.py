"""The search filters that read links: ``related_to`` (with ``link_types``), ``entity`` and
``min_r``, resolved for one reader before the ranking statement runs.

* ``related_to``: the memories directly linked to one memory, either way, by links of any type
  (the engine's ``supersedes`` and ``follows`` included), or of ``link_types`` only. Resolved to
  their ids first: a short list the ranking reads by primary key.
* ``entity``: the memories that mention an entity, given by its id or by a name or alias (an
  entity merged into another stands for it, and the other way round). Up to
  ``ENTITY_LIST_MAX`` of them, they are listed and every one is ranked. Beyond, reading every
  one's vector would cost about 5 µs each (tens of milliseconds for a popular entity, over a
  second at a million memories), so the vector candidates come from a shortlist: the
  ``SHORTLIST_FACTOR`` × candidates mentions nearest to the query by the sign bits of their
  vectors (Hamming distance, read from one index with the mention's scope: ``Link.source_code``),
  ranked again by their real vectors. The keyword candidates are found among all the entity's
  memories, as without the filter. The shortlist is approximate, as the vector index is for a
  search without the filter: BENCHMARKS.md measures how often its top ten differs from an
  exact ranking of every mentioning memory.
* ``min_r``: at least that many connections (``memories.selectors.relations.connections_sql``:
  distinct active memories the reader sees, linked either way, plus distinct entities). The
  candidates are read with the stored degree (``MemoryDegree``: every link row touching a
  memory, which is never less than the count), and the exact count is taken for the best
  ``EXACT_COUNT_ROWS`` × limit of them only: a memory whose degree passes but whose count does
  not is left out, and the next one takes its place. (When more than that many of the best
  fail, which takes many links to memories the reader cannot see, fewer than ``limit`` hits
  come back.)

A memory or an entity the reader may not see is refused exactly as one that does not exist.
Each hit says which of these let it through (``SearchHit.relations``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from memories.commands import Search
from memories.errors import MissingReference
from memories.models import Entity, Link, Memory, MemoryDegree
from memories.selectors.reader import Reader
from memories.selectors.relations import (
    connection_counts,
    connections_sql,
    entities_named,
    entity_members,
    related_memory_links,
)

NAMES = ("related_to", "link_types", "entity", "min_r", "attributed_to")
#: How many of the best candidates (times the limit) ``min_r``'s exact count is taken for.
EXACT_COUNT_ROWS = 3
#: Up to this many mentioning memories the reader sees, an entity's memories are listed first
#: and every one is ranked (read by primary key); beyond, its vector candidates come from the
#: shortlist by sign bits, and its keyword candidates are probed one by one.
ENTITY_LIST_MAX = 1_000
#: How many mentions (times the search's vector candidates) the sign bits shortlist.
SHORTLIST_FACTOR = 10


@dataclass(frozen=True)
class RelationalFilter:
    workspace_id: int = 0
    related_to: str | None = None
    related: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    entities: list[Entity] = field(default_factory=list)
    entity_ids: list[int] = field(default_factory=list)
    #: The memories that mention the entity, when they are few (``ENTITY_LIST_MAX``): the
    #: ranking reads them by primary key. None: many (see ``entity_shortlist``).
    entity_memory_ids: list[int] | None = None
    #: When they are many: the mentioning memories whose vectors are compared with the
    #: query's (the shortlist by sign bits). None otherwise.
    entity_shortlist: list[int] | None = None
    min_r: int | None = None
    #: ``attributed_to``: the entities whose claims to keep (with those merged into them).
    attributed: list[Entity] = field(default_factory=list)
    attributed_ids: list[int] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return (
            self.related_to is not None
            or bool(self.entities)
            or self.min_r is not None
            or bool(self.attributed)
        )

    def sql(self) -> tuple[list[str], dict[str, object]]:
        """WHERE fragments on ``memories_memory`` (the scopes are the statement's
        ``%(scopes)s``) and their parameters."""
        clauses: list[str] = []
        params: dict[str, object] = {}
        if self.related_to is not None:
            clauses.append("id = ANY(%(related_ids)s::bigint[])")
            params["related_ids"] = sorted(self.related)
        if self.entity_memory_ids is not None:
            clauses.append("id = ANY(%(entity_memory_ids)s::bigint[])")
            params["entity_memory_ids"] = self.entity_memory_ids
        elif self.entities:
            # A probe of each row (OFFSET 0 keeps the planner from turning it into a join that
            # reads every mention of a popular entity before the first row).
            clauses.append(
                f"EXISTS (SELECT 1 FROM {Link._meta.db_table} mention "
                f"WHERE mention.source_id = {Memory._meta.db_table}.id "
                f"AND mention.workspace_id = {int(self.workspace_id)} "
                "AND mention.target_entity_id = ANY(%(entity_ids)s::bigint[]) "
                "AND mention.removed_at IS NULL OFFSET 0)"
            )
            params["entity_ids"] = self.entity_ids
        if self.attributed:
            clauses.append("attributed_to_id = ANY(%(attributed_ids)s::bigint[])")
            params["attributed_ids"] = self.attributed_ids
        if self.min_r is not None and self.min_r > 0:
            # The stored degree first: at least the count, and one index probe a row.
            clauses.append(
                f"EXISTS (SELECT 1 FROM {MemoryDegree._meta.db_table} degree "
                f"WHERE degree.memory_id = {Memory._meta.db_table}.id "
                f"AND degree.workspace_id = {int(self.workspace_id)} "
                "AND degree.links >= %(min_r)s)"
            )
            params["min_r"] = self.min_r
        return clauses, params

    def nearest_sql(self) -> tuple[str, dict[str, object]]:
        """A WHERE fragment for the vector candidates only (the shortlist of a popular
        entity's memories), and its parameters; empty when there is none."""
        if self.entity_shortlist is None:
            return "", {}
        return "id = ANY(%(entity_shortlist)s::bigint[])", {
            "entity_shortlist": self.entity_shortlist
        }

    def shown_sql(self, memory: str) -> str:
        """The condition on each shown memory (``memory``: its id column) that only a count
        for the reader decides: ``min_r``'s exact count. Empty when there is none."""
        if self.min_r is None or self.min_r <= 0:
            return ""
        counted = connections_sql(memory, "%(scopes)s::bigint[]", str(int(self.workspace_id)))
        return f"{counted} >= %(min_r)s"

    def explain(self, memories: Sequence[Memory], scope_ids: Sequence[int]) -> list[dict]:
        """For each hit, what let it through: its links to ``related_to``, the entity it
        mentions, its connection count."""
        if not self.active:
            return [{} for _ in memories]
        counts = (
            connection_counts([m.pk for m in memories], scope_ids, workspace_id=self.workspace_id)
            if self.min_r is not None
            else {}
        )
        explained = []
        for memory in memories:
            found: dict[str, Any] = {}
            if self.related_to is not None:
                found["related_to"] = {
                    "mem_id": self.related_to,
                    "links": [
                        {"type": kind, "direction": direction}
                        for kind, direction in self.related.get(memory.pk, [])
                    ],
                }
            if self.entities:
                found["entity"] = [
                    {"entity_id": e.entity_id, "name": e.name, "type": e.kind}
                    for e in self.entities
                ]
            if self.attributed:
                found["attributed_to"] = [
                    {"entity_id": e.entity_id, "name": e.name, "type": e.kind}
                    for e in self.attributed
                ]
            if self.min_r is not None:
                found["connections"] = counts.get(memory.pk, 0)
                found["min_r"] = self.min_r
            explained.append(found)
        return explained


def relational_filter(
    search: Search,
    reader: Reader,
    *,
    vector: str | None = None,
    candidates: int = 0,
) -> RelationalFilter:
    """Resolve this module's filters of ``search`` (``NAMES``) for ``reader``. ``vector`` (the
    query's, as pgvector text) and ``candidates`` (how many vector candidates the search takes)
    size and order a popular entity's shortlist."""
    related_to, link_types = search.related_to, search.link_types
    entity, min_r, attributed_to = search.entity, search.min_r, search.attributed_to
    workspace_id, scope_ids = reader.workspace_id, reader.scope_list
    related: dict[int, list[tuple[str, str]]] = {}
    if related_to:
        memory = reader.sees(Memory.objects.filter(mem_id=related_to))
        found = memory.values_list("pk", flat=True).first()
        if found is None:
            raise MissingReference.single(
                "related_to", f"no memory {related_to!r} is visible to this agent."
            )
        related = related_memory_links(found, scope_ids, link_types, workspace_id=workspace_id)
    entities = entities_named("entity", entity, reader) if entity else []
    attributed = entities_named("attributed_to", attributed_to, reader) if attributed_to else []
    entity_ids = sorted({pk for e in entities for pk in entity_members(e)})
    entity_memory_ids = shortlist = None
    if entity_ids:
        mentions = Link.objects.filter(
            workspace_id=workspace_id, target_entity_id__in=entity_ids, removed_at__isnull=True
        ).order_by()  # distinct memories, not (memory, the link's ordering columns)
        if scope_ids is not None:
            mentions = mentions.filter(source_scope_id__in=scope_ids)
        found = list(mentions.values_list("source_id", flat=True).distinct()[: ENTITY_LIST_MAX + 1])
        if len(found) <= ENTITY_LIST_MAX:
            entity_memory_ids = sorted(found)
        elif vector is not None:
            shortlist = entity_shortlist(mentions, vector, SHORTLIST_FACTOR * max(candidates, 1))
    return RelationalFilter(
        workspace_id=workspace_id,
        related_to=related_to or None,
        related=related,
        entities=entities,
        entity_ids=entity_ids,
        entity_memory_ids=entity_memory_ids,
        entity_shortlist=shortlist,
        min_r=min_r,
        attributed=attributed,
        attributed_ids=sorted({pk for e in attributed for pk in entity_members(e)}),
    )


def entity_shortlist(mentions: QuerySet[Link], vector: str, size: int) -> list[int]:
    """The ``size`` memories of ``mentions`` nearest to the query by the Hamming distance
    between the sign bits of their vectors and of the query's (one index, ``link_entity_code``,
    holds the entity, the scope, the memory and its bits: no memory row is read)."""
    nearest = mentions.alias(
        distance=RawSQL("source_code <~> binary_quantize(%s::vector)", [vector])
    ).order_by("distance")
    return sorted(set(nearest.values_list("source_id", flat=True)[:size]))
