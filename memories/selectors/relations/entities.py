"""The entities a reader may know of (declared ones, and those a memory it sees mentions or
is attributed to): listed, found by id or name, and an entity's memories."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from memories.errors import MissingReference, NotFound
from memories.models import Entity, Link, Memory
from memories.relational.gazetteer import normalize
from memories.selectors.reader import Reader


def _attributed_by_visible(workspace_id: int, scope_ids: Sequence[int]) -> Q:
    """An entity (or one merged into it) made the claim of a memory the reader sees (by the
    partial index ``memory_attributed_to``)."""

    def attributed(**where: Any) -> Exists:
        return Exists(
            Memory.objects.filter(workspace_id=workspace_id, scope_id__in=scope_ids, **where)
        )

    return attributed(attributed_to=OuterRef("pk")) | attributed(
        attributed_to__merged_into=OuterRef("pk"), attributed_to__workspace_id=workspace_id
    )


def _mentioned_by_visible(workspace_id: int, scope_ids: Sequence[int] | None) -> Q:
    """An entity (or one merged into it) is mentioned by a memory the reader sees.

    Two probes, each by its own index, not one with an OR across the link and its entity
    (which neither index serves: at a million memories, finding one rare entity by name
    scanned the links for 20-60 ms)."""

    def mentioned(**where: Any) -> Exists:
        links = Link.objects.filter(workspace_id=workspace_id, removed_at__isnull=True, **where)
        if scope_ids is not None:  # the mention's copy of its memory's scope: no memory read
            links = links.filter(source_scope_id__in=scope_ids)
        return Exists(links)

    return mentioned(target_entity=OuterRef("pk")) | mentioned(
        target_entity__merged_into=OuterRef("pk"), target_entity__workspace_id=workspace_id
    )


def entities_known(workspace_id: int, scope_ids: Sequence[int] | None) -> QuerySet[Entity]:
    """The workspace's entities a reader of ``scope_ids`` (None: every scope) may know of:
    declared ones, and those a memory it sees mentions or is attributed to. The rule itself:
    ``visible_entities`` applies it for a reader, a write applies it for its writer's scopes."""
    queryset = Entity.objects.filter(workspace_id=workspace_id)
    if scope_ids is None:
        return queryset
    return queryset.filter(
        Q(declared=True)
        | _mentioned_by_visible(workspace_id, scope_ids)
        | _attributed_by_visible(workspace_id, scope_ids)
    )


def visible_entities(reader: Reader) -> QuerySet[Entity]:
    """The entities ``reader`` may know of (``entities_known``)."""
    return entities_known(reader.workspace_id, reader.scope_ids)


def entity_list(
    reader: Reader,
    *,
    query: str = "",
    kind: str = "",
    include_merged: bool = False,
) -> QuerySet[Entity]:
    """Entities by name (``query``: part of a name or alias), of one type, most mentioned
    first; merged ones left out unless asked."""
    workspace_id, scope_ids = reader.workspace_id, reader.scope_ids
    queryset = visible_entities(reader)
    if not include_merged:
        queryset = queryset.filter(merged_into__isnull=True)
    if kind:
        queryset = queryset.filter(kind=kind)
    if key := normalize(query):
        queryset = queryset.filter(Q(normalized__contains=key) | Q(keys__contains=[key]))
    # The links to the entity and to those merged into it, found by the entities' own indexes
    # first (an OR across the link and its entity, which no index serves, ran for minutes at a
    # million mentions).
    members = Entity.objects.filter(
        Q(pk=OuterRef(OuterRef("pk"))) | Q(merged_into=OuterRef(OuterRef("pk"))),
        workspace_id=workspace_id,
    ).values("pk")
    mentions = Link.objects.filter(
        workspace_id=workspace_id, target_entity__in=Subquery(members), removed_at__isnull=True
    )
    if scope_ids is not None:  # the mention's copy of its memory's scope: no memory read
        mentions = mentions.filter(source_scope_id__in=scope_ids)
    counted = (
        mentions.order_by()
        .annotate(group=Value(1))
        .values("group")
        .annotate(n=Count("source_id", distinct=True))
        .values("n")
    )
    return queryset.annotate(
        mentions=Coalesce(Subquery(counted[:1], output_field=IntegerField()), 0)
    ).order_by("-mentions", "name", "pk")


