"""The search filters that read links: ``related_to`` (with ``link_types``), ``entity`` and
``min_r``, resolved for one reader before the ranking statement runs.

* ``related_to``: the memories directly linked to one memory, either way, by links of any type
  (the engine's ``supersedes`` and ``follows`` included), or of ``link_types`` only. Resolved to
  their ids first: a short list the ranking reads by primary key.
* ``entity``: the memories that mention an entity, given by its id or by a name or alias (an
  entity merged into another stands for it, and the other way round).
* ``min_r``: at least that many connections (``memories.selectors.relations.connections_sql``:
  distinct active memories the reader sees, linked either way, plus distinct entities),
  counted in the statement for each memory it considers.

A memory or an entity the reader may not see is refused exactly as one that does not exist.
Each hit says which of these let it through (``SearchHit.relations``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memories import rules
from memories.errors import ValidationFailed
from memories.models import Entity, Link, Memory
from memories.selectors.relations import (
    connection_counts,
    connections_sql,
    entity_by_name,
    entity_members,
    related_memory_links,
    visible_entities,
)

NAMES = ("related_to", "link_types", "entity", "min_r")


@dataclass(frozen=True)
class RelationalFilter:
    related_to: str | None = None
    related: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    entities: list[Entity] = field(default_factory=list)
    entity_ids: list[int] = field(default_factory=list)
    min_r: int | None = None

    @property
    def active(self) -> bool:
        return self.related_to is not None or bool(self.entities) or self.min_r is not None

    def sql(self) -> tuple[list[str], dict[str, object]]:
        """WHERE fragments on ``memories_memory`` (the scopes are the statement's
        ``%(scopes)s``) and their parameters."""
        clauses: list[str] = []
        params: dict[str, object] = {}
        if self.related_to is not None:
            clauses.append("id = ANY(%(related_ids)s::bigint[])")
            params["related_ids"] = sorted(self.related)
        if self.entities:
            clauses.append(
                f"EXISTS (SELECT 1 FROM {Link._meta.db_table} mention "
                f"WHERE mention.source_id = {Memory._meta.db_table}.id "
                "AND mention.target_entity_id = ANY(%(entity_ids)s::bigint[]) "
                "AND mention.removed_at IS NULL)"
            )
            params["entity_ids"] = self.entity_ids
        if self.min_r is not None and self.min_r > 0:
            count = connections_sql(f"{Memory._meta.db_table}.id", "%(scopes)s::bigint[]")
            clauses.append(f"{count} >= %(min_r)s")
            params["min_r"] = self.min_r
        return clauses, params

    def explain(self, memories: Sequence[Memory], scope_ids: Sequence[int]) -> list[dict]:
        """For each hit, what let it through: its links to ``related_to``, the entity it
        mentions, its connection count."""
        if not self.active:
            return [{} for _ in memories]
        counts = (
            connection_counts([m.pk for m in memories], scope_ids) if self.min_r is not None else {}
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
            if self.min_r is not None:
                found["connections"] = counts.get(memory.pk, 0)
                found["min_r"] = self.min_r
            explained.append(found)
        return explained


def relational_filter(
    values: dict[str, Any], *, workspace_id: int, scope_ids: Sequence[int] | None
) -> RelationalFilter:
    """Take this module's filters out of a search's validated ``values`` and resolve them for
    a reader of ``scope_ids`` (None: a team member, the whole workspace)."""
    related_to = values.pop("related_to", None)
    link_types = values.pop("link_types", None)
    entity = values.pop("entity", None)
    min_r = values.pop("min_r", None)
    related: dict[int, list[tuple[str, str]]] = {}
    if related_to:
        memory = Memory.objects.filter(workspace_id=workspace_id, mem_id=related_to)
        if scope_ids is not None:
            memory = memory.filter(scope_id__in=scope_ids)
        found = memory.values_list("pk", flat=True).first()
        if found is None:
            raise ValidationFailed.single(
                "related_to", f"no memory {related_to!r} is visible to this agent."
            )
        related = related_memory_links(found, scope_ids, link_types)
    entities: list[Entity] = []
    if entity:
        if rules.public_id(entity) is None:
            entities = list(
                visible_entities(workspace_id, scope_ids)
                .filter(entity_id=entity)
                .select_related("merged_into")
            )
            entities = [e.merged_into or e for e in entities]
        if not entities:
            entities = entity_by_name(workspace_id=workspace_id, name=entity, scope_ids=scope_ids)
        if not entities:
            raise ValidationFailed.single(
                "entity", f"no entity {entity!r} (by id, name or alias) is known here."
            )
    return RelationalFilter(
        related_to=related_to or None,
        related=related,
        entities=entities,
        entity_ids=sorted({pk for e in entities for pk in entity_members(e)}),
        min_r=min_r,
    )
