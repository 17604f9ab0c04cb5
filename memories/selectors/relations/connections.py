"""What search filters and checks read of the graph, in statements written by hand: the
memories joined to one, connection counts (``min_r``), hub entities, mentions per entity, and
whether memories are joined within two links."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count

from memories.models import Entity, Link, Memory
from memories.reading import reader

MEMORY = Memory._meta.db_table
LINK = Link._meta.db_table


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
    counts as the one it was merged into). ``workspace`` is best a constant: spread over
    machines by workspace, a statement goes whole to the one that holds it only if every table
    it reads names it."""
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
        counted = connections_sql("m.id", "%(scopes)s::bigint[]", str(int(workspace_id)))
        cursor.execute(
            f"SELECT m.id, {counted} "
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
            JOIN {Entity._meta.db_table} e
                ON e.workspace_id = l.workspace_id AND e.id = l.target_entity_id
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