def entity_get(reader: Reader, entity_id: str) -> Entity:
    """One entity the reader may know of; anything else is the same NotFound."""
    entity = None
    if isinstance(entity_id, str) and len(entity_id) == 16:
        entity = visible_entities(reader).filter(entity_id=entity_id).first()
    if entity is None:
        raise NotFound(f"no entity {entity_id!r}")
    with_targets([entity])
    return entity


def entity_by_name(reader: Reader, name: str) -> list[Entity]:
    """The entities named ``name`` (by any name or alias), merged ones as their target."""
    key = normalize(name)
    if not key:
        return []
    found = visible_entities(reader).filter(keys__contains=[key])
    targets = {e.merged_into_id or e.pk for e in found}
    return list(Entity.objects.filter(workspace_id=reader.workspace_id, pk__in=targets))


def entities_named(name: str, reference: str, reader: Reader) -> list[Entity]:
    """The entities a filter (``name``) names by id, or by name or alias, merged ones as their
    target; ValidationFailed naming the filter when the reader knows of none."""
    found = with_targets(visible_entities(reader).filter(entity_id=reference))
    entities = [e.merged_into or e for e in found] or entity_by_name(reader, reference)
    if not entities:
        raise MissingReference.single(
            name, f"no entity {reference!r} (by id, name or alias) is known here."
        )
    return entities


def attach_references(memories: Sequence[Memory]) -> None:
    """Load what the memories point at, within their workspaces, a statement each: the
    entities that made their claims (each as the entity it was merged into, if merged) and the
    memories that superseded them (unless already loaded)."""
    workspaces = {m.workspace_id for m in memories}
    ids = {m.attributed_to_id for m in memories if m.attributed_to_id is not None}
    if ids:
        found = {
            e.pk: e.merged_into or e
            for e in with_targets(Entity.objects.filter(workspace_id__in=workspaces, pk__in=ids))
        }
        for memory in memories:
            if memory.attributed_to_id is not None:
                memory.attributed_to = found[memory.attributed_to_id]
    field = Memory._meta.get_field("superseded_by")
    waiting = [m for m in memories if m.superseded_by_id and not field.is_cached(m)]
    if waiting:
        newer = Memory.objects.filter(
            workspace_id__in=workspaces, pk__in={m.superseded_by_id for m in waiting}
        ).only("mem_id", "workspace_id")
        found_newer = newer.in_bulk()
        for memory in waiting:
            memory.superseded_by = found_newer[memory.superseded_by_id]


def with_targets(entities: Iterable[Entity]) -> list[Entity]:
    """The entities, each merged one with the entity it was merged into (``merged_into``),
    read in one more statement within their workspaces (not a join on the id alone)."""
    entities = list(entities)
    wanted = {e.merged_into_id for e in entities if e.merged_into_id is not None}
    if wanted:
        targets = Entity.objects.filter(
            workspace_id__in={e.workspace_id for e in entities}, pk__in=wanted
        ).in_bulk()
        for entity in entities:
            if entity.merged_into_id is not None:
                entity.merged_into = targets[entity.merged_into_id]
    return entities


def entity_members(entity: Entity) -> list[int]:
    """The entity and those merged into it: the primary keys links to it may name."""
    merged = Entity.objects.filter(workspace_id=entity.workspace_id, merged_into=entity)
    return [entity.pk, *merged.values_list("pk", flat=True)]


def entity_memories(reader: Reader, entity: Entity) -> QuerySet[Memory]:
    """The memories that mention the entity (or one merged into it), newest first."""
    mentions = Link.objects.filter(
        workspace_id=entity.workspace_id,
        source=OuterRef("pk"),
        target_entity_id__in=entity_members(entity),
        removed_at__isnull=True,
    )
    queryset = reader.sees(Memory.objects.filter(Exists(mentions)))
    return queryset.select_related("scope").order_by("-created_at", "-id")
