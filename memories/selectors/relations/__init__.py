"""What a memory connects to, as a reader may see it: its links (both ways, the engine's own
``supersedes`` and ``follows`` among them), its entities, an entity's memories, and the
connections search filters read.

A reader never learns of a memory it cannot see: a link whose other end is such a memory is
left out, and so is an entity that only such memories mention (unless the team declared it).
Each reads for a ``Reader`` (``memories.selectors.reader``); a write resolving names for its
writer applies the same rule to the writer's scopes (``entities_known``).

One module a job: ``links`` (a memory's links both ways and its entities), ``entities`` (the
entities a reader may know of, listed and found, and an entity's memories) and ``connections``
(what search filters and checks read of the graph). Every name is importable from here.
"""

from memories.selectors.relations.connections import (
    LINK,
    MEMORY,
    connection_counts,
    connections_sql,
    entity_counts,
    hub_entities,
    joined_within_two_links,
    related_memory_links,
)
from memories.selectors.relations.entities import (
    attach_references,
    entities_known,
    entities_named,
    entity_by_name,
    entity_get,
    entity_list,
    entity_members,
    entity_memories,
    visible_entities,
    with_targets,
)
from memories.selectors.relations.links import (
    OTHER_MEMORY_FIELDS,
    LinkView,
    link_made_by,
    memory_entities,
    memory_links,
)

__all__ = [
    "LINK",
    "LinkView",
    "MEMORY",
    "OTHER_MEMORY_FIELDS",
    "attach_references",
    "connection_counts",
    "connections_sql",
    "entities_known",
    "entities_named",
    "entity_by_name",
    "entity_counts",
    "entity_get",
    "entity_list",
    "entity_members",
    "entity_memories",
    "hub_entities",
    "joined_within_two_links",
    "link_made_by",
    "memory_entities",
    "memory_links",
    "related_memory_links",
    "visible_entities",
    "with_targets",
]
