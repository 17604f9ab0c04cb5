"""A search with a metadata filter against the same search without one, on synthetic data.

    python benchmarks/metadata_filter.py --size 1000000 --queries 200

Loads ``--size`` memories as ``benchmarks/search_latency.py`` does (binary COPY into its own
embedded PostgreSQL, indexes rebuilt after), each with metadata like a team's: a ``customer``
among ``CUSTOMERS`` (Zipf-distributed, so a few customers have many memories and most have
few), ``seats`` (1-500), a ``tier`` among four, a ``renewal`` date (ISO-8601 text) and, on one
memory in five, ``churn_risk``. Then, for each filter of ``FILTERS`` (from a few memories to
most of them), the same queries run with the filter and without it, in turn, through
``memory_search`` (after a pass of other queries over every filter, as on a server that has
been answering them): p50 and p95 of each, their ratio (the target: p95 within 2x of the same
search unfiltered), how many of the memories the filter keeps, and the filtered search's
recall@10 against the exact search with the same filter (``exact=True``: every memory the
filter keeps compared).

With ``--index-keys customer`` (the default), ``customer`` is a key named in
``MM_METADATA_INDEX_KEYS`` and each customer common enough has its own vector index
(``memories.value_indexes``, built by the index sync after the load, timed); the table says
which filters one serves. ``--index-keys ""`` measures without them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django

CUSTOMERS = 2_000
TIERS = ("bronze", "silver", "gold", "platinum")
#: Each filter, by name: what it keeps, from a rare customer to most memories.
FILTERS: dict[str, Any] = {
    "customer (a common one)": {"customer": "c00001"},
    "customer (a rare one)": {"customer": "c01500"},
    "customer (a small one)": {"customer": "c00035"},
    "customer (a middling one)": {"customer": "c00011"},
    "customer (a large one)": {"customer": "c00007"},
    "tier in (2 of 4)": {"tier": {"in": ["gold", "platinum"]}},
    "seats >= 400": {"seats": {"gte": 400}},
    "renewal in 2027 Q1": {"renewal": {"gte": "2027-01-01", "lt": "2027-04-01"}},
    "churn_risk exists": {"churn_risk": {"exists": True}},
    "customer and seats": {"customer": "c00002", "seats": {"gte": 100}},
    "or of two customers": {"or": [{"customer": "c00003"}, {"customer": "c00004"}]},
}


def metadata_rows(rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
    """``n`` metadata objects (see the module docstring)."""
    customers = np.minimum(rng.zipf(1.3, n), CUSTOMERS) - 1
    seats = rng.integers(1, 501, n)
    tiers = rng.integers(0, len(TIERS), n)
    days = rng.integers(0, 730, n)
    risky = rng.random(n) < 0.2
    rows = []
    for i in range(n):
        month, day = 1 + int(days[i]) % 365 // 31 % 12, 1 + int(days[i]) % 28
        row: dict[str, Any] = {
            "customer": f"c{int(customers[i]):05d}",
            "seats": int(seats[i]),
            "tier": TIERS[int(tiers[i])],
            "renewal": f"{2026 + int(days[i]) // 365}-{month:02d}-{day:02d}",
        }
        if risky[i]:
            row["churn_risk"] = "high" if rng.random() < 0.5 else "low"
        rows.append(row)
    return rows


def kept(filters: dict[str, Any]) -> dict[str, int]:
    """How many memories each filter keeps (one count each, on the metadata index)."""
    from django.db import connection

    from memories import metadata_filter

    counts = {}
    for name, given in filters.items():
        condition, params = metadata_filter.positional(metadata_filter.parse(given), "metadata")
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM memories_memory WHERE {condition}", params)
            counts[name] = int(cursor.fetchone()[0])
    return counts


def measure(
    agent: Any, queries: list[Any], warm: list[Any], filters: dict[str, Any], exact: int
) -> list[dict]:
    """Each filter's timings beside the same searches unfiltered, taken in turn query by query
    (so both see the same cache), after a pass of the ``warm`` queries (others than those
    timed) over every filter and none, as on a server that has been answering them."""
    from memories.operations import memory_search
    from memories.selectors.reader import Reader

    reader = Reader.of_agent(agent)

    def run(q: Any, metadata: Any, exact: bool = False) -> tuple[float, list[int]]:
        started = time.perf_counter()
        hits = memory_search(
            reader,
            query=q.text,
            query_vector=q.vector,
            limit=10,
            exact=exact,
            **({"metadata": metadata} if metadata is not None else {}),
        )
        return (time.perf_counter() - started) * 1000, [hit.memory.pk for hit in hits]

    for given in [None, *filters.values()]:
        for q in warm:
            run(q, given)
    rows = []
    for name, given in filters.items():
        plain, timed = [], []
        for q in queries:
            plain.append(run(q, None)[0])
            timed.append(run(q, given))
        recalls = []
        for q, (_, found) in zip(queries[:exact], timed, strict=False):
            truth = set(run(q, given, exact=True)[1])
            if truth:
                recalls.append(len(truth & set(found)) / len(truth))
        ms = [t for t, _ in timed]
        rows.append(
            {
                "filter": name,
                "p50_ms": float(np.percentile(ms, 50)),
                "p95_ms": float(np.percentile(ms, 95)),
                "plain_p50_ms": float(np.percentile(plain, 50)),
                "plain_p95_ms": float(np.percentile(plain, 95)),
                "hits": float(np.mean([len(found) for _, found in timed])),
                "recall_at_10": float(np.mean(recalls)) if recalls else float("nan"),
            }
        )
    return rows


def line_costs(queries: list[Any], few: dict[str, Any], many: dict[str, Any]) -> dict:
    """What ``memories.search.metadata``'s line weighs, measured on this data: an exact
    comparison's cost per memory the filter ``few`` keeps (its kept memories read and the
    nearest 50 taken), and the vector index's filtered scan's cost per tuple it reads for the
    filter ``many`` (EXPLAIN ANALYZE: the rows it returned and those its filter removed); the
    medians over ``queries``."""
    from django.db import connection, transaction

    from memories import metadata_filter
    from memories.search import metadata as chosen

    def condition(given: dict[str, Any], params: dict[str, Any]) -> str:
        return metadata_filter.named(metadata_filter.parse(given), "metadata", params)

    per_memory, per_tuple = [], []
    for q in queries:
        params = {"vector": "[" + ",".join(f"{x:.7g}" for x in q.vector.tolist()) + "]"}
        few_sql, many_sql = condition(few, params), condition(many, params)
        with transaction.atomic(), connection.cursor() as cursor:
            started = time.perf_counter()  # the engine's own exact read, its line the highest
            kept, _ = chosen._exact(cursor, few_sql, params, 50, chosen.EXACT_LINE_MAX)
            if kept:  # none kept (a small --size): nothing to weigh
                per_memory.append((time.perf_counter() - started) * 1e6 / kept)
            chosen._set(cursor, dict(chosen._INDEX_ONLY))
            cursor.execute(
                "EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM memories_memory "
                f"WHERE {many_sql} ORDER BY embedding <=> %(vector)s::vector LIMIT 50",
                params,
            )
            scan = cursor.fetchone()[0][0]["Plan"]["Plans"][0]
            if tuples := scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0):
                per_tuple.append(scan["Actual Total Time"] * 1000 / tuples)
    return {
        "exact_us_per_memory": float(np.median(per_memory)) if per_memory else float("nan"),
        "scan_us_per_tuple": float(np.median(per_tuple)) if per_tuple else float("nan"),
    }


def value_indexed(agent: Any, filters: dict[str, Any]) -> dict[str, bool]:
    """Whether a vector index of a metadata value serves each filter."""
    from django.db import connection

    from memories import metadata_filter
    from memories.value_indexes import indexes_for, usable

    with connection.cursor() as cursor:
        return {
            name: bool(usable(cursor, indexes_for(agent.workspace_id, metadata_filter.parse(f))))
            for name, f in filters.items()
        }


def value_index_sizes() -> dict[str, float]:
    """How many indexes of metadata values there are, the vectors they hold and their bytes,
    beside the table's own vector index's bytes."""
    from django.db import connection

    from memories.value_indexes import PREFIX

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(sum(c.reltuples), 0)::float8, "
            "coalesce(sum(pg_relation_size(c.oid)), 0)::bigint, "
            "pg_relation_size('memory_embedding_hnsw') "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'memories_memory'::regclass AND c.relname LIKE %s",
            [PREFIX.replace("_", r"\_") + "%"],
        )
        count, vectors, size, table_index = cursor.fetchone()
    return {
        "indexes": count,
        "vectors": float(vectors),
        "bytes": size,
        "table_index_bytes": table_index,
    }


def table(
    size: int, rows: list[dict[str, Any]], counts: dict[str, int], indexed: dict[str, bool]
) -> str:
    lines = [
        "| filter | memories kept | value index | p50 ms | p95 ms | p95 unfiltered | p95 ratio | "
        "hits | recall@10 vs exact |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        share = counts[r["filter"]] / size if size else 0.0
        own = "yes" if indexed[r["filter"]] else "no"
        lines.append(
            f"| {r['filter']} | {counts[r['filter']]:,} ({share:.2%}) | {own} | "
            f"{r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['plain_p95_ms']:.1f} | "
            f"{r['p95_ms'] / r['plain_p95_ms']:.2f}x | {r['hits']:.1f} | "
            f"{r['recall_at_10']:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--exact-queries", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "data")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the memories a previous run of this size left in --data-dir, if there",
    )
    parser.add_argument(
        "--index-keys",
        default="customer",
        help="MM_METADATA_INDEX_KEYS for the run, comma-separated (empty: no value indexes)",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.size, args.queries, args.exact_queries = 2000, 5, 3
        args.data_dir = ROOT / "benchmarks/out/smoke-metadata"
    if args.size < 1 or args.queries < 1:
        parser.error("--size and --queries must be positive")
    setup_django(args.data_dir)
    from search_latency import Corpus, Query, build_indexes, load, loaded_agents, reset

    from memories.models import HNSW_EF_CONSTRUCTION

    corpus, rng = Corpus(args.seed), np.random.default_rng([args.seed, args.size])
    agents = loaded_agents(args.size, 1) if args.reuse else []
    if agents:
        print(f"{args.size:,} memories: those of the previous run", file=sys.stderr)
    else:
        agents, ddl = reset(1)
        load_s = load(corpus, rng, args.size, agents, metadata=metadata_rows)
        index_s = build_indexes(ddl, HNSW_EF_CONSTRUCTION)
        print(f"{args.size:,} memories: load {load_s:.1f} s, indexes {index_s}", file=sys.stderr)
    from django.conf import settings

    from memories.indexing import workspace_indexes_sync

    settings.MM_METADATA_INDEX_KEYS = [k.strip() for k in args.index_keys.split(",") if k.strip()]
    started = time.perf_counter()
    made = workspace_indexes_sync().values
    took = time.perf_counter() - started
    print(
        f"value indexes ({args.index_keys or 'none'}): {len(made.created)} built, "
        f"{len(made.kept)} kept, {len(made.dropped)} dropped in {took:.1f} s",
        file=sys.stderr,
    )
    # The queries from a generator of their own: the same whether the memories were loaded now.
    asked, warming = (np.random.default_rng([args.seed, args.size, n]) for n in (1, 2))
    queries, warm = (
        [
            Query(agents[0], corpus.texts(generator, 1, 3, 6)[0], corpus.vectors(generator, 1)[0])
            for _ in range(n)
        ]
        for generator, n in ((asked, args.queries), (warming, min(args.queries, 100)))
    )
    counts, indexed = kept(FILTERS), value_indexed(agents[0], FILTERS)
    rows = measure(agents[0], queries, warm, FILTERS, args.exact_queries)
    costs = line_costs(
        queries[:50], FILTERS["customer (a middling one)"], FILTERS["customer and seats"]
    )
    print(describe(machine()))
    print(f"{args.size:,} memories, {args.queries} queries, limit 10")
    sizes = value_index_sizes()
    print(
        f"MM_METADATA_INDEX_KEYS: {args.index_keys or '(none)'}: {sizes['indexes']} value "
        f"indexes, {sizes['vectors']:,.0f} vectors, {sizes['bytes'] / 2**20:,.0f} MiB (the "
        f"table's vector index: {sizes['table_index_bytes'] / 2**20:,.0f} MiB)"
    )
    print(table(args.size, rows, counts, indexed))
    print(
        f"\nThe line's costs: an exact comparison {costs['exact_us_per_memory']:.2f} µs a "
        f"memory kept; the index's filtered scan {costs['scan_us_per_tuple']:.2f} µs a tuple "
        f"read; ratio {costs['scan_us_per_tuple'] / costs['exact_us_per_memory']:.1f} "
        "(memories.search.metadata.SCAN_COST_RATIO)"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "size": args.size,
                    "index_keys": settings.MM_METADATA_INDEX_KEYS,
                    "kept": counts,
                    "value_index": indexed,
                    "value_index_sizes": sizes,
                    "rows": rows,
                    "line_costs": costs,
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
