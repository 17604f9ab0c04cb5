"""How a reader first could know of each entity, and when: its declaration (the gazetteer is the
workspace's), or the first mention or claim in a memory the reader sees. An agent is shown this
time as the entity's ``created_at`` and this way as its ``origin``, never the time or the way a
memory it cannot read first named it (one row stands for a name and type in a workspace,
whoever wrote it first: see docs/SECURITY.md). A name only another agent wrote privately is
shown as new: when and how this reader met it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db.models import F
from django.db.models.functions import Coalesce

from memories.models import Entity, Link, Memory
from memories.selectors.reader import Reader


class Known(NamedTuple):
    #: When the reader could first know of it (None: nothing it sees names it yet).
    at: datetime | None
    #: How (``Entity.Origin``): declared, given by a writer, found by the recogniser.
    origin: str


#: A mention's origin as the entity's (a link made by consolidation or divergence detection
#: names an entity a recogniser found).
_LINK_ORIGIN = {
    Link.Origin.WRITER: Entity.Origin.WRITER,
    Link.Origin.MEMBER: Entity.Origin.MEMBER,
    Link.Origin.GAZETTEER: Entity.Origin.GAZETTEER,
}


def as_known(reader: Reader, entities: Sequence[Entity]) -> dict[int, Known]:
    """Each entity as ``reader`` knows it (a team member or the engine sees the whole
    workspace and so the row's own time and origin). An entity merged into another counts with
    it. Two statements, whatever the number of entities."""
    scope_ids = reader.scope_ids
    if scope_ids is None:
        return {entity.pk: Known(entity.created_at, entity.origin) for entity in entities}
    pks = [entity.pk for entity in entities]
    known: dict[int, Known] = {
        entity.pk: (
            Known(entity.declared_at or entity.created_at, _declared(entity))
            if entity.declared
            else Known(None, entity.origin)
        )
        for entity in entities
    }
    mentioned = (
        Link.objects.filter(
            target_entity__in=Entity.objects.filter(pk__in=pks)
            | Entity.objects.filter(merged_into__in=pks),
            removed_at__isnull=True,
            source_scope_id__in=scope_ids,
        )
        .annotate(entity=Coalesce("target_entity__merged_into_id", "target_entity_id"))
        .order_by("entity", "created_at", "pk")
        .distinct("entity")
        .values_list("entity", "created_at", "origin")
    )
    claimed = (
        Memory.objects.filter(attributed_to__in=pks, scope_id__in=scope_ids)
        .order_by("attributed_to", "created_at", "pk")
        .distinct("attributed_to")
        .values_list("attributed_to", "created_at", F("attribution__attributed_to__origin"))
    )
    firsts = [(pk, at, _LINK_ORIGIN.get(o, Entity.Origin.EXTRACTION)) for pk, at, o in mentioned]
    firsts += [
        (pk, at, Entity.Origin.WRITER if o == "writer" else Entity.Origin.EXTRACTION)
        for pk, at, o in claimed
    ]
    for pk, at, origin in firsts:
        if pk in known and at is not None and (known[pk].at is None or at < known[pk].at):
            known[pk] = Known(at, origin)
    return known


def _declared(entity: Entity) -> str:
    """How a declared entity is known to one who saw it first in the gazetteer: declared (by
    a team member on the dashboard, or through the API or an import), whatever made its row."""
    if entity.origin in (Entity.Origin.MEMBER, Entity.Origin.GAZETTEER):
        return entity.origin
    return Entity.Origin.GAZETTEER
