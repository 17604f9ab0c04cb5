"""What a memory connects to (the R of STARE): entities and typed links, made on every write.

Three sources name the entities a memory mentions, each recorded on the link it makes (its
``origin`` and ``evidence``):

* the writer: ``entities: [{"name": ..., "type": ...}]``, resolved within that type;
* the workspace's gazetteer (its ``declared`` entities): their names and aliases found in the
  text, exactly or alike (``MM_ENTITY_MATCH_SCORE``; ``memories.relational.gazetteer``);
* named-entity recognition (``memories.relational.extraction``, ``MM_ENTITY_EXTRACTION``).
  Where a name it
  found overlaps a gazetteer find, the gazetteer wins.

Resolution (``EntityResolver``): a name is an existing entity of the workspace when its
normalised form is one of that entity's names or aliases, else when it is alike one
(rapidfuzz's ratio ≥ ``MM_ENTITY_MATCH_SCORE``) among the entities of the same type; else a new
entity. A name the model found takes an exact match of any type (a declared one first), since
the model's type is a guess. A merged entity stands for the one it was merged into. Namesakes
of different types ("Jordan" the person and the country) are different entities when a writer,
the team or a curator says so, and each mention goes to the one its context fits
(``namesakes``).

Writers link memories too: ``links: [{"to": mem_id, "type": "supports"}]``. ``supersedes`` and
``follows`` are not link rows: they are the memories' own ``superseded_by`` and ``follows``, read
as links (``memories.selectors.relations``). Every link stays in its workspace; a removed link
keeps its row, with the reason in its memory's history.

One module a job: ``given`` (the writer's entities and links, checked), ``recognition`` (what
a text names), ``resolution`` (names to entities: ``EntityResolver``), ``namesakes`` (which of
one name's entities a mention means), ``storing`` (a write's entities and links stored),
``links`` (links by hand), ``declaring`` (the gazetteer's entities declared, and its lock) and
``backfill`` (the memories written before extraction). Every name is importable from here.
"""

from memories.services.relations.backfill import BackfillProgress, link_backfill
from memories.services.relations.declaring import (
    ENTITY_LOCK_NAMESPACE,
    DeclareResult,
    check_declared,
    entities_declare,
    entity_declare,
    lock_entities,
)
from memories.services.relations.given import EntityRef, LinkRef, resolve_links
from memories.services.relations.links import LinkResult, link_add, link_remove
from memories.services.relations.recognition import Recognised, recognise, workspace_gazetteer
from memories.services.relations.resolution import (
    FUZZY_CANDIDATES_MAX,
    EntityResolver,
    Resolved,
    attributed_entities,
)
from memories.services.relations.storing import (
    RELATIONS_VERSION,
    WrittenRelations,
    names_of,
    store_relations,
)

#: How mature what this package implements is, read by the readiness registry.
READINESS = {"R/links": "beta"}

__all__ = [
    "resolve_links",
    "BackfillProgress",
    "DeclareResult",
    "ENTITY_LOCK_NAMESPACE",
    "EntityRef",
    "EntityResolver",
    "FUZZY_CANDIDATES_MAX",
    "LinkRef",
    "LinkResult",
    "READINESS",
    "RELATIONS_VERSION",
    "Recognised",
    "Resolved",
    "WrittenRelations",
    "attributed_entities",
    "check_declared",
    "entities_declare",
    "entity_declare",
    "link_add",
    "link_backfill",
    "link_remove",
    "lock_entities",
    "names_of",
    "recognise",
    "store_relations",
    "workspace_gazetteer",
]
