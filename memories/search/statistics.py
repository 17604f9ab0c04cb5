"""PostgreSQL's statistics of the memories table, read once per ``STATISTICS_TTL_S`` per
process: which words are too common in a workspace to select keyword candidates."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.conf import settings

from memories.reading import reader

#: How long a process keeps PostgreSQL's statistics before reading them again. They change only
#: when the table is analyzed (autovacuum does it as the table grows), and a stale copy only
#: delays the moment a word starts or stops counting as common: it never hides a memory.
STATISTICS_TTL_S = 300.0


@dataclass(frozen=True)
class Statistics:
    read_at: float
    rows: float  # memories in the table (pg_class.reltuples)
    words: tuple[tuple[str, float], ...]  # most common lexemes, share of memories holding each
    workspaces: dict[int, float]  # most common workspaces, share of memories in each
    other_workspace: float  # the average share of any other workspace
    common: dict[tuple[int, int], dict[str, float]] = field(default_factory=dict)


_statistics: dict[str, Statistics] = {}


def read_statistics() -> Statistics:
    stats = (
        "FROM pg_stats s, unnest(s.{values}::text::text[], s.{freqs}) AS u(value, share) "
        "WHERE s.schemaname = current_schema() AND s.tablename = 'memories_memory' "
        "AND s.attname = '{column}' AND u.value IS NOT NULL"
    )
    with reader.cursor() as cursor:
        cursor.execute(
            "SELECT 'rows', NULL, reltuples::float8 FROM pg_class "
            "WHERE oid = 'memories_memory'::regclass "
            "UNION ALL SELECT 'word', u.value, u.share "
            + stats.format(
                values="most_common_elems", freqs="most_common_elem_freqs", column="search_vector"
            )
            + " UNION ALL SELECT 'workspace', u.value, u.share "
            + stats.format(
                values="most_common_vals", freqs="most_common_freqs", column="workspace_id"
            )
            + " UNION ALL SELECT 'distinct', NULL, n_distinct::float8 FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = 'memories_memory' "
            "AND attname = 'workspace_id'"
        )
        found = cursor.fetchall()
    rows = max([value for kind, _, value in found if kind == "rows"] + [0.0])
    workspaces = {int(pk): share for kind, pk, share in found if kind == "workspace"}
    # As the planner estimates a value missing from the most common ones: the rest of the rows
    # spread evenly over the rest of the distinct values (n_distinct < 0 is a share of rows).
    distinct = next((value for kind, _, value in found if kind == "distinct"), 0.0)
    distinct = -distinct * rows if distinct < 0 else distinct
    others = distinct - len(workspaces)
    return Statistics(
        read_at=time.monotonic(),
        rows=rows,
        words=tuple((word, share) for kind, word, share in found if kind == "word"),
        workspaces=workspaces,
        other_workspace=max(1.0 - sum(workspaces.values()), 0.0) / others if others >= 1 else 0.0,
    )


def common_words(workspace_id: int) -> dict[str, float]:
    """The words too common to select keyword candidates in a workspace, with the share of all
    memories holding each.

    A word is common when more than ``MM_SEARCH_KEYWORD_SCAN_MAX`` memories of the workspace
    are expected to hold it: (its share of all memories) × (the workspace's share of all
    memories) × (all memories), from PostgreSQL's statistics (the most common elements of the
    ``search_vector`` column, up to 10,000 of them, and the most common values of
    ``workspace_id``; a workspace not among those gets the average share of the others). Its
    matches could not all be ranked, so they would be an arbitrary sample, and such a word says
    little about relevance anyway; it still counts in the keyword rank. A table not analyzed
    yet has no common words. The statistics are read once per ``STATISTICS_TTL_S`` per
    process, not per search.
    """
    statistics = _statistics.get(reader.alias)
    if statistics is None or time.monotonic() - statistics.read_at > STATISTICS_TTL_S:
        statistics = _statistics[reader.alias] = read_statistics()
    limit = settings.MM_SEARCH_KEYWORD_SCAN_MAX
    common = statistics.common.get((workspace_id, limit))
    if common is None:
        share = statistics.workspaces.get(workspace_id, statistics.other_workspace)
        workspace_rows = statistics.rows * share
        common = {word: share for word, share in statistics.words if share * workspace_rows > limit}
        statistics.common[(workspace_id, limit)] = common
    return common


def forget_statistics() -> None:
    """Read PostgreSQL's statistics again at the next search (after an ANALYZE, in tests)."""
    _statistics.clear()
