"""Traversal: following links from a memory or an entity, breadth first, and the shortest path
between two nodes, as one reader may see them.

One recursive statement walks the graph: from each node reached, every active link out of it
or into it (the ``links`` table, read by its index on either end), a mention from an entity to
the memories that mention it (an entity merged into another is that other), and the engine's
own links (``follows``, a memory to the one before it in its session; ``supersedes``, the newer
to the older), kept in the memory rows. Each path carries the nodes it went through, so no
path visits a node twice; a walk stops at ``depth`` links and after
``MM_TRAVERSAL_MAX_ROWS`` paths, nearest first (PostgreSQL's recursion is breadth first), and
its statement after ``MM_TRAVERSAL_TIMEOUT_MS``.

A memory is reached only if the reader may see it (its workspace, one of its scopes, not
forgotten), checked at every step: a memory the reader cannot see is neither shown nor
passed through. Links never cross a workspace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, transaction

from memories.errors import NotFound, ValidationFailed
from memories.features import require_traversal
from memories.models import Entity, Link, Memory
from memories.reading import reader as database
from memories.selectors.reader import Reader
from memories.selectors.relations import link_made_by, visible_entities

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"R/traversal": "beta"}
MEMORY, ENTITY = "m", "e"
#: Path rows read from the walk's cursor at a time.
FETCH_ROWS = 200

#: One step of a walk from the node ``w`` (kind, id): the nodes next to it, by which link
#: (NULL for the engine's own), of which type, which way. ``%(out)s`` and ``%(in)s`` say which
#: ways the walk goes. Every table it reads is restricted to the walk's workspace (one shard on
#: Citus: docs/SCALING.md).
STEPS = f"""
    SELECT CASE WHEN l.target_memory_id IS NULL THEN '{ENTITY}' ELSE '{MEMORY}' END AS kind,
        COALESCE(l.target_memory_id, e.merged_into_id, l.target_entity_id) AS node,
        l.id AS link, l.kind AS type, 'out' AS direction
    FROM {Link._meta.db_table} l
    LEFT JOIN {Entity._meta.db_table} e
        ON e.id = l.target_entity_id AND e.workspace_id = %(workspace)s
    WHERE w.kind = '{MEMORY}' AND %(out)s AND l.source_id = w.node
        AND l.workspace_id = %(workspace)s AND l.removed_at IS NULL
    UNION ALL
    SELECT '{MEMORY}', l.source_id, l.id, l.kind, 'in'
    FROM {Link._meta.db_table} l
    WHERE w.kind = '{MEMORY}' AND %(in)s AND l.target_memory_id = w.node
        AND l.workspace_id = %(workspace)s AND l.removed_at IS NULL
    UNION ALL
    SELECT '{MEMORY}', l.source_id, l.id, l.kind, 'in'
    FROM {Link._meta.db_table} l
    WHERE w.kind = '{ENTITY}' AND %(in)s AND l.removed_at IS NULL
        AND l.workspace_id = %(workspace)s
        AND l.target_entity_id IN (
            SELECT id FROM {Entity._meta.db_table}
            WHERE (id = w.node OR merged_into_id = w.node) AND workspace_id = %(workspace)s
        )
        AND (%(everyone)s OR l.source_scope_id = ANY(%(scopes)s::bigint[]))
    UNION ALL
    SELECT '{MEMORY}', m.follows_id, NULL, 'follows', 'out'
    FROM {Memory._meta.db_table} m
    WHERE w.kind = '{MEMORY}' AND %(out)s AND m.id = w.node AND m.workspace_id = %(workspace)s
        AND m.follows_id IS NOT NULL
    UNION ALL
    SELECT '{MEMORY}', m.id, NULL, 'follows', 'in'
    FROM {Memory._meta.db_table} m
    WHERE w.kind = '{MEMORY}' AND %(in)s AND m.follows_id = w.node
        AND m.workspace_id = %(workspace)s
    UNION ALL
    SELECT '{MEMORY}', m.id, NULL, 'supersedes', 'out'
    FROM {Memory._meta.db_table} m
    WHERE w.kind = '{MEMORY}' AND %(out)s AND m.superseded_by_id = w.node
        AND m.workspace_id = %(workspace)s
    UNION ALL
    SELECT '{MEMORY}', m.superseded_by_id, NULL, 'supersedes', 'in'
    FROM {Memory._meta.db_table} m
    WHERE w.kind = '{MEMORY}' AND %(in)s AND m.id = w.node AND m.workspace_id = %(workspace)s
        AND m.superseded_by_id IS NOT NULL
