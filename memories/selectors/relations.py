"""What a memory connects to, as a reader may see it: its links (both ways, the engine's own
``supersedes`` and ``follows`` among them), its entities, an entity's memories, and the
connections search filters read.

A reader never learns of a memory it cannot see: a link whose other end is such a memory is
left out, and so is an entity that only such memories mention (unless the team declared it).
``scope_ids`` is what the reader sees (``visible_scope_ids``); None is a team member's view of
the whole workspace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from memories.errors import MissingReference, NotFound
from memories.gazetteer import normalize
from memories.models import Entity, Link, Memory
from memories.reading import reader

MEMORY = Memory._meta.db_table
LINK = Link._meta.db_table


@dataclass(frozen=True)
class LinkView:
    """One link of a memory as its reader sees it."""

    link_id: str | None  # None for the engine's own (supersedes, follows)
    kind: str
    direction: str  # "out": this memory → other; "in": other → this memory
    other_memory: Memory | None
    other_entity: Entity | None
    weight: float
    origin: str  # writer, extraction, gazetteer, consolidation, member, engine
    made_by: str  # agent:<name>, user:<name>, the model, or "engine"
    evidence: dict[str, Any]
    created_at: datetime | None


def _visible(queryset: QuerySet, scope_ids: Sequence[int] | None, prefix: str) -> QuerySet:
    return (
        queryset if scope_ids is None else queryset.filter(**{f"{prefix}scope_id__in": scope_ids})
    )


def link_made_by(link: Link) -> str:
    """Who or what made a link: ``agent:<name>``, ``user:<name>``, the model, or its origin."""
    if link.agent_id:
        return f"agent:{link.agent.name}"
    if link.user_id:
        return f"user:{link.user.get_username()}"
    if link.origin == Link.Origin.EXTRACTION:
        return str(link.evidence.get("model", "extraction"))
    return link.origin


#: What a link's other memory shows (not its vectors or the rest of its row).
OTHER_MEMORY_FIELDS = ("mem_id", "text", "scope_id")


def memory_links(memory: Memory, scope_ids: Sequence[int] | None) -> list[LinkView]:
    """The memory's active links, out then in, then the engine's own: what it supersedes and
    what superseded it, what it follows in its session and what follows it. Two queries."""
    outgoing = Q(source=memory)
    incoming = Q(target_memory=memory)
    if scope_ids is not None:
        outgoing &= Q(target_memory__isnull=True) | Q(target_memory__scope_id__in=scope_ids)
        incoming &= Q(source__scope_id__in=scope_ids)
    links = list(
        Link.objects.filter(outgoing | incoming, removed_at__isnull=True)
        .select_related("agent", "user", "target_memory", "target_entity", "source")
        .only(
            *(f.name for f in Link._meta.concrete_fields),
            *(f"target_memory__{name}" for name in OTHER_MEMORY_FIELDS),
            *(f"source__{name}" for name in OTHER_MEMORY_FIELDS),
            "agent__name",
            f"user__{get_user_model().USERNAME_FIELD}",  # what link_made_by shows
            "target_entity__entity_id",
            "target_entity__name",
            "target_entity__kind",
        )
        .order_by("created_at", "id")
    )

    def view(link: Link, direction: str) -> LinkView:
        other = link.target_memory if direction == "out" else link.source
        entity = link.target_entity if direction == "out" else None
        return LinkView(
            link.link_id,
            link.kind,
            direction,
            other,
            entity,
            link.weight,
            link.origin,
            link_made_by(link),
            link.evidence,
            link.created_at,
        )

    # A link from the memory to itself is both one of its own and one to it.
    views = [view(link, "out") for link in links if link.source_id == memory.pk]
    views += [view(link, "in") for link in links if link.target_memory_id == memory.pk]
    engine = Q(superseded_by=memory) | Q(follows=memory)
    engine |= Q(pk__in=[pk for pk in (memory.superseded_by_id, memory.follows_id) if pk])
    others = list(
        _visible(Memory.objects.filter(engine), scope_ids, "")
        .only(*OTHER_MEMORY_FIELDS, "superseded_by_id", "follows_id")
        .order_by("pk")
    )
    for kind, direction, same in (
        ("supersedes", "out", lambda other: other.superseded_by_id == memory.pk),
        ("supersedes", "in", lambda other: other.pk == memory.superseded_by_id),
        ("follows", "out", lambda other: other.pk == memory.follows_id),
        ("follows", "in", lambda other: other.follows_id == memory.pk),
    ):
        views += [
            LinkView(None, kind, direction, other, None, 1.0, "engine", "engine", {}, None)
            for other in others
            if same(other)
        ]
    return views


def memory_entities(memory: Memory) -> list[Entity]:
    """The entities the memory mentions (merged ones as the entity they were merged into)."""
    ids = Link.objects.filter(
        workspace_id=memory.workspace_id,
        source=memory,
        target_entity__isnull=False,
        target_entity__workspace_id=memory.workspace_id,
        removed_at__isnull=True,
    ).values_list("target_entity__merged_into_id", "target_entity_id")
    wanted = {merged or pk for merged, pk in ids}
    return list(
        Entity.objects.filter(workspace_id=memory.workspace_id, pk__in=wanted).order_by(
            "kind", "name"
        )
    )


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


def visible_entities(workspace_id: int, scope_ids: Sequence[int] | None) -> QuerySet[Entity]:
    """The workspace's entities a reader may know of: declared ones, and those a memory it
    sees mentions."""
    queryset = Entity.objects.filter(workspace_id=workspace_id)
    if scope_ids is None:
        return queryset
    return queryset.filter(
        Q(declared=True)
        | _mentioned_by_visible(workspace_id, scope_ids)
        | _attributed_by_visible(workspace_id, scope_ids)
    )


def entity_list(
    *,
    workspace_id: int,
    scope_ids: Sequence[int] | None,
    query: str = "",
    kind: str = "",
    include_merged: bool = False,
) -> QuerySet[Entity]:
    """Entities by name (``query``: part of a name or alias), of one type, most mentioned
    first; merged ones left out unless asked."""
    queryset = visible_entities(workspace_id, scope_ids)
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


def entity_get(*, workspace_id: int, entity_id: str, scope_ids: Sequence[int] | None) -> Entity:
    """One entity the reader may know of; anything else is the same NotFound."""
    entity = None
    if isinstance(entity_id, str) and len(entity_id) == 16:
        entity = visible_entities(workspace_id, scope_ids).filter(entity_id=entity_id).first()
    if entity is None:
        raise NotFound(f"no entity {entity_id!r}")
    with_targets([entity])
    return entity


def entity_by_name(
    *, workspace_id: int, name: str, scope_ids: Sequence[int] | None
) -> list[Entity]:
    """The entities named ``name`` (by any name or alias), merged ones as their target."""
    key = normalize(name)
    if not key:
        return []
    found = visible_entities(workspace_id, scope_ids).filter(keys__contains=[key])
    targets = {e.merged_into_id or e.pk for e in found}
    return list(Entity.objects.filter(workspace_id=workspace_id, pk__in=targets))


def entities_named(
    name: str, reference: str, workspace_id: int, scope_ids: Sequence[int] | None
) -> list[Entity]:
    """The entities a filter (``name``) names by id, or by name or alias, merged ones as their
    target; ValidationFailed naming the filter when the reader knows of none."""
    found = with_targets(visible_entities(workspace_id, scope_ids).filter(entity_id=reference))
    entities = [e.merged_into or e for e in found] or entity_by_name(
        workspace_id=workspace_id, name=reference, scope_ids=scope_ids
    )
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


def entity_memories(entity: Entity, scope_ids: Sequence[int] | None) -> QuerySet[Memory]:
    """The memories that mention the entity (or one merged into it), newest first."""
    mentions = Link.objects.filter(
        workspace_id=entity.workspace_id,
        source=OuterRef("pk"),
        target_entity_id__in=entity_members(entity),
        removed_at__isnull=True,
    )
    queryset = Memory.objects.filter(workspace_id=entity.workspace_id).filter(Exists(mentions))
    return _visible(queryset, scope_ids, "").select_related("scope").order_by("-created_at", "-id")


# --- What search filters read -------------------------------------------------------------------


def related_memory_links(
    memory_pk: int,
    scope_ids: Sequence[int] | None,
    kinds: Sequence[str] | None,
    *,
    workspace_id: int,
) -> dict[int, list[tuple[str, str]]]:
    """The memories directly connected to one memory, either way, that the reader sees (any
    status), each with its links as (type, direction seen from the given memory)."""
    kinds = list(kinds or [])
    sql = f"""
        SELECT other, kind, direction FROM (
            SELECT target_memory_id AS other, kind, 'out' AS direction FROM {LINK}
            WHERE source_id = %(pk)s AND workspace_id = %(ws)s AND target_memory_id IS NOT NULL
                AND removed_at IS NULL
            UNION ALL
            SELECT source_id, kind, 'in' FROM {LINK}
            WHERE target_memory_id = %(pk)s AND workspace_id = %(ws)s AND removed_at IS NULL
            UNION ALL
            SELECT id, 'supersedes', 'out' FROM {MEMORY}
            WHERE superseded_by_id = %(pk)s AND workspace_id = %(ws)s
            UNION ALL
            SELECT superseded_by_id, 'supersedes', 'in' FROM {MEMORY}
            WHERE id = %(pk)s AND workspace_id = %(ws)s AND superseded_by_id IS NOT NULL
            UNION ALL
            SELECT follows_id, 'follows', 'out' FROM {MEMORY}
            WHERE id = %(pk)s AND workspace_id = %(ws)s AND follows_id IS NOT NULL
            UNION ALL
            SELECT id, 'follows', 'in' FROM {MEMORY}
            WHERE follows_id = %(pk)s AND workspace_id = %(ws)s
        ) AS edges
        JOIN {MEMORY} m ON m.id = edges.other AND m.workspace_id = %(ws)s
        WHERE (cardinality(%(kinds)s::text[]) = 0 OR kind = ANY(%(kinds)s::text[]))
          AND (%(all)s OR m.scope_id = ANY(%(scopes)s::bigint[]))
    """
    with reader.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "pk": memory_pk,
                "ws": workspace_id,
                "kinds": kinds,
                "all": scope_ids is None,
                "scopes": list(scope_ids or []),
            },
        )
        found: dict[int, list[tuple[str, str]]] = {}
        for other, kind, direction in cursor.fetchall():
            found.setdefault(other, []).append((kind, direction))
    return found


def connections_sql(memory: str, scopes: str, workspace: str) -> str:
    """SQL for how many connections memory ``memory`` (a column) of workspace ``workspace``
    (its column) has that a reader of the scopes ``scopes`` (a bigint[] expression) sees:
    distinct memories it links to or is linked from (links of any type, the engine's supersedes
    and follows included) that are active, plus distinct entities it mentions (a merged entity
    counts as the one it was merged into)."""
    same = f"workspace_id = {workspace}"
    return f"""(
        (SELECT count(DISTINCT other.id) FROM (
            SELECT target_memory_id AS id FROM {LINK}
            WHERE source_id = {memory} AND {same} AND target_memory_id IS NOT NULL
                AND removed_at IS NULL
            UNION ALL
            SELECT source_id FROM {LINK}
            WHERE target_memory_id = {memory} AND {same} AND removed_at IS NULL
            UNION ALL
            SELECT id FROM {MEMORY} WHERE superseded_by_id = {memory} AND {same}
            UNION ALL
            SELECT superseded_by_id FROM {MEMORY} WHERE id = {memory} AND {same}
            UNION ALL
            SELECT follows_id FROM {MEMORY} WHERE id = {memory} AND {same}
            UNION ALL
            SELECT id FROM {MEMORY} WHERE follows_id = {memory} AND {same}
        ) AS ends JOIN {MEMORY} other ON other.id = ends.id AND other.{same}
        WHERE other.status = 'active' AND other.scope_id = ANY({scopes}))
        + (SELECT count(DISTINCT COALESCE(e.merged_into_id, e.id)) FROM {LINK} l
           JOIN {Entity._meta.db_table} e ON e.id = l.target_entity_id AND e.{same}
           WHERE l.source_id = {memory} AND l.{same} AND l.removed_at IS NULL)
    )"""


def connection_counts(
    memory_pks: Sequence[int], scope_ids: Sequence[int], *, workspace_id: int
) -> dict[int, int]:
    """``connections_sql`` for some memories of a workspace, by primary key."""
    if not memory_pks:
        return {}
    with reader.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id, {connections_sql('m.id', '%(scopes)s::bigint[]', 'm.workspace_id')} "
            f"FROM {MEMORY} m WHERE m.id = ANY(%(ids)s::bigint[]) AND m.workspace_id = %(ws)s",
            {"ids": list(memory_pks), "scopes": list(scope_ids), "ws": workspace_id},
        )
        return dict(cursor.fetchall())


def hub_entities(workspace_id: int, share: float) -> list[int]:
    """The entities that at least ``share`` of the workspace's memories mention (a speaker's
    name in every turn of a conversation): they join nearly everything, so they say little."""
    with reader.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT COALESCE(e.merged_into_id, e.id) FROM {LINK} l
            JOIN {Entity._meta.db_table} e
                ON e.id = l.target_entity_id AND e.workspace_id = l.workspace_id
            WHERE l.workspace_id = %(ws)s AND l.removed_at IS NULL
            GROUP BY 1
            HAVING count(DISTINCT l.source_id) >= %(share)s * (
                SELECT count(*) FROM {MEMORY} WHERE workspace_id = %(ws)s
            )
            """,
            {"ws": workspace_id, "share": share},
        )
        return [row[0] for row in cursor.fetchall()]


