"""The purge after an erasure: the erased rows' bytes out of the database's files.

A deleted row stays in its table's pages until a vacuum removes it, and a vacuum removes only
the row versions no open snapshot can still see: a session whose snapshot was taken before
the deletion (a long report, a transaction left open, an analysis running) keeps them, and a
``VACUUM FULL`` copies them into the new files. So the purge first waits, for a bounded time,
until every snapshot older than its start has ended; it analyses the tables (their statistics
made again without the erased values), waits the same way for snapshots older than those
analyses, and vacuums the statistics' own table last. A session still open when the wait ends
is counted in what the purge returns (``older_snapshots``), the rows it can see stay until
the next purge, and ``meaning-memory purge`` says so.

Sessions of other roles show no snapshot to a role without ``pg_read_all_stats``: on a
database the engine does not own, grant it, or run the purge when no long transaction is open.
"""

from __future__ import annotations

import time
from typing import Any

from django.db import connection

#: The tables an erasure deletes from: what the purge vacuums.
PURGED_TABLES = (
    "memories_memory",
    "memories_link",
    "memories_memorydegree",
    "memories_provenanceevent",
    "memories_entity",
    "memories_divergence",
    "memories_thread",
    "memories_threadmember",
    "memories_sourcerecord",
    "django_admin_log",
)

#: How long a purge waits for snapshots older than its start, each time, by default.
WAIT_SECONDS = 60.0

_OLDER = (
    "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
    "AND backend_xmin IS NOT NULL AND age(backend_xmin) > age(%s::text::xid)"
)


def _horizon() -> str:
    """The first transaction id not yet given out: a snapshot that sees rows deleted before
    now began before it (as the 32-bit id ``pg_stat_activity`` shows)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint")
        (xmax,) = cursor.fetchone()
    return str(xmax % 2**32)


def older_snapshots(horizon: str) -> int:
    """How many other sessions (prepared transactions too) hold a snapshot older than
    ``horizon``."""
    with connection.cursor() as cursor:
        cursor.execute(_OLDER, [horizon])
        (sessions,) = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_xacts WHERE age(transaction) > age(%s::text::xid)",
            [horizon],
        )
        (prepared,) = cursor.fetchone()
    return sessions + prepared


def wait_for_older_snapshots(wait: float) -> int:
    """Wait, at most ``wait`` seconds, until no other session holds a snapshot taken before
    now; how many still do when it returns."""
    horizon = _horizon()
    deadline = time.monotonic() + wait
    pause = 0.05
    while (left := older_snapshots(horizon)) and time.monotonic() < deadline:
        time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
        pause = min(pause * 2, 1.0)
    return left


def older_warning(sessions: int) -> str:
    """What the purge's commands say when sessions outlived the wait."""
    return (
        f"{sessions} other session(s) still held a snapshot older than the purge: the erased "
        "rows they can see stay in the files until a purge runs after they end"
    )


def vacuum_tables(
    tables: tuple[str, ...] | list[str], *, full: bool = False, wait: float = WAIT_SECONDS
) -> int:
    """Vacuum (index entries included, however few) and analyse each table, then the
    statistics' table, so that no row version and no statistic keeps one of the deleted
    rows' values. ``full`` rewrites each table and its indexes into new files instead (it
    locks the table meanwhile), so the deleted rows' bytes are not even left in the free
    space of a page. Returns how many sessions still held an older snapshot after the waits
    (what they see stays). Not in a transaction."""
    older = wait_for_older_snapshots(wait)
    options = "FULL, ANALYZE" if full else "ANALYZE, INDEX_CLEANUP ON"
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"VACUUM ({options}) {connection.ops.quote_name(table)}")
    # The analyses replaced the tables' statistics; the rows they replaced, which may hold an
    # erased value (a common value, a histogram bound), stay in pg_statistic's pages until it
    # is vacuumed too. (A role that does not own the database is only warned.)
    older = max(older, wait_for_older_snapshots(wait))
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM {'(FULL) ' if full else ''}pg_catalog.pg_statistic")
    return older


def purge_storage(
    workspace_id: int | None = None, *, full: bool = False, wait: float = WAIT_SECONDS
) -> dict[str, Any]:
    """Make erased rows go from the database's files: vacuum the tables an erasure deletes
    from, and rebuild, without blocking writes, the full-text index (the workspace's own too)
    and the entities' indexes, which keep the keys of deleted rows after a vacuum. A vacuum
    leaves a deleted row's bytes in the free space of its page until a new row takes it;
    ``full`` rewrites the tables (each locked meanwhile: minutes for millions of memories).
    Not in a transaction."""
    from memories.indexing import existing_workspace_indexes

    older = vacuum_tables(PURGED_TABLES, full=full, wait=wait)
    indexes = [] if full else ["memory_words_metadata"]
    if not full:
        indexes += [
            f"memory_gin_ws_{pk}"
            for pk in sorted(existing_workspace_indexes())
            if workspace_id is None or pk == workspace_id
        ]
    with connection.cursor() as cursor:
        for index in indexes:
            cursor.execute(f"REINDEX INDEX CONCURRENTLY {connection.ops.quote_name(index)}")
        if not full:
            cursor.execute("REINDEX TABLE CONCURRENTLY memories_entity")
    return {
        "tables": len(PURGED_TABLES),
        "indexes": len(indexes),
        "full": full,
        "older_snapshots": older,
    }