"""

WALK = f"""
    WITH RECURSIVE walk (kind, node, depth, nodes, links, types, directions) AS (
        SELECT %(start_kind)s::text, %(start)s::bigint, 0,
            ARRAY[%(start_kind)s || %(start)s::text], ARRAY[]::bigint[], ARRAY[]::text[],
            ARRAY[]::text[]
        UNION ALL
        SELECT s.kind, s.node, w.depth + 1, w.nodes || (s.kind || s.node::text),
            w.links || s.link, w.types || s.type::text, w.directions || s.direction
        FROM walk w
        CROSS JOIN LATERAL ({STEPS}) AS s
        WHERE w.depth < %(depth)s
            AND NOT (s.kind || s.node::text) = ANY(w.nodes)
            AND (%(types)s::text[] IS NULL OR s.type = ANY(%(types)s::text[]))
            AND (s.kind = '{ENTITY}' OR EXISTS (
                SELECT 1 FROM {Memory._meta.db_table} v
                WHERE v.id = s.node AND v.workspace_id = %(workspace)s
                    AND v.status <> '{Memory.Status.FORGOTTEN}'
                    AND (%(everyone)s OR v.scope_id = ANY(%(scopes)s::bigint[]))
            ))
    )
"""


@dataclass(frozen=True)
class Step:
    """One link of a path, as the reader sees it."""

    kind: str  # the link's type
    direction: str  # "out": from the previous node to the next; "in": the other way
    link: Link | None  # None for the engine's own (follows, supersedes)


@dataclass(frozen=True)
class Reached:
    """A node a walk reached, by its shortest path (``nodes[0]`` is where it started)."""

    node: Memory | Entity
    depth: int
    nodes: list[Memory | Entity]
    steps: list[Step]


def resolve_node(reader: Reader, public_id: str, field: str) -> Memory | Entity:
    """A memory (by mem_id) or an entity (by id) the reader may see; anything else is the same
    NotFound, naming ``field``."""
    memories = reader.sees(
        Memory.objects.filter(mem_id=public_id).exclude(status=Memory.Status.FORGOTTEN)
    )
    found: Memory | Entity | None = memories.first()
    if found is None:
        entity = visible_entities(reader).filter(entity_id=public_id).first()
        if entity is not None:
            found = entity.merged_into or entity
    if found is None:
        raise NotFound(f"{field}: no memory or entity {public_id!r}")
    return found


def _key(node: Memory | Entity) -> tuple[str, int]:
    return (MEMORY if isinstance(node, Memory) else ENTITY, node.pk)


def _walk(
    start: Memory | Entity,
    *,
    workspace_id: int,
    scope_ids: Sequence[int] | None,
    depth: int,
    link_types: Sequence[str] | None,
    direction: str,
    end: Memory | Entity | None = None,
    nodes: int | None = None,
) -> list[tuple[str, int, int, list[str], list[int | None], list[str], list[str]]]:
    """The first (shortest) path to each node reached, breadth first, other than the start:
    at least ``nodes`` of them when there are (all, when None); to ``end`` only, if given."""
    kind, pk = _key(start)
    params: dict[str, Any] = {
        "start_kind": kind,
        "start": pk,
        "depth": depth,
        "types": list(link_types) if link_types else None,
        "workspace": workspace_id,
        "everyone": scope_ids is None,
        "scopes": list(scope_ids or []),
        "out": direction in ("out", "both"),
        "in": direction in ("in", "both"),
        "rows": settings.MM_TRAVERSAL_MAX_ROWS,
    }
    # Breadth first: every path of one length before the next, so the first row for a node
    # is a shortest path to it.
    if end is None:
        sql = WALK + (
            "SELECT kind, node, depth, nodes, links, types, directions FROM walk "
            "WHERE depth > 0 LIMIT %(rows)s"
        )
    else:
        sql = WALK + (
            "SELECT kind, node, depth, nodes, links, types, directions "
            "FROM (SELECT * FROM walk LIMIT %(rows)s) AS bounded "
            "WHERE kind = %(end_kind)s AND node = %(end)s LIMIT 1"
        )
        params["end_kind"], params["end"] = _key(end)
    try:
        with transaction.atomic(using=database.alias):
            with database.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('statement_timeout', %s, true)",
                    [str(settings.MM_TRAVERSAL_TIMEOUT_MS)],
                )
            # A cursor on the server, read in batches: the recursion runs only as far as the
            # rows read, so a walk stops once it has ``nodes`` distinct nodes.
            with database.chunked_cursor() as cursor:
                cursor.execute(sql, params)
                rows, seen = [], {(kind, pk)}
                while batch := cursor.fetchmany(FETCH_ROWS):
                    for row in batch:
                        if (row[0], row[1]) not in seen:
                            seen.add((row[0], row[1]))
                            rows.append(row)
                    if nodes is not None and len(rows) >= nodes:
                        break
                return rows
    except DatabaseError as exc:
        if isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
            raise ValidationFailed.single(
                "depth",
                f"the walk ran past {settings.MM_TRAVERSAL_TIMEOUT_MS:,} ms "
                "(MM_TRAVERSAL_TIMEOUT_MS): ask for a smaller depth or fewer link_types.",
            ) from exc
        raise


def _hydrate(rows: list[tuple], start: Memory | Entity, limit: int) -> list[Reached]:
    """The first ``limit`` of ``_walk``'s rows (one shortest path a node) with their nodes
    and links, read in three queries."""
    first = {(row[0], row[1]): row for row in rows[:limit]}
    memory_ids: set[int] = set()
    entity_ids: set[int] = set()
    link_ids: set[int] = set()
    for row in first.values():
        for name in row[3]:
            (memory_ids if name[0] == MEMORY else entity_ids).add(int(name[1:]))
        link_ids.update(pk for pk in row[4] if pk is not None)
    nodes: dict[tuple[str, int], Memory | Entity] = {_key(start): start}
    workspace_id = start.workspace_id
    for memory in Memory.objects.filter(workspace_id=workspace_id, pk__in=memory_ids).only(
        "mem_id", "text", "created_at", "scope_id"
    ):
        nodes[(MEMORY, memory.pk)] = memory
    entities = Entity.objects.filter(workspace_id=workspace_id, pk__in=entity_ids)
    for entity in entities.only("entity_id", "name", "kind"):
        nodes[(ENTITY, entity.pk)] = entity
    links = {
        link.pk: link
        for link in Link.objects.filter(workspace_id=workspace_id, pk__in=link_ids)
        .select_related("agent", "user")
        .only(
            "link_id",
            "kind",
            "weight",
            "origin",
            "evidence",
            "created_at",
            "agent__name",
            f"user__{get_user_model().USERNAME_FIELD}",
            "source_id",
        )  # fmt: skip
    }
    reached = []
    for (kind, pk), row in first.items():
        path = [nodes[(name[0], int(name[1:]))] for name in row[3]]
        steps = [
            Step(type_, direction, links.get(link) if link is not None else None)
            for link, type_, direction in zip(row[4], row[5], row[6], strict=True)
        ]
        reached.append(Reached(nodes[(kind, pk)], row[2], path, steps))
    return reached


def traverse(
    reader: Reader,
    start: Memory | Entity,
    *,
    depth: int = 2,
    link_types: Sequence[str] | None = None,
    direction: str = "both",
    limit: int = 50,
) -> list[Reached]:
    """The nodes ``reader`` sees within ``depth`` links of ``start``, nearest first, each by a
    shortest path."""
    rows = _walk(
        start,
        workspace_id=reader.workspace_id,
        scope_ids=reader.scope_list,
        depth=depth,
        link_types=link_types,
        direction=direction,
        nodes=limit,
    )
    return _hydrate(rows, start, limit)


def shortest_path(
    reader: Reader,
    start: Memory | Entity,
    end: Memory | Entity,
    *,
    depth: int = 3,
    link_types: Sequence[str] | None = None,
) -> Reached | None:
    """A shortest path ``reader`` sees from ``start`` to ``end`` (links followed either way),
    or None."""
    rows = _walk(
        start,
        workspace_id=reader.workspace_id,
        scope_ids=reader.scope_list,
        depth=depth,
        link_types=link_types,
        direction="both",
        end=end,
    )
    found = _hydrate(rows, start, 1)
    return found[0] if found else None


def made_by(step: Step) -> str:
    return "engine" if step.link is None else link_made_by(step.link)


def step_time(step: Step) -> datetime | None:
    return None if step.link is None else step.link.created_at


def traverse_from(
    reader: Reader,
    *,
    start: str,
    depth: int = 2,
    link_types: Sequence[str] | None = None,
    direction: str = "both",
    limit: int = 50,
) -> tuple[Memory | Entity, list[Reached]]:
    """What ``reader`` reaches from a memory or an entity (``start``: its public id)."""
    require_traversal()
    node = resolve_node(reader, start, "from")
    reached = traverse(
        reader,
        node,
        depth=depth,
        link_types=link_types,
        direction=direction,
        limit=limit,
    )
    return node, reached


def path_between(
    reader: Reader,
    *,
    start: str,
    end: str,
    depth: int = 3,
    link_types: Sequence[str] | None = None,
) -> tuple[Memory | Entity, Memory | Entity, Reached | None]:
    """A shortest path ``reader`` may see between two nodes (their public ids), or None. From
    a node to itself (or an entity to one merged into it) the path is found and empty."""
    require_traversal()
    first = resolve_node(reader, start, "from")
    last = resolve_node(reader, end, "to")
    if _key(first) == _key(last):
        return first, last, Reached(last, 0, [first], [])
    found = shortest_path(
        reader,
        first,
        last,
        depth=depth,
        link_types=link_types,
    )
    return first, last, found
