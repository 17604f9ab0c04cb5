"""Where a search with a metadata filter takes its vector candidates from.

Left to itself, the planner serves a filter the metadata index answers (containment) from that
index and sorts every memory it keeps by distance: fast for a rare customer, slow for a common
one (a tenth of a million memories is a hundred thousand vectors read and compared). So the
vector candidates are chosen here, before the ranking statement, by how many memories the
filter keeps among those the reader sees:

* **few** (at most ``METADATA_LIST_MAX``): they are listed (the first ``METADATA_LIST_MAX`` + 1
  rows the filter keeps, read however the planner reads them fastest) and every one is ranked
  by its vector, as an exact search would;
* **many**: the vector index's nearest memories that pass the filter, from its iterative scan
  (``hnsw.iterative_scan``: the index is read further until enough rows pass), in a statement
  of its own in which the planner may not read them any other way; they are then ranked again
  by their vectors. A filter that keeps many memories keeps them near any query, so the scan
  stops early; it stops at ``METADATA_SCAN_MAX`` index tuples whatever it found.

The keyword candidates apply the filter as every other filter, and ``exact`` searches (the
benchmarks' truth) rank every memory the filter keeps. BENCHMARKS.md measures both sides of
the line at a million memories: each filter's p95 against the same search unfiltered, and its
recall against the exact search.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from memories.reading import reader as database

#: Up to this many memories kept by the filter, every one is a vector candidate.
METADATA_LIST_MAX = 2_000
#: The most index tuples the vector index's iterative scan reads for a filtered search.
METADATA_SCAN_MAX = 50_000


def metadata_candidates(
    base: str, params: dict[str, object], *, vector: str, count: int, model: str
) -> list[int]:
    """The ids of the vector candidates of a search whose WHERE clause (the workspace, scopes
    and every filter, the metadata filter included) is ``base`` with ``params``: every memory it
    keeps when they are few, else the ``count`` nearest to ``vector`` that it keeps."""
    with transaction.atomic(using=database.alias), database.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM memories_memory WHERE {base} LIMIT {METADATA_LIST_MAX + 1}", params
        )
        listed = [row[0] for row in cursor.fetchall()]
        if len(listed) <= METADATA_LIST_MAX:
            return listed
        # Only the vector index may serve this statement (every other way is disabled, not
        # forbidden: the planner still finds a plan should the index be missing).
        for name, value in (
            ("enable_seqscan", "off"),
            ("enable_bitmapscan", "off"),
            ("enable_sort", "off"),
            ("hnsw.ef_search", str(max(count, settings.MM_HNSW_EF_SEARCH))),
            ("hnsw.max_scan_tuples", str(METADATA_SCAN_MAX)),
        ):
            cursor.execute("SELECT set_config(%s, %s, true)", [name, value])
        cursor.execute(
            f"""
            SELECT id FROM memories_memory
            WHERE {base} AND embedding IS NOT NULL AND embedding_model = %(model)s
            ORDER BY embedding <=> %(vector)s::vector LIMIT {int(count)}
            """,
            {**params, "vector": vector, "model": model},
        )
        return [row[0] for row in cursor.fetchall()]
