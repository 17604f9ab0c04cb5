"""Per-workspace indexes: a partial HNSW and a partial GIN index for each large workspace.

In a table shared by many workspaces a search filters on its workspace; for a workspace that
holds a small share of the table neither plan of the global HNSW index is fast: a filtered HNSW
scan rejects most of what it visits, and an exact scan reads one table page per memory of the
workspace (its rows lie scattered among everyone else's). A partial HNSW index restricted to
``workspace_id = N`` holds only that workspace's vectors, so the planner can answer its nearest
neighbours from a small index and read just the rows it returns. Full-text search has the same
problem in another form: the global GIN index returns every memory of the table that holds a
query word, and a word rare in one workspace may be in tens of thousands of the others'
memories; a partial GIN index returns only the workspace's own.

A workspace gets one when it holds at least ``MM_WORKSPACE_INDEX_MIN_ROWS`` memories and less
than half of the table (above that, the global index serves it well). ``workspace_indexes_sync``
is idempotent; run it after bulk imports (``meaning-memory index_workspaces``).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from memories import value_indexes
from memories.concurrent_indexes import create_index_concurrently
from memories.models import PARTIAL_HNSW

#: Each large workspace's own indexes: name prefix and definition.
WORKSPACE_INDEXES = {
    "memory_hnsw_ws_": PARTIAL_HNSW,
    # Words and metadata in one index: a search with a metadata filter takes each word's
    # keyword candidates that the filter keeps from it (see ``memories.search.metadata``).
    "memory_gin_ws_": "USING gin (search_vector, metadata jsonb_path_ops)",
}
INDEX_PREFIX = "memory_hnsw_ws_"
#: The session-level advisory lock that serializes ``workspace_indexes_sync``.
SYNC_LOCK = 0x4D4D_0001
_INDEX_NAME = re.compile(r"^(memory_hnsw_ws_|memory_gin_ws_)(\d+)$")


@dataclass
class IndexSync:
    created: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    #: The indexes of metadata values (``memories.value_indexes``), by name.
    values: value_indexes.ValueIndexSync = field(default_factory=value_indexes.ValueIndexSync)


def workspace_index_name(workspace_id: int, prefix: str = INDEX_PREFIX) -> str:
    return f"{prefix}{int(workspace_id)}"


def _workspace_indexes(
    *, valid_only: bool = False, current_only: bool = False
) -> dict[int, set[str]]:
    """{workspace id: the prefixes of its own indexes that exist} (with ``valid_only``, only
    those a search can use: not the leftover of a build that crashed; with ``current_only``,
    only those of today's definition: ``_sync`` builds an earlier version's again)."""
    found: dict[int, set[str]] = {}
    for name, valid, definition in _index_rows():
        if not (match := _INDEX_NAME.match(name)) or (valid_only and not valid):
            continue
        if not current_only or _current(match.group(1), definition):
            found.setdefault(int(match.group(2)), set()).add(match.group(1))
    return found


def _index_rows() -> list[tuple[str, bool, str]]:
    """Each workspace index: its name, whether it is usable, its definition."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid AND i.indisready, pg_get_indexdef(i.indexrelid) "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'memories_memory'::regclass "
            "AND (c.relname LIKE 'memory_hnsw_ws_%%' OR c.relname LIKE 'memory_gin_ws_%%')"
        )
        return cursor.fetchall()


def _current(prefix: str, definition: str) -> bool:
    """Whether an index's definition (``pg_get_indexdef``) is today's for its kind: its
    method and columns (PostgreSQL writes the storage parameters its own way)."""
    return WORKSPACE_INDEXES[prefix].split(" WITH ")[0] in definition


def existing_workspace_indexes() -> set[int]:
    """The workspaces that have indexes of their own."""
    return set(_workspace_indexes(valid_only=True))


def workspaces_needing_an_index() -> set[int]:
    minimum = settings.MM_WORKSPACE_INDEX_MIN_ROWS
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT workspace_id, count(*) FROM memories_memory "
            "WHERE embedding IS NOT NULL GROUP BY workspace_id"
        )
        counts = dict(cursor.fetchall())
    total = sum(counts.values())
    return {ws for ws, n in counts.items() if n >= minimum and 2 * n < total}


def workspace_indexes_sync() -> IndexSync:
    """Create the partial indexes of each workspace that needs them and drop those no longer
    needed, and the same for the indexes of metadata values (``memories.value_indexes``).
    Indexes are built and dropped CONCURRENTLY: searches and writes go on meanwhile."""
    with _one_sync_at_a_time():
        result = _sync()
        result.values = value_indexes.sync()
        return result


def workspace_indexes_rebuild_outdated() -> list[int]:
    """Build again, with today's definition, every workspace index of an earlier one, and
    return those workspaces. Which workspaces have indexes of their own stays as it is (a
    migration's step: an operator may have chosen them with other thresholds)."""
    with _one_sync_at_a_time():
        current = _workspace_indexes(valid_only=True, current_only=True)
        rebuilt = []
        with connection.cursor() as cursor:
            for workspace_id, prefixes in sorted(_workspace_indexes(valid_only=True).items()):
                for prefix in sorted(prefixes - current.get(workspace_id, set())):
                    _build(cursor, workspace_id, prefix)
                    rebuilt.append(workspace_id)
        return sorted(set(rebuilt))


@contextmanager
def _one_sync_at_a_time():
    if connection.in_atomic_block:
        raise RuntimeError("workspace indexes are built concurrently: no transaction")
    # One sync at a time (the hourly task, index_workspaces, a migration): a build in progress
    # looks like an invalid leftover to another sync, which would drop it.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [SYNC_LOCK])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [SYNC_LOCK])


def _build(cursor, workspace_id: int, prefix: str) -> None:
    """Build a workspace's index of this kind with today's definition: one that a build that
    crashed left, or of an earlier definition, is dropped first."""
    name = workspace_index_name(workspace_id, prefix)
    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    create_index_concurrently(
        cursor,
        name,
        f"CREATE INDEX CONCURRENTLY {name} ON memories_memory "
        f"{WORKSPACE_INDEXES[prefix]} WHERE workspace_id = {int(workspace_id)}",
    )


def _sync() -> IndexSync:
    wanted, existing = workspaces_needing_an_index(), _workspace_indexes()
    valid = _workspace_indexes(valid_only=True, current_only=True)
    complete = {ws for ws, kinds in valid.items() if kinds == set(WORKSPACE_INDEXES)}
    result = IndexSync(kept=sorted(wanted & complete))
    with connection.cursor() as cursor:
        for workspace_id in sorted(wanted - complete):
            for prefix in WORKSPACE_INDEXES:
                if prefix not in valid.get(workspace_id, set()):
                    _build(cursor, workspace_id, prefix)
            result.created.append(workspace_id)
        for workspace_id in sorted(set(existing) - wanted):
            for prefix in WORKSPACE_INDEXES:
                cursor.execute(
                    "DROP INDEX CONCURRENTLY IF EXISTS "
                    f"{workspace_index_name(workspace_id, prefix)}"
                )
            result.dropped.append(workspace_id)
    return result
