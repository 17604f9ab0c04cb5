"""Indexes of a metadata value: a partial vector index for each common value of the keys an
operator names (``MM_METADATA_INDEX_KEYS``), such as each large customer's.

A search filtered to one customer takes its vector candidates either by comparing each of the
customer's memories or from the vector index's filtered scan (``memories.search.metadata``).
For a customer holding about one memory in a hundred both ways are dear: ten thousand
comparisons, or a scan that reads a hundred index tuples for each one it keeps. A partial HNSW
index restricted to ``workspace_id = W AND metadata @> '{"customer": "orion"}'`` holds only
that customer's vectors, so its nearest are found as fast as an unfiltered search's.

A value gets one when its workspace has at least ``MM_WORKSPACE_INDEX_MIN_ROWS`` memories with
it and it is held by at most ``MAX_SHARE`` of the workspace's memories (a value more common
than that is found by the filtered scan of the workspace's own index, or the global one, which
then reads at most ten tuples for each it keeps). Only keys an operator names get them: each
such index costs every write of its value one more vector index insert, and its build reads
every memory of the value. ``workspace_indexes_sync`` (``meaning-memory index_workspaces``, and
the hourly task) builds and drops them with the workspaces' own.

A search uses one when its filter says ``{"key": value}`` at its top level (alone or AND-ed
with other conditions): the index's predicate is then proved from the statement's condition.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection
from psycopg import sql as psycopg_sql

from memories import metadata_filter
from memories.concurrent_indexes import create_index_concurrently
from memories.models import PARTIAL_HNSW

PREFIX = "memory_hnsw_mv_"
#: A value held by more than this share of its workspace's memories gets no index of its own.
MAX_SHARE = 0.1
_METHOD = PARTIAL_HNSW.split(" WITH ")[0]  # how pg_get_indexdef writes it, before the options
#: The JSON types a value index is made for (null is not: its containment is not equality).
_SCALARS = ("string", "number", "boolean")


@dataclass(frozen=True)
class ValueIndex:
    workspace_id: int
    key: str
    value: Any  # a JSON string, number or boolean

    @property
    def containment(self) -> str:
        """The JSON a filter's ``{"key": value}`` binds (``metadata_filter``), so that the
        index's predicate and the search's condition are the same."""
        return json.dumps({self.key: self.value})

    @property
    def name(self) -> str:
        digest = hashlib.sha256(self.containment.encode()).hexdigest()[:16]
        return f"{PREFIX}{int(self.workspace_id)}_{digest}"


@dataclass
class ValueIndexSync:
    created: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def indexes_for(workspace_id: int, found: metadata_filter.Filter) -> list[str]:
    """The names the value indexes that could serve this filter would have: one for each
    equality on a named key at the filter's top level."""
    keys = set(settings.MM_METADATA_INDEX_KEYS)
    return [
        ValueIndex(workspace_id, key, value).name
        for key, value in _equalities(found)
        if key in keys and _scalar(value)
    ]


def _equalities(found: metadata_filter.Filter) -> list[tuple[str, Any]]:
    if isinstance(found, metadata_filter.Condition):
        return [(found.key, found.value)] if found.operator == "eq" else []
    if found.operator != "and":
        return []
    return [pair for part in found.parts for pair in _equalities(part)]


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, bool, int, float))


def usable(cursor: Any, names: list[str]) -> list[tuple[str, float]]:
    """Those of ``names`` that exist and a search can use, each with its size in memories
    (the planner's, from the index's statistics)."""
    if not names:
        return []
    cursor.execute(
        "SELECT c.relname, greatest(c.reltuples, 0) FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = ANY(%s) "
        "AND i.indrelid = 'memories_memory'::regclass AND i.indisvalid AND i.indisready",
        [names],
    )
    return [(name, float(rows)) for name, rows in cursor.fetchall()]


def wanted() -> dict[str, ValueIndex]:
    """Each value index the table's memories call for now, by name."""
    keys = list(dict.fromkeys(settings.MM_METADATA_INDEX_KEYS))
    if not keys:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT workspace_id, count(*) FROM memories_memory "
            "WHERE embedding IS NOT NULL GROUP BY workspace_id"
        )
        totals = dict(cursor.fetchall())
        cursor.execute(
            "SELECT workspace_id, key, (metadata -> key)::text, count(*) "
            "FROM memories_memory, unnest(%s::text[]) AS key "
            "WHERE embedding IS NOT NULL AND jsonb_typeof(metadata -> key) = ANY(%s) "
            "GROUP BY 1, 2, 3 HAVING count(*) >= %s",
            [keys, list(_SCALARS), settings.MM_WORKSPACE_INDEX_MIN_ROWS],
        )
        rows = cursor.fetchall()
    found = (
        ValueIndex(workspace_id, key, json.loads(value))
        for workspace_id, key, value, count in rows
        if count <= MAX_SHARE * totals[workspace_id]
    )
    return {index.name: index for index in found}


def sync() -> ValueIndexSync:
    """Build the value indexes wanted and not there, drop those there and not wanted. Called
    by ``workspace_indexes_sync``, under its lock, outside any transaction."""
    wanted_now = wanted()
    existing, current = _existing()
    result = ValueIndexSync(kept=sorted(set(wanted_now) & current))
    with connection.cursor() as cursor:
        for name in sorted(set(wanted_now) - current):
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")  # an earlier definition
            index = wanted_now[name]
            predicate = psycopg_sql.Literal(index.containment).as_string(cursor.connection)
            create_index_concurrently(
                cursor,
                name,
                f"CREATE INDEX CONCURRENTLY {name} ON memories_memory {PARTIAL_HNSW} "
                f"WHERE workspace_id = {int(index.workspace_id)} "
                f"AND metadata @> {predicate}::jsonb",
            )
            result.created.append(name)
        for name in sorted(existing - set(wanted_now)):
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            result.dropped.append(name)
    return result


def _existing() -> tuple[set[str], set[str]]:
    """Every value index there is, and those usable and of today's definition."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid AND i.indisready, pg_get_indexdef(i.indexrelid) "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'memories_memory'::regclass AND c.relname LIKE %s",
            [PREFIX.replace("_", r"\_") + "%"],
        )
        rows = cursor.fetchall()
    return (
        {name for name, _, _ in rows},
        {name for name, valid, definition in rows if valid and _METHOD in definition},
    )
