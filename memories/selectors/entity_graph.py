"""The graph a team walks on the dashboard: an entity at the centre (a customer), the entities
named beside it most often (its people, related customers), and the memories that connect
them, from the memories the reader sees. Bounded: a customer with thousands of memories draws
as fast as one with ten."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from memories.models import Entity, Memory
from memories.selectors.hub import related_entities
from memories.selectors.reader import Reader
from memories.selectors.relations import entity_members, entity_memories

#: How many entities beside the centre, and memories connecting it to each, are drawn.
NEIGHBOURS = 12
MEMORIES_EACH = 3
#: How many of the centre's own memories are drawn when no other entity is named with it.
ALONE = 8


@dataclass
class Graph:
    centre: Entity
    nodes: list[dict] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"centre": _entity_id(self.centre), "nodes": self.nodes, "edges": self.edges}


def _entity_id(entity: Entity) -> str:
    return f"e:{entity.entity_id}"


def _memory_id(memory: Memory) -> str:
    return f"m:{memory.mem_id}"


def entity_graph(reader: Reader, entity: Entity) -> Graph:
    """The centre, its ``NEIGHBOURS`` entities named in most of the same memories, and for
    each the ``MEMORIES_EACH`` newest memories naming both (mention edges: memory → entity)."""
    memories = entity_memories(reader, entity)
    related = related_entities(memories, entity_members(entity), NEIGHBOURS)
    graph = Graph(entity)
    graph.nodes.append(_entity_node(entity, memories.count(), centre=True))
    drawn: dict[int, Memory] = {}
    mentions: dict[int, set[int]] = defaultdict(set)
    neighbours = {r.entity.pk: r.entity for r in related}
    for r in related:
        graph.nodes.append(_entity_node(r.entity, r.memories))
        both = memories.filter(
            links_out__target_entity_id=r.entity.pk, links_out__removed_at__isnull=True
        ).order_by("-created_at", "-id")[:MEMORIES_EACH]
        for memory in both:
            drawn[memory.pk] = memory
            mentions[memory.pk].add(r.entity.pk)
    if not related:
        for memory in memories.order_by("-created_at", "-id")[:ALONE]:
            drawn[memory.pk] = memory
    for memory in drawn.values():
        graph.nodes.append(_memory_node(memory))
        graph.edges.append({"source": _memory_id(memory), "target": _entity_id(entity)})
        for pk in sorted(mentions[memory.pk]):
            graph.edges.append({"source": _memory_id(memory), "target": _entity_id(neighbours[pk])})
    return graph


def _entity_node(entity: Entity, memories: int, *, centre: bool = False) -> dict:
    return {
        "id": _entity_id(entity),
        "type": "entity",
        "label": entity.name,
        "kind": entity.kind,
        "memories": memories,
        "centre": centre,
    }


def _memory_node(memory: Memory) -> dict:
    return {
        "id": _memory_id(memory),
        "type": "memory",
        "label": memory.text[:60] + ("…" if len(memory.text) > 60 else ""),
        "text": memory.text,
        "written": memory.created_at.date().isoformat(),
        "status": memory.status,
    }
