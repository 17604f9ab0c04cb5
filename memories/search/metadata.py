"""Where a search with a metadata filter takes its vector candidates from.

Left to itself, the planner serves a filter the metadata index answers (containment) from that
index and sorts every memory it keeps by distance: fast for a rare customer, slow for a common
one (a tenth of a million memories is a hundred thousand vectors read and compared). So the
vector candidates are chosen here, before the ranking statement, by how many memories the
filter keeps among those the reader sees:

* **many**: the vector index's nearest memories that pass the filter, from its iterative scan
  (``hnsw.iterative_scan``: the index is read further until enough rows pass), in a statement
  of its own in which the planner may not read them any other way; they are then ranked again
  by their vectors. A filter that keeps many memories keeps them near any query, so the scan
  stops early;
* **few** (at most ``METADATA_LIST_MAX``): they are listed (the first ``METADATA_LIST_MAX`` + 1
  rows the filter keeps, read however the planner reads them fastest) and every one is ranked
  by its vector, as an exact search would.

Which, is first guessed from the planner's estimate of the rows the filter keeps (its
statistics know the common values of the metadata; a range or a rare value it guesses): a
large estimate tries the index first, reading at most ``METADATA_FIRST_SCAN`` index tuples; if
that finds fewer than the search's candidates, the filter is rarer than guessed and the
memories it keeps are listed; if they are more than ``METADATA_LIST_MAX`` after all, the index
is read again, up to ``METADATA_SCAN_MAX`` tuples.

The keyword candidates need no choice: the words and the metadata are in one GIN index
(``memory_words_metadata``), so a query word's matches are narrowed to the memories a
containment filter keeps inside the index (GIN reads the rare list and skips through the
common one), and only a range or a key's existence, which the index cannot answer, is tested
on the rows.

``exact`` searches (the benchmarks' truth) rank every memory the filter keeps. BENCHMARKS.md
measures both sides of the line at a million memories: each filter's p95 against the same
search unfiltered, and its recall against the exact search.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from memories.reading import reader as database

#: Up to this many memories kept by the filter, every one is a vector candidate.
METADATA_LIST_MAX = 2_000
#: The most index tuples the first read of the vector index takes (enough for a filter that
#: keeps one memory in a hundred or more).
METADATA_FIRST_SCAN = 5_000
#: The most index tuples it reads for a filter that keeps more than ``METADATA_LIST_MAX`` but
#: fewer than the first read found.
METADATA_SCAN_MAX = 50_000
#: How the statement reading the vector index is planned: only that index may serve it (every
#: other way is disabled, not forbidden: the planner still finds a plan should it be missing).
_INDEX_ONLY = (("enable_seqscan", "off"), ("enable_bitmapscan", "off"), ("enable_sort", "off"))


def metadata_candidates(
    base: str, params: dict[str, object], *, vector: str, count: int, model: str
) -> list[int]:
    """The ids of the vector candidates of a search whose WHERE clause (the workspace, scopes
    and every filter, the metadata filter included) is ``base`` with ``params``: the ``count``
    nearest to ``vector`` that it keeps, or, when it keeps at most ``METADATA_LIST_MAX``, every
    one."""
    with transaction.atomic(using=database.alias), database.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) SELECT id FROM memories_memory WHERE {base}", params)
        estimate = cursor.fetchone()[0][0]["Plan"]["Plan Rows"]
        if estimate > METADATA_LIST_MAX:
            found = _nearest(cursor, base, params, vector, count, model, METADATA_FIRST_SCAN)
            if len(found) >= count:
                return found
        cursor.execute(
            f"SELECT id FROM memories_memory WHERE {base} LIMIT {METADATA_LIST_MAX + 1}", params
        )
        listed = [row[0] for row in cursor.fetchall()]
        if len(listed) <= METADATA_LIST_MAX:
            return listed
        return _nearest(cursor, base, params, vector, count, model, METADATA_SCAN_MAX)


def _nearest(
    cursor: Any,
    base: str,
    params: dict[str, object],
    vector: str,
    count: int,
    model: str,
    scan: int,
) -> list[int]:
    """The ``count`` memories nearest to ``vector`` that ``base`` keeps, from the vector index
    (at most ``scan`` of its tuples read); the planner's settings put back after."""
    ef_search = max(count, settings.MM_HNSW_EF_SEARCH)
    wanted = dict(_INDEX_ONLY) | {"hnsw.ef_search": ef_search, "hnsw.max_scan_tuples": scan}
    names = list(wanted)
    cursor.execute(
        "SELECT " + ", ".join(["current_setting(%s)"] * len(names)), names
    )  # read first: a statement's settings are set after its target list is read
    kept = dict(zip(names, cursor.fetchone(), strict=True))
    _set(cursor, {name: str(value) for name, value in wanted.items()})
    try:
        cursor.execute(
            f"""
            SELECT id FROM memories_memory
            WHERE {base} AND embedding IS NOT NULL AND embedding_model = %(model)s
            ORDER BY embedding <=> %(vector)s::vector LIMIT {int(count)}
            """,
            {**params, "vector": vector, "model": model},
        )
        return [row[0] for row in cursor.fetchall()]
    finally:
        _set(cursor, kept)


def _set(cursor: Any, values: dict[str, str]) -> None:
    """Set these settings for the rest of the transaction, in one statement."""
    cursor.execute(
        "SELECT " + ", ".join(["set_config(%s, %s, true)"] * len(values)),
        [part for item in values.items() for part in item],
    )
