"""Per-workspace vector indexes: one partial HNSW index for each large workspace.

In a table shared by many workspaces a search filters on its workspace; for a workspace that
holds a small share of the table neither plan of the global HNSW index is fast: a filtered HNSW
scan rejects most of what it visits, and an exact scan reads one table page per memory of the
workspace (its rows lie scattered among everyone else's). A partial HNSW index restricted to
``workspace_id = N`` holds only that workspace's vectors, so the planner can answer its nearest
neighbours from a small index and read just the rows it returns.

A workspace gets one when it holds at least ``MM_WORKSPACE_INDEX_MIN_ROWS`` memories and less
than half of the table (above that, the global index serves it well). ``workspace_indexes_sync``
is idempotent; run it after bulk imports (``meaning-memory index_workspaces``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from memories.models import HNSW_EF_CONSTRUCTION, HNSW_M

INDEX_PREFIX = "memory_hnsw_ws_"
_INDEX_NAME = re.compile(rf"^{INDEX_PREFIX}(\d+)$")


@dataclass
class IndexSync:
    created: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)


def workspace_index_name(workspace_id: int) -> str:
    return f"{INDEX_PREFIX}{int(workspace_id)}"


def existing_workspace_indexes() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memories_memory' "
            "AND indexname LIKE %s",
            [f"{INDEX_PREFIX}%"],
        )
        names = [row[0] for row in cursor.fetchall()]
    return {int(m.group(1)) for name in names if (m := _INDEX_NAME.match(name))}


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
    """Create the partial index of each workspace that needs one and drop those no longer
    needed. Indexes are built and dropped CONCURRENTLY: searches and writes go on meanwhile."""
    if connection.in_atomic_block:
        raise RuntimeError("workspace_indexes_sync builds indexes concurrently: no transaction")
    wanted, existing = workspaces_needing_an_index(), existing_workspace_indexes()
    result = IndexSync(kept=sorted(wanted & existing))
    with connection.cursor() as cursor:
        for workspace_id in sorted(wanted - existing):
            cursor.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {workspace_index_name(workspace_id)} "
                "ON memories_memory USING hnsw (embedding vector_cosine_ops) "
                f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
                f"WHERE workspace_id = {int(workspace_id)}"
            )
            result.created.append(workspace_id)
        for workspace_id in sorted(existing - wanted):
            cursor.execute(
                f"DROP INDEX CONCURRENTLY IF EXISTS {workspace_index_name(workspace_id)}"
            )
            result.dropped.append(workspace_id)
    return result