def entity_counts(entities: Sequence[Entity]) -> dict[int, int]:
    """How many memories mention each entity (any reader): for the admin and the overview."""
    rows = (
        Link.objects.filter(target_entity__in=entities, removed_at__isnull=True)
        .values("target_entity_id")
        .annotate(n=Count("source_id", distinct=True))
    )
    return {row["target_entity_id"]: row["n"] for row in rows}


def joined_within_two_links(
    memory_pks: Sequence[int], *, follows: bool = True, without: Sequence[int] = ()
) -> bool:
    """Whether every two of the memories are joined by at most two links: linked directly
    (any type; ``follows`` counted unless told), through one other memory, or by mentioning
    the same entity (memory → entity ← memory; the entities ``without`` do not count)."""
    pks = list(dict.fromkeys(memory_pks))
    if len(pks) < 2:
        return True
    neighbours: dict[int, set[int]] = {pk: set() for pk in pks}
    entities: dict[int, set[int]] = {pk: set() for pk in pks}
    with reader.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT source_id, target_memory_id, kind FROM {LINK}
            WHERE removed_at IS NULL AND target_memory_id IS NOT NULL
              AND (source_id = ANY(%(pks)s) OR target_memory_id = ANY(%(pks)s))
            UNION ALL
            SELECT superseded_by_id, id, 'supersedes' FROM {MEMORY}
            WHERE superseded_by_id IS NOT NULL
              AND (id = ANY(%(pks)s) OR superseded_by_id = ANY(%(pks)s))
            UNION ALL
            SELECT id, follows_id, 'follows' FROM {MEMORY}
            WHERE follows_id IS NOT NULL AND (id = ANY(%(pks)s) OR follows_id = ANY(%(pks)s))
            """,
            {"pks": pks},
        )
        for a, b, kind in cursor.fetchall():
            if kind == "follows" and not follows:
                continue
            if a in neighbours:
                neighbours[a].add(b)
            if b in neighbours:
                neighbours[b].add(a)
        cursor.execute(
            f"""
            SELECT l.source_id, COALESCE(e.merged_into_id, e.id) FROM {LINK} l
            JOIN {Entity._meta.db_table} e ON e.id = l.target_entity_id
            WHERE l.removed_at IS NULL AND l.source_id = ANY(%(pks)s)
            """,
            {"pks": pks},
        )
        skipped = set(without)
        for pk, entity in cursor.fetchall():
            if entity not in skipped:
                entities[pk].add(entity)
    for i, a in enumerate(pks):
        for b in pks[i + 1 :]:
            if not (
                b in neighbours[a] or neighbours[a] & neighbours[b] or entities[a] & entities[b]
            ):
                return False
    return True
