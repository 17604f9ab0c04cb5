"""Where a search with a metadata filter takes its vector candidates from.

Left to itself, the planner serves a filter the metadata index answers (containment) from that
index and sorts every memory it keeps by distance: fast for a rare customer, slow for a common
one (a tenth of a million memories is a hundred thousand vectors read and compared). So the
vector candidates are chosen here, before the ranking statement, in one of two ways:

* **exact**: the memories the filter keeps are read (however the planner reads them fastest)
  and the ``count`` nearest taken, each compared by its vector, as an exact search would. Its
  cost grows with the memories kept (their vectors are in their rows: ``toast_tuple_target``,
  migration 0041; the planner's estimate from the statistics of migration 0042);
* **the vector index**: its nearest memories that pass the filter, from its iterative scan
  (``hnsw.iterative_scan``: the index is read further until enough rows pass), in a statement
  of its own in which the planner may not read them any other way. Its cost grows with the
  memories the filter *rejects* on the way: a filter that keeps one memory in ``k`` reads about
  ``count × k`` index tuples, each several times dearer than one exact comparison.

The line between them is where the two cost the same: a filter keeping ``n`` of a table's
``N`` memories costs ``n`` comparisons one way and ``count × N / n × SCAN_COST_RATIO`` the
other, equal at ``n = sqrt(count × N × SCAN_COST_RATIO)`` (``exact_line``; 15,800 at a million
memories). The planner's estimate of the rows the filter keeps (its statistics know the common
values of the metadata; a range or a rare value it guesses) picks the side, and each side
checks the guess: the exact read stops past the line (the filter keeps more than guessed: the
index is read instead), and the index's read stops after three times the tuples a filter at
the line would need, never more than ``METADATA_SCAN_MAX`` (it keeps fewer than guessed: the
exact read instead). The scan is given the memory its tuples take: pgvector also stops it when
it holds more than ``work_mem``, which, left as it is, would stop a long scan first (a test
shows a scan at a small ``work_mem`` missing the memory farthest from the query).

A filter on a value that has a vector index of its own (``memories.value_indexes``: an
operator names the keys) reads that index first, whatever the line: it holds only the value's
memories, so its scan reads about what an unfiltered search reads.

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

import math
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction

from memories.reading import reader as database
from memories.value_indexes import usable

#: What reading one tuple of the vector index's filtered scan costs, in exact comparisons of
#: a memory's vector (measured at a million memories: BENCHMARKS.md, metadata filters, "the
#: line's costs").
SCAN_COST_RATIO = 5.0
#: The line is never below this many memories kept (a small table: exact up to here)...
EXACT_LINE_MIN = 2_000
#: ...nor above this many (the exact read's worst case: a filter the planner underestimated).
EXACT_LINE_MAX = 50_000
#: The most index tuples a scan reads: a filter that keeps fewer memories than guessed is
#: then compared exactly.
METADATA_SCAN_MAX = 50_000
#: The memory a scan may hold per tuple it reads (pgvector stops an iterative scan at
#: ``work_mem × hnsw.scan_mem_multiplier`` as well as at ``hnsw.max_scan_tuples``; an element
#: it holds takes a few hundred bytes), so that the budget in tuples is what stops it.
SCAN_BYTES_PER_TUPLE = 1024
#: A value's own vector index (``memories.value_indexes``) is searched with a list this many
#: times the candidates wanted: its graph holds only the value's memories, so a long list
#: costs a few milliseconds and finds the nearest of them where the list of an unfiltered
#: search (``MM_HNSW_EF_SEARCH``) misses some (BENCHMARKS.md, metadata filters).
VALUE_INDEX_LIST = 4
#: How the statement reading the vector index is planned: only that index may serve it (every
#: other way is disabled, not forbidden: the planner still finds a plan should it be missing).
_INDEX_ONLY = (("enable_seqscan", "off"), ("enable_bitmapscan", "off"), ("enable_sort", "off"))


def exact_line(count: int, table_rows: float) -> int:
    """How many memories kept a filter may have for its ``count`` vector candidates to be
    found by comparing each (see the module docstring)."""
    line = math.sqrt(count * max(table_rows, 0.0) * SCAN_COST_RATIO)
    return int(min(max(line, EXACT_LINE_MIN), EXACT_LINE_MAX))


def metadata_candidates(
    base: str,
    params: dict[str, object],
    *,
    vector: str,
    count: int,
    model: str,
    value_indexes: Sequence[str] = (),
) -> list[int]:
    """The ids of the vector candidates of a search whose WHERE clause (the workspace, scopes
    and every filter, the metadata filter included) is ``base`` with ``params``: the ``count``
    nearest to ``vector`` that it keeps. ``value_indexes``: the names of the indexes of a
    metadata value (``memories.value_indexes``) that could serve the filter."""
    base = f"{base} AND embedding IS NOT NULL AND embedding_model = %(model)s"
    params = {**params, "vector": vector, "model": model}
    with transaction.atomic(using=database.alias), database.cursor() as cursor:
        estimate, table_rows = _estimates(cursor, base, params)
        line = exact_line(count, table_rows)
        served = usable(cursor, list(value_indexes))
        if served and (size := min(rows for _, rows in served)) >= count:
            # The value's own vector index holds only what its equality keeps: its scan reads
            # about the tuples the rest of the filter needs for ``count`` it keeps (an index
            # of fewer memories than that cannot give them: they are compared exactly).
            scan = min(
                max(3 * count * int(size) // max(int(estimate), 1), count), METADATA_SCAN_MAX
            )
            found = _nearest(cursor, base, params, count, scan, VALUE_INDEX_LIST * count)
            if len(found) >= count:
                return found
        elif estimate > line:
            # Three times the tuples a filter at the line needs: one that needs more keeps
            # fewer than a third of the line's memories, and is compared exactly.
            scan = min(max(3 * count * int(table_rows) // max(line, 1), count), METADATA_SCAN_MAX)
            found = _nearest(cursor, base, params, count, scan)
            if len(found) >= count:
                return found
        kept, nearest = _exact(cursor, base, params, count, line)
        if kept <= line:
            return nearest
        return _nearest(cursor, base, params, count, METADATA_SCAN_MAX)


def _estimates(cursor: Any, base: str, params: dict[str, object]) -> tuple[float, float]:
    """The planner's estimates of the memories ``base`` keeps and of the memories in the
    table, in one statement (the table's as the planner sizes it: its statistics scaled to its
    pages now, so a table filled since it was last analysed is not taken for small)."""
    cursor.execute(
        "EXPLAIN (FORMAT JSON) SELECT id FROM memories_memory WHERE "
        f"{base} UNION ALL SELECT id FROM memories_memory",
        params,
    )
    plan = cursor.fetchone()[0][0]["Plan"]
    kept, table = (part["Plan Rows"] for part in plan["Plans"])
    return kept, max(table, kept)


def _exact(
    cursor: Any, base: str, params: dict[str, object], count: int, line: int
) -> tuple[int, list[int]]:
    """How many memories ``base`` keeps (at most ``line`` + 1: past the line the read stops)
    and, when they are at most ``line``, the ``count`` nearest, each compared exactly."""
    cursor.execute(  # each distance taken as its row is read: no vector is carried further
        f"""
        SELECT id, count(*) OVER () FROM (
            SELECT id, embedding <=> %(vector)s::vector AS distance FROM memories_memory
            WHERE {base} LIMIT {int(line) + 1}
        ) AS kept
        ORDER BY distance LIMIT {int(count)}
        """,
        params,
    )
    rows = cursor.fetchall()
    return (rows[0][1] if rows else 0), [row[0] for row in rows]


def _nearest(
    cursor: Any, base: str, params: dict[str, object], count: int, scan: int, ef: int = 0
) -> list[int]:
    """The ``count`` memories nearest to the query's vector that ``base`` keeps, from the
    vector index (at most ``scan`` of its tuples read, with the memory to hold them; a search
    list of at least ``ef``); the planner's settings put back after."""
    ef_search = min(max(count, ef, settings.MM_HNSW_EF_SEARCH), 1000)  # pgvector's most
    wanted: dict[str, object] = dict(_INDEX_ONLY)
    wanted |= {"hnsw.ef_search": ef_search, "hnsw.max_scan_tuples": scan}
    names = [*wanted, "hnsw.scan_mem_multiplier"]
    cursor.execute(  # read first: a statement's settings are set after its target list is read
        "SELECT " + ", ".join(["current_setting(%s)"] * len(names))
        + ", pg_size_bytes(current_setting('work_mem'))",
        names,
    )  # fmt: skip
    *values, work_mem = cursor.fetchone()
    kept = dict(zip(names, values, strict=True))
    held = scan * SCAN_BYTES_PER_TUPLE / work_mem
    wanted["hnsw.scan_mem_multiplier"] = min(max(held, 1.0), 1000.0)  # pgvector's range
    _set(cursor, {name: str(value) for name, value in wanted.items()})
    try:
        cursor.execute(nearest_sql(base, count), params)
        return [row[0] for row in cursor.fetchall()]
    finally:
        _set(cursor, kept)


def nearest_sql(base: str, count: int) -> str:
    """The statement of the vector index's filtered scan (run with ``_INDEX_ONLY``)."""
    return (
        f"SELECT id FROM memories_memory WHERE {base} "
        f"ORDER BY embedding <=> %(vector)s::vector LIMIT {int(count)}"
    )


def _set(cursor: Any, values: dict[str, str]) -> None:
    """Set these settings for the rest of the transaction, in one statement."""
    cursor.execute(
        "SELECT " + ", ".join(["set_config(%s, %s, true)"] * len(values)),
        [part for item in values.items() for part in item],
    )
