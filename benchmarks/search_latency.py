"""Search latency and HNSW recall of ``memory_search`` on synthetic data, through the service layer.

    python benchmarks/search_latency.py --sizes 10000,100000,1000000 --queries 200

Runs on its own embedded PostgreSQL (``--data-dir``, default ``benchmarks/out/data``), never on
``DATABASE_URL`` or the developer's ``MM_DATA_DIR``. For each size × layout it empties the
memory tables, creates the workspaces and agents with ``agent_create``, loads the rows with a
binary COPY (indexes dropped, rebuilt afterwards), then times ``memory_search``:

* excl. embedding: a given query vector (near a stored cluster) and query text;
* incl. embedding: the query text only, embedded by the real local embedder;
* exact: as excl. embedding with ``exact=True``; recall@10 compares the two top-10 lists.

Vectors are synthetic: unit vectors around ``CENTROIDS`` random centroids (embedding a million
real texts is out of reach here). Texts are 8-24 pseudo-words drawn from a Zipf distribution
over ``VOCABULARY`` words, so full-text search sees both common and rare words. The distribution
starts at rank ``STOPWORD_RANKS + 1``: the most frequent words of English are stop words, which
PostgreSQL's ``english`` configuration drops from the index and the query.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django

DIMENSIONS = 384
CHUNK_ROWS = 50_000
CENTROIDS = 1_000
NOISE = 0.05  # per-dimension σ: cos(vector, its centroid) ≈ 0.71
VOCABULARY = 5_000
ZIPF_EXPONENT = 1.0
STOPWORD_RANKS = 100
SPREAD_WORKSPACES = 100
TWO_YEARS_S = 2 * 365 * 86_400
#: Indexes dropped before a bulk load and rebuilt after it (the migrations' own definitions).
INDEXES = ("memory_embedding_hnsw", "memory_words_metadata")
#: Columns COPY fills per row, then columns with one value for every row ('' = blank default).
VARYING = "mem_id workspace_id scope_id text source content_hash significance created_at updated_at"
VARYING += " embedding"
CONSTANT: dict[str, object] = {"category": "fact", "memory_type": "semantic", "pinned": False}
CONSTANT |= {"idempotency_key": ""}
CONSTANT |= {"status": "active", "session": "", "thread": ""}
CONSTANT |= {"embedding_model": "all-MiniLM-L6-v2-onnx-int8"}  # embeddings.LOCAL_MODEL_NAME
CONSTANT |= {f"{dimension}_origin": "" for dimension in "stare"}
COLUMNS = (*VARYING.split(), *CONSTANT, "metadata")
KNOBS = "MM_SEARCH_CANDIDATES MM_SEARCH_GATE_K MM_HNSW_EF_SEARCH MM_SEARCH_KEYWORD_SCAN_MAX"
KNOBS += " MM_SEARCH_PREPARED"


class Corpus:
    """The synthetic vocabulary and vector clusters (fixed by the seed)."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
        words: set[str] = set()
        while len(words) < VOCABULARY:
            words.add("".join(rng.choice(syllables, size=int(rng.integers(2, 5)))))
        self.vocabulary = sorted(words)
        rng.shuffle(self.vocabulary)  # rank 1 (the most common word) is a random word
        ranks = np.arange(STOPWORD_RANKS + 1, STOPWORD_RANKS + VOCABULARY + 1)
        weights = 1.0 / ranks**ZIPF_EXPONENT
        self.word_p = weights / weights.sum()
        centroids = rng.standard_normal((CENTROIDS, DIMENSIONS), dtype=np.float32)
        self.centroids = centroids / np.linalg.norm(centroids, axis=1, keepdims=True)

    def vectors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` float32 unit vectors, each a random centroid plus gaussian noise."""
        vectors = rng.standard_normal((n, DIMENSIONS), dtype=np.float32)
        vectors *= np.float32(NOISE)
        vectors += self.centroids[rng.integers(0, CENTROIDS, n)]
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors

    def texts(self, rng: np.random.Generator, n: int, shortest: int, longest: int) -> list[str]:
        lengths = rng.integers(shortest, longest + 1, n)
        words = rng.choice(VOCABULARY, size=int(lengths.sum()), p=self.word_p)
        chunks = np.split(words, np.cumsum(lengths)[:-1])
        return [" ".join(self.vocabulary[w] for w in chunk) for chunk in chunks]


@dataclass
class Query:
    agent: Any  # memories.models.Agent
    text: str
    vector: np.ndarray


def mem_id(n: int, key: int) -> str:
    """16 hex chars, random-looking and unique: an odd multiplier and an xor are bijections."""
    return f"{((n * 0x9E3779B97F4A7C15) ^ key) & 0xFFFF_FFFF_FFFF_FFFF:016x}"


def copy_types(raw: Any, columns: tuple[str, ...] = COLUMNS) -> list[str]:
    """Database types of ``columns``; fails if a NOT NULL column without default is missing."""
    rows = raw.execute(
        "SELECT column_name, udt_name, is_nullable = 'NO' AND column_default IS NULL "
        "AND is_generated = 'NEVER' AND is_identity = 'NO' FROM information_schema.columns "
        "WHERE table_name = 'memories_memory'"
    ).fetchall()
    missing = {name for name, _, required in rows if required} - set(columns)
    if missing:
        raise SystemExit(f"memories_memory has NOT NULL columns not filled: {sorted(missing)}")
    types = {name: udt for name, udt, _ in rows}
    return [types[column] for column in columns]


def reset(workspaces: int) -> tuple[list[Any], dict[str, str]]:
    """Empty the memory tables, drop the big indexes (returning their DDL), create one agent
    per workspace."""
    from django.core.management import call_command
    from django.db import connection

    from memories.indexing import workspace_indexes_sync
    from memories.services import agent_create

    query = "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)"
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
        cursor.execute(query, [list(INDEXES)])
        ddl = dict(cursor.fetchall())
    if set(ddl) != set(INDEXES):  # an interrupted run dropped them: rebuild the schema
        call_command("migrate", "memories", "zero", verbosity=0)
        call_command("migrate", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute(query, [list(INDEXES)])
            ddl = dict(cursor.fetchall())
    with connection.cursor() as cursor:
        for name in INDEXES:
            cursor.execute(f"DROP INDEX {name}")
    workspace_indexes_sync()  # the table is empty: drops every per-workspace index
    return [
        agent_create(workspace_slug=f"bench-{k:03d}", name="bench")[0] for k in range(workspaces)
    ], ddl


def load(
    corpus: Corpus,
    rng: np.random.Generator,
    size: int,
    agents: list[Any],
    metadata: Any = None,
) -> float:
    """Binary COPY of ``size`` rows, ``CHUNK_ROWS`` at a time; returns seconds. ``metadata``
    (``(rng, n) -> n dicts``) gives the rows' metadata; without it, every row's is empty."""
    from django.db import connection
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb

    from memories.services import content_hash

    connection.ensure_connection()
    raw = connection.connection
    register_vector(raw)
    types = copy_types(raw)
    owners = [(a.workspace_id, a.private_scope_id, a.name) for a in agents]
    key, now, tail = int(rng.integers(0, 2**63)), datetime.now(UTC), tuple(CONSTANT.values())
    sql = f"COPY memories_memory ({', '.join(COLUMNS)}) FROM STDIN (FORMAT BINARY)"
    started = time.perf_counter()
    for first in range(0, size, CHUNK_ROWS):
        n = min(CHUNK_ROWS, size - first)
        vectors, texts = corpus.vectors(rng, n), corpus.texts(rng, n, 8, 24)
        owner = rng.integers(0, len(owners), n).tolist()
        significance = rng.uniform(0.3, 1.0, n).tolist()
        ages = rng.uniform(0, TWO_YEARS_S, n).tolist()
        given = metadata(rng, n) if metadata is not None else [{}] * n
        with raw.cursor() as cursor, cursor.copy(sql) as copy:
            copy.set_types(types)
            for i in range(n):
                workspace_id, scope_id, source = owners[owner[i]]
                created = now - timedelta(seconds=ages[i])
                digest = content_hash(scope_id=scope_id, source=source, text=texts[i])
                head = (mem_id(first + i, key), workspace_id, scope_id, texts[i], source, digest)
                copy.write_row(
                    (*head, significance[i], created, created, vectors[i], *tail, Jsonb(given[i]))
                )
        print(f"  loaded {first + n:,}/{size:,} rows", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    connection.close()  # searches run on a fresh connection, without the COPY's adapters
    return seconds


def loaded_agents(size: int, workspaces: int) -> list[Any]:
    """The agents of a previous run's data if it has this size and layout (for --reuse)."""
    from memories.models import Agent, Memory

    agents = list(Agent.objects.select_related("workspace", "private_scope"))
    if len(agents) == workspaces and Memory.objects.count() == size:
        return agents
    return []


def build_indexes(ddl: dict[str, str], ef_construction: int) -> dict[str, float]:
    """Rebuild the dropped indexes, the vector ones with this ``ef_construction``."""
    from django.db import connection

    from memories import indexing, value_indexes
    from memories.indexing import workspace_indexes_sync

    def built_with(sql: str) -> str:
        return re.sub(r"ef_construction\s*=\s*'?\d+'?", f"ef_construction = {ef_construction}", sql)

    # The per-workspace and per-value indexes' too.
    indexing.WORKSPACE_INDEXES["memory_hnsw_ws_"] = built_with(value_indexes.PARTIAL_HNSW)
    value_indexes.PARTIAL_HNSW = built_with(value_indexes.PARTIAL_HNSW)
    ddl = {name: built_with(sql) for name, sql in ddl.items()}
    seconds: dict[str, float] = {}
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '4GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        for name, statement in [*ddl.items(), ("vacuum_analyze", "VACUUM ANALYZE memories_memory")]:
            started = time.perf_counter()
            cursor.execute(statement)
            seconds[name] = time.perf_counter() - started
    started = time.perf_counter()
    created = workspace_indexes_sync().created
    seconds[f"{len(created)} workspace indexes"] = time.perf_counter() - started
    connection.close()
    return seconds


def explain(query: Query) -> None:
    """EXPLAIN ANALYZE the hand-written SQL of one ``memory_search`` call (with its SETs, if
    it asked for more candidates than the connection's ef_search)."""
    from django.db import connection, transaction

    from memories.operations import memory_search
    from memories.selectors.reader import Reader

    statements: list[tuple[str, Any]] = []

    def capture(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        memory_search(
            Reader.of_agent(query.agent), query=query.text, query_vector=query.vector, limit=10
        )
    with transaction.atomic(), connection.cursor() as cursor:
        for sql, params in statements:
            if "set_config" in sql:  # the search's own settings, for the plan below
                cursor.execute(sql, params)
            elif '"memories_' not in sql:  # not the ORM's queries
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                plan = [re.sub(r"'\[[^]]{60,}\]'", "'[…]'", row[0]) for row in cursor.fetchall()]
                print(f"  -- {' '.join(sql.split())[:150]}", *plan, sep="\n    ", file=sys.stderr)


def breakdown(queries: list[Query]) -> None:
    """EXPLAIN ANALYZE the search statement of each query (right after the search itself ran)
    and print percentiles of where its time goes."""
    from django.db import connection

    from memories.operations import memory_search
    from memories.selectors.reader import Reader

    def actual_ms(plan: str, node: str) -> float:
        line = next((row for row in plan.splitlines() if node in row), "")
        found = re.search(r"actual time=[\d.]+\.\.([\d.]+)", line)
        return float(found.group(1)) if found else 0.0

    figures: dict[str, list[float]] = {}
    statements: list[tuple[str, Any]] = []

    def capture(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    for query in queries:
        statements.clear()
        with connection.execute_wrapper(capture):
            memory_search(Reader.of_agent(query.agent), query=query.text, query_vector=query.vector)
        search_sql = next(s for s in statements if "by_vector AS" in s[0])
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE) " + search_sql[0], search_sql[1])
            plan = "\n".join(row[0] for row in cursor.fetchall())
        gin = re.search(
            r"Bitmap Index Scan on memory_words_metadata.*?actual time=\S+ rows=([\d.]+)", plan
        )
        for name, value in {
            "planning": float(re.search(r"Planning Time: ([\d.]+)", plan).group(1)),
            "execution": float(re.search(r"Execution Time: ([\d.]+)", plan).group(1)),
            "vector candidates": actual_ms(plan, "Subquery Scan on by_vector"),
            "keyword candidates": actual_ms(plan, "Subquery Scan on by_keyword"),
            "GIN matches (rows)": float(gin.group(1)) if gin else 0.0,
        }.items():
            figures.setdefault(name, []).append(value)
    print(f"  search statement over {len(queries)} queries (EXPLAIN ANALYZE; ms unless rows):")
    for name, values in figures.items():
        p50, p95 = np.percentile(values, [50, 95])
        print(f"    {name:<20} p50 {p50:8.1f}  p95 {p95:8.1f}  max {max(values):8.1f}")


def prewarm() -> float:
    """Read the memory table and its TOAST table once, so that their pages are in shared buffers
    as on a server that has run for a while (pg_prewarm is not in the embedded build); the
    indexes are warmed by the warm-up searches. Returns seconds."""
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = %s::regclass",
            ["memories_memory"],
        )
        (toast,) = cursor.fetchone()
        # Aggregates over a column, so that the rows themselves are read (count(*) would be
        # answered from a small index and the visibility map).
        cursor.execute("SELECT sum(length(text)) FROM memories_memory")
        cursor.execute(f"SELECT sum(length(chunk_data)) FROM {toast}")
    return time.perf_counter() - started


def measure(queries: list[Query], warmup: list[Query], exact_queries: int) -> dict[str, float]:
    from memories.operations import memory_search
    from memories.selectors.reader import Reader

    def run(q: Query, vector: bool, exact: bool = False) -> tuple[float, set[int]]:
        started = time.perf_counter()
        given = q.vector if vector else None
        hits = memory_search(
            Reader.of_agent(q.agent), query=q.text, query_vector=given, exact=exact, limit=10
        )
        return (time.perf_counter() - started) * 1000, {hit.memory.pk for hit in hits}

    for q in warmup:
        run(q, True)
    for q in warmup[:20]:  # the embedder's own warm-up
        run(q, False)
    for q in warmup[:5]:
        run(q, True, exact=True)
    # Each query with and without its embedding back to back, so both see the same cache.
    approximate, embedded = [], []
    for q in queries:
        approximate.append(run(q, True))
        embedded.append(run(q, False)[0])
    exact = [run(q, True, exact=True) for q in queries[:exact_queries]]
    recalls = [len(a & e) / len(e) for (_, a), (_, e) in zip(approximate, exact, strict=False) if e]
    ms = [t for t, _ in approximate]
    return {
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "p50_embedding_ms": float(np.percentile(embedded, 50)),
        "p95_embedding_ms": float(np.percentile(embedded, 95)),
        "recall_at_10": float(np.mean(recalls)) if recalls else float("nan"),
        "exact_p50_ms": float(np.percentile([t for t, _ in exact], 50)),
    }


def run_case(corpus: Corpus, args: argparse.Namespace, size: int, layout: str) -> dict[str, Any]:
    rng = np.random.default_rng([args.seed, size, 0 if layout == "one" else 1])
    workspaces = 1 if layout == "one" else SPREAD_WORKSPACES
    agents = loaded_agents(size, workspaces) if args.reuse else []
    if agents:
        load_s, index_s = 0.0, {}
        rng = np.random.default_rng([args.seed, size, 2])  # queries only: data already there
        print(f"{size:,} × {layout}: reusing the data already loaded", flush=True)
    else:
        agents, ddl = reset(workspaces)
        load_s = load(corpus, rng, size, agents)
        index_s = build_indexes(ddl, args.ef_construction)
        timings = ", ".join(f"{name} {s:.1f} s" for name, s in index_s.items())
        print(f"{size:,} × {layout}: load {load_s:.1f} s, {timings}", flush=True)

    def query() -> Query:
        agent = agents[int(rng.integers(len(agents)))]
        return Query(agent, corpus.texts(rng, 1, 3, 6)[0], corpus.vectors(rng, 1)[0])

    warmup = [query() for _ in range(args.warmup)]
    queries = [query() for _ in range(args.queries)]
    if args.explain:
        explain(queries[0])
    print(f"  prewarm: table and TOAST read in {prewarm():.1f} s", flush=True)
    figures = measure(queries, warmup, args.exact_queries)
    figures |= plan_cache()
    print(
        f"  prepared statements on the connection: {figures['prepared_statements']}, "
        f"their plans {figures['plan_cache_mb']:.1f} MB of server memory",
        flush=True,
    )
    if args.breakdown:
        breakdown(queries[: args.breakdown])
    return {"memories": size, "layout": layout, "load_s": load_s, "index_s": index_s, **figures}


def plan_cache() -> dict[str, float]:
    """How many statements are prepared on the benchmark's connection, and the server memory
    their plans hold (see ``memories.prepared``)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM pg_prepared_statements), "
            "(SELECT COALESCE(sum(total_bytes), 0) FROM pg_backend_memory_contexts "
            "WHERE name IN ('CachedPlan', 'CachedPlanSource', 'CachedPlanQuery'))"
        )
        statements, plan_bytes = cursor.fetchone()
    return {"prepared_statements": int(statements), "plan_cache_mb": float(plan_bytes) / 2**20}


def hnsw_parameters() -> str:
    """The vector index's build parameters as the database has them (with --reuse, those of
    the run that built it)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [INDEXES[0]])
        found = cursor.fetchone()
    if found is None:
        return "missing"
    return ", ".join(f"{k} {v}" for k, v in re.findall(r"(m|ef_construction)='?(\d+)", found[0]))


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| memories | layout | p50 ms (excl. embedding) | p95 ms (excl.) | "
        "p50 ms (incl. embedding) | p95 ms (incl.) | recall@10 vs exact | exact p50 ms |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['memories']:,} | {r['layout']} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
        f"{r['p50_embedding_ms']:.1f} | {r['p95_embedding_ms']:.1f} | "
        f"{r['recall_at_10']:.3f} | {r['exact_p50_ms']:.1f} |"
        for r in results
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--layouts", default="one,spread", help="one or 100 workspaces")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--warmup",
        type=int,
        default=2000,
        help="queries run first, unmeasured (a server's "
        "steady state has its hot index and table pages in memory)",
    )
    parser.add_argument(
        "--exact-queries",
        type=int,
        default=100,
        help="queries also run exactly, for recall (an exact scan of 1M is slow)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "data")
    parser.add_argument(
        "--reuse", action="store_true", help="keep data of the same size and layout if loaded"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--breakdown", type=int, default=0, help="EXPLAIN ANALYZE this many queries' statements"
    )
    parser.add_argument("--explain", action="store_true", help="EXPLAIN one search per case")
    parser.add_argument(
        "--ef-construction",
        type=int,
        help="build the HNSW indexes with this ef_construction instead of the engine's own",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.queries, args.warmup, args.exact_queries = "1000", 5, 5, 5
        args.data_dir = ROOT / "benchmarks/out/smoke-latency"
    sizes = [int(s) for s in args.sizes.split(",")]
    layouts = args.layouts.split(",")
    if set(layouts) - {"one", "spread"} or args.queries < 1 or min(sizes) < 1:
        parser.error("layouts are one and spread; --queries and --sizes must be positive")

    setup_django(args.data_dir)  # never the developer's database
    from django.conf import settings

    from memories.models import HNSW_EF_CONSTRUCTION

    args.ef_construction = args.ef_construction or HNSW_EF_CONSTRUCTION
    corpus = Corpus(args.seed)
    results = [run_case(corpus, args, size, layout) for size in sizes for layout in layouts]
    info = machine()
    knobs = {name: getattr(settings, name) for name in KNOBS.split()}
    knobs["HNSW index"] = hnsw_parameters()
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(info))
    print("Settings: " + ", ".join(f"{k}={v}" for k, v in knobs.items()) + ".\n")
    print(table(results))
    if args.json:
        payload = {"command": command, "machine": info, "settings": knobs, "results": results}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
