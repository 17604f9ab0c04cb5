"""When a reader first could know of each entity: its declaration (the gazetteer is the
workspace's), or the first mention or claim in a memory the reader sees. An agent is shown this
time as the entity's ``created_at``, never the time a memory it cannot read first named it (one
row stands for a name in a workspace, whoever wrote it first: see docs/SECURITY.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db.models import Min
from django.db.models.functions import Coalesce

from memories.models import Entity, Link, Memory


def first_seen(
    entities: Sequence[Entity], scope_ids: Sequence[int] | None
) -> dict[int, datetime | None]:
    """Each entity's time as the reader knows it (``scope_ids`` None: a team member, who
    sees the whole workspace and so the row's own time). An entity merged into another counts
    with it. Two statements, whatever the number of entities."""
    if scope_ids is None:
        return {entity.pk: entity.created_at for entity in entities}
    pks = [entity.pk for entity in entities]
    times: dict[int, datetime | None] = {
        entity.pk: (entity.declared_at or entity.created_at) if entity.declared else None
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
        .values("entity")
        .annotate(first=Min("created_at"))
        .values_list("entity", "first")
    )
    claimed = (
        Memory.objects.filter(attributed_to__in=pks, scope_id__in=scope_ids)
        .values("attributed_to")
        .annotate(first=Min("created_at"))
        .values_list("attributed_to", "first")
    )
    for pk, first in [*mentioned, *claimed]:
        if pk in times and first is not None:
            known = times[pk]
            times[pk] = first if known is None else min(known, first)
    return times
