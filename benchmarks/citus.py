"""Past one machine: the engine on one PostgreSQL against a Citus cluster, given the same data.

    python benchmarks/citus.py --citus-url URL --single-url URL --size 1000000 --workspaces 100 \\
        --json benchmarks/out/citus-1m.json

``--citus-url``: a Citus coordinator's database with its workers (``scripts/citus-local.sh``);
``--single-url``: a database without Citus, best on a server of the same build and settings
(without it, the benchmark's own embedded PostgreSQL in ``--data-dir``). Each is measured in a
process of its own, one after the other, never at once:

1. the schema migrated (and, on the cluster, distributed by workspace: ``meaning-memory
   distribution``'s statements) and emptied; ``--workspaces`` workspaces with one agent each;
2. load: ``--size`` synthetic memories spread evenly over them by binary COPY (the corpus of
   ``search_latency.py``: vectors around random centroids, Zipf-distributed pseudo-words), the
   big indexes dropped first and built after (HNSW, GIN, each workspace's own HNSW);
3. search: ``--queries`` searches through ``memory_search``, each by a random workspace's agent,
   with the query's vector given and with its text only (the real embedder): p50 and p95; the
   CPU each server's processes spent on them, read from ``/proc`` (the servers are on this
   machine);
4. ingest: ``--writes`` memories through ``memory_remember`` one at a time (the whole write path:
   embedder, recogniser, scorer, links, provenance), round robin over the workspaces, then as
   many through ``memory_remember_bulk`` in batches of 50: memories a second;
5. consolidation: one run of every default phase over one workspace (all its memories new to
   it): seconds, and memories a second;
6. on the cluster, where the shards went: each node's shards, bytes and workspaces.

Then, on paper from those figures and the sizing table's node (``benchmarks/sizes.py``): what N
worker machines would hold and serve. Timings are printed, never asserted. ``--smoke``: 2,000
memories in 4 workspaces, 5 queries and writes; the cluster only if ``--citus-url`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django, write_json

#: The sizing table's node and its figure for the bytes of a memory that searches keep in RAM
#: ("Bytes per memory and the sizing table", BENCHMARKS.md); each an option.
NODE_VCPUS, NODE_RAM_GIB, HOT_SHARE, HOT_BYTES = 16, 128, 0.5, 2_225
WORKERS = (1, 2, 4, 8, 16)
BULK_BATCH = 50


# -- one target, in a process of its own ---------------------------------------------------


def server_cpu_seconds(ports: list[tuple[str, int]]) -> dict[str, float]:
    """CPU seconds each server has spent so far, with every process it ever started (its
    postmaster's own and reaped children's times, plus its live children's), from ``/proc``."""
    import psycopg
    from django.db import connection

    tick = os.sysconf("SC_CLK_TCK")

    def times(pid: int) -> list[int]:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return [int(v) for v in fields[11:15]]  # utime stime cutime cstime

    def tree(postmaster: int) -> float:
        total = sum(times(postmaster))
        for child in Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split():
            try:
                utime, stime, _, _ = times(int(child))
            except FileNotFoundError:  # gone since: counted in the postmaster's cutime
                continue
            total += utime + stime
        return total / tick

    def postmaster_of(backend: int) -> int:
        return int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])

    found: dict[str, float] = {}
    for name, port in ports:
        if port == 0:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                backend = cursor.fetchone()[0]
        else:
            params = connection.get_connection_params()
            params = {k: params[k] for k in ("dbname", "user", "password") if params.get(k)}
            with psycopg.connect(host="127.0.0.1", port=port, **params) as other:
                backend = other.execute("SELECT pg_backend_pid()").fetchone()[0]
        try:
            found[name] = tree(postmaster_of(backend))
        except (FileNotFoundError, PermissionError):
            return {}  # a server on another machine: no CPU figures
    return found


def nodes(cluster: bool) -> list[tuple[str, int]]:
    """(name, port) of each server: the one the connection is to (port 0), then the workers."""
    from django.db import connection

    if not cluster:
        return [("single node", 0)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 ORDER BY nodeport"
        )
        workers = [(f"worker {host}:{port}", port) for host, port in cursor.fetchall()]
    return [("coordinator", 0), *workers]


def reset(workspaces: int) -> tuple[list[Any], dict[str, str]]:
    """The memory tables emptied and their big indexes dropped (their DDL returned), one agent
    in each of ``workspaces`` new workspaces."""
    from django.db import connection
    from search_latency import INDEXES

    from memories.indexing import workspace_indexes_sync
    from memories.services import agent_create

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [list(INDEXES)]
        )
        ddl = dict(cursor.fetchall())
        if set(ddl) != set(INDEXES):
            raise SystemExit(f"indexes missing (an interrupted run?): {set(INDEXES) - set(ddl)}")
        for name in INDEXES:
            cursor.execute(f"DROP INDEX {name}")
    workspace_indexes_sync()  # the table is empty: drops every per-workspace index
    agents = [
        agent_create(workspace_slug=f"bench-{k:03d}", name="bench")[0] for k in range(workspaces)
    ]
    return agents, ddl


def reused(size: int, workspaces: int) -> list[Any]:
    """The agents of a previous run's data with this many workspaces and at least ``size``
    memories (its writes added some), for ``--reuse``."""
    from memories.models import Agent, Memory

    agents = list(Agent.objects.select_related("workspace", "private_scope").order_by("pk"))
    if len(agents) == workspaces and Memory.objects.count() >= size:
        return agents
    return []


def searches(args: argparse.Namespace, agents: list[Any], ports: list) -> dict[str, Any]:
    from search_latency import Corpus, Query, measure, prewarm

    from memories.operations import memory_search
    from memories.selectors.reader import Reader

    corpus, rng = Corpus(args.seed), np.random.default_rng([args.seed, 2])

    def query() -> Query:
        agent = agents[int(rng.integers(len(agents)))]
        return Query(agent, corpus.texts(rng, 1, 3, 6)[0], corpus.vectors(rng, 1)[0])

    warmup = [query() for _ in range(args.warmup)]
    queries = [query() for _ in range(args.queries)]
    prewarm()
    figures = measure(queries, warmup, args.exact_queries)
    # The servers' CPU for the same searches once more, the vector given (the embedder's runs
    # in this process, not in a server).
    before = server_cpu_seconds(ports)
    for q in queries:
        memory_search(Reader.of_agent(q.agent), query=q.text, query_vector=q.vector, limit=10)
    after = server_cpu_seconds(ports)
    figures["cpu_ms_per_search"] = {
        name: 1000 * (after[name] - before[name]) / len(queries) for name in after
    }
    return figures


def ingest(args: argparse.Namespace, agents: list[Any]) -> dict[str, float]:
    from search_latency import Corpus

    from memories.models import Memory
    from memories.operations import memory_remember, memory_remember_bulk

    # Texts no past run wrote (with --reuse): a writer's text written again is its old memory,
    # found, not stored, and would time nothing.
    rng = np.random.default_rng([args.seed, 3, Memory.objects.count()])
    corpus = Corpus(args.seed)
    texts = corpus.texts(rng, 2 * args.writes, 8, 24)
    memory_remember(agent=agents[0], text="the embedder's warm-up " + texts[0])
    started = time.perf_counter()
    for n, text in enumerate(texts[: args.writes]):
        memory_remember(agent=agents[n % len(agents)], text=text)
    one = time.perf_counter() - started
    bulk = texts[args.writes :]
    started = time.perf_counter()
    for n, first in enumerate(range(0, len(bulk), BULK_BATCH)):
        items = [{"text": text} for text in bulk[first : first + BULK_BATCH]]
        memory_remember_bulk(agent=agents[n % len(agents)], items=items)
    batched = time.perf_counter() - started
    return {"remember_per_s": args.writes / one, "bulk_per_s": len(bulk) / batched}


def consolidation(agents: list[Any]) -> dict[str, Any]:
    """One run of a workspace no run has consolidated yet (with ``--reuse``, the last one a
    past run did not take)."""
    from consolidation.models import ConsolidationRun
    from consolidation.services import consolidation_execute, consolidation_start
    from memories.models import Memory

    done = set(ConsolidationRun.objects.values_list("workspace_id", flat=True))
    fresh = [agent for agent in agents if agent.workspace_id not in done]
    if not fresh:
        raise SystemExit("every workspace has been consolidated: load the data again")
    agent = fresh[-1]
    memories = Memory.objects.filter(workspace_id=agent.workspace_id).count()
    started = time.perf_counter()
    run = consolidation_execute(consolidation_start(workspace=agent.workspace, trigger="command"))
    seconds = time.perf_counter() - started
    if run.status != run.Status.DONE:
        raise SystemExit(f"consolidation run {run.run_id} {run.status}: {run.error}")
    return {
        "memories": memories,
        "seconds": seconds,
        "per_s": memories / seconds,
        "phases_s": run.timings,
    }


def shards() -> list[dict[str, Any]]:
    """Each node's shards of the distributed tables, their bytes and the workspaces whose
    memories it holds."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nodename || ':' || nodeport, count(*) FILTER (WHERE citus_table_type = "
            "'distributed'), count(*) FILTER (WHERE citus_table_type = 'reference'), "
            "sum(shard_size) FROM citus_shards GROUP BY 1 ORDER BY 1"
        )
        placed = cursor.fetchall()
        cursor.execute(
            "SELECT s.nodename || ':' || s.nodeport, count(*) FROM memories_workspace w "
            "JOIN citus_shards s ON s.shardid = get_shard_id_for_distribution_column("
            "'memories_memory', w.id) GROUP BY 1"
        )
        workspaces = dict(cursor.fetchall())
    return [
        {
            "node": node,
            "distributed_shards": spread,
            "reference_shards": reference,
            "bytes": int(size),
            "workspaces": workspaces.get(node, 0),
        }
        for node, spread, reference, size in placed
    ]


def target(args: argparse.Namespace) -> None:
    """Measure the database ``--url`` names; the figures as JSON on ``--out``."""
    setup_django(args.data_dir, args.url)
    from django.db import connection

    from meaning_memory.distribution import distribute
    from memories.models import HNSW_EF_CONSTRUCTION

    cluster = args.role == "cluster"
    if cluster:
        with connection.cursor() as cursor:
            distribute(cursor)
    figures: dict[str, Any] = {"role": args.role, "machine": machine()}
    agents = reused(args.size, args.workspaces) if args.reuse else []
    if agents:
        print(f"{args.role}: reusing the data already loaded", file=sys.stderr, flush=True)
    else:
        from search_latency import Corpus, build_indexes, load

        agents, ddl = reset(args.workspaces)
        rng = np.random.default_rng([args.seed, 1])
        figures["load_s"] = load(Corpus(args.seed), rng, args.size, agents)
        figures["index_s"] = build_indexes(ddl, HNSW_EF_CONSTRUCTION)
        print(f"{args.role}: loaded and indexed", file=sys.stderr, flush=True)
    ports = nodes(cluster)
    figures["search"] = searches(args, agents, ports)
    figures["ingest"] = ingest(args, agents)
    figures["consolidation"] = consolidation(agents)
    figures["shards"] = shards() if cluster else []
    args.out.write_text(json.dumps(figures, default=str))


# -- the comparison -------------------------------------------------------------------------


def run_target(args: argparse.Namespace, role: str, url: str | None) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, __file__, "--role", role, "--out", out.name]
        command += ["--url", url] if url else []
        for option in ("size", "workspaces", "queries", "warmup", "exact_queries", "writes"):
            command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
        command += ["--seed", str(args.seed), "--data-dir", str(args.data_dir)]
        command += ["--reuse"] if args.reuse else []
        subprocess.run(command, check=True)
        return json.loads(Path(out.name).read_text())


def projection(args: argparse.Namespace, cluster: dict[str, Any]) -> list[dict[str, Any]]:
    """What N workers of the sizing table's node would hold (their RAM for the indexes a search
    reads) and serve (their CPUs at the CPU a search took on this cluster's workers; the
    coordinator's CPU for it too, as one coordinator of the same node)."""
    cpu = cluster["search"]["cpu_ms_per_search"]
    worker_ms = sum(ms for name, ms in cpu.items() if name.startswith("worker"))
    coordinator_ms = cpu.get("coordinator", 0.0)
    hot = args.node_ram_gib * 2**30 * args.hot_share
    rows = []
    for n in WORKERS:
        workers_cap = n * args.node_vcpus * 1000 / worker_ms if worker_ms else float("inf")
        coordinator_cap = args.node_vcpus * 1000 / coordinator_ms if coordinator_ms else 0.0
        rows.append(
            {
                "workers": n,
                "memories": int(n * hot / args.hot_bytes),
                "searches_per_s_workers": workers_cap,
                "searches_per_s_coordinator": coordinator_cap,
                "searches_per_s": min(workers_cap, coordinator_cap),
            }
        )
    return rows


def report(args: argparse.Namespace, results: dict[str, dict[str, Any]]) -> str:
    def row(label: str, value: Any) -> str:
        return f"| {label} | " + " | ".join(value(r) for r in results.values()) + " |"

    def ms(r: dict, key: str) -> str:
        return f"{r['search'][key]:.1f}"

    lines = [
        "| | " + " | ".join(results) + " |",
        "|---|" + "---:|" * len(results),
        row("load by COPY, s", lambda r: f"{r['load_s']:.1f}" if "load_s" in r else "reused"),
        row(
            "indexes built, s",
            lambda r: f"{sum(r['index_s'].values()):.1f}" if "index_s" in r else "reused",
        ),
        row("search p50 ms (vector given)", lambda r: ms(r, "p50_ms")),
        row("search p95 ms (vector given)", lambda r: ms(r, "p95_ms")),
        row("search p50 ms (text only)", lambda r: ms(r, "p50_embedding_ms")),
        row("search p95 ms (text only)", lambda r: ms(r, "p95_embedding_ms")),
        row("recall@10 against exact", lambda r: f"{r['search']['recall_at_10']:.3f}"),
        row(
            "servers' CPU ms a search (coordinator + workers)",
            lambda r: " + ".join(f"{v:.1f}" for v in r["search"]["cpu_ms_per_search"].values()),
        ),
        row("remember, memories/s", lambda r: f"{r['ingest']['remember_per_s']:.1f}"),
        row("bulk, memories/s", lambda r: f"{r['ingest']['bulk_per_s']:.1f}"),
        row(
            "consolidation of one workspace, s",
            lambda r: f"{r['consolidation']['seconds']:.1f}",
        ),
        row("consolidation, memories/s", lambda r: f"{r['consolidation']['per_s']:.1f}"),
    ]
    for result in results.values():
        if result["shards"]:
            lines += [
                "",
                "| node | distributed shards | reference shards | MB | workspaces |",
                "|---|---:|---:|---:|---:|",
            ]
            lines += [
                f"| {s['node']} | {s['distributed_shards']} | {s['reference_shards']} | "
                f"{s['bytes'] / 2**20:,.0f} | {s['workspaces']} |"
                for s in result["shards"]
            ]
    if "cluster" in results:
        lines += [
            "",
            f"On paper, workers of {args.node_vcpus} vCPUs and {args.node_ram_gib} GiB "
            f"({args.hot_share:.0%} for the indexes a search reads, {args.hot_bytes:,} bytes "
            "a memory), at this cluster's server CPU a search:",
            "",
            "| workers | memories held | searches/s (workers' CPU) | searches/s (one "
            "coordinator's CPU) | searches/s |",
            "|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {p['workers']} | {p['memories']:,} | {p['searches_per_s_workers']:,.0f} | "
            f"{p['searches_per_s_coordinator']:,.0f} | {p['searches_per_s']:,.0f} |"
            for p in projection(args, results["cluster"])
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--citus-url", help="a Citus coordinator's database")
    parser.add_argument("--single-url", help="a database without Citus (default: embedded)")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--workspaces", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--exact-queries", type=int, default=50)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reuse", action="store_true", help="keep data loaded by a past run")
    parser.add_argument("--node-vcpus", type=int, default=NODE_VCPUS)
    parser.add_argument("--node-ram-gib", type=float, default=NODE_RAM_GIB)
    parser.add_argument("--hot-share", type=float, default=HOT_SHARE)
    parser.add_argument("--hot-bytes", type=int, default=HOT_BYTES)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "citus-db")
    parser.add_argument("--role", choices=["single", "cluster"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.role:
        target(args)
        return
    if args.smoke:
        args.size, args.workspaces, args.queries, args.warmup = 2_000, 4, 5, 5
        args.exact_queries, args.writes = 5, 5
        args.data_dir = ROOT / "benchmarks" / "out" / "smoke-citus"
    if min(args.size, args.workspaces, args.queries, args.writes) < 1:
        parser.error("--size, --workspaces, --queries and --writes must be positive")
    if not args.citus_url and not args.smoke:
        parser.error("--citus-url is required (a Citus coordinator's database)")
    results = {"single node": run_target(args, "single", args.single_url)}
    if args.citus_url:
        results["cluster"] = run_target(args, "cluster", args.citus_url)
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(next(iter(results.values()))["machine"]))
    print(f"{args.size:,} memories in {args.workspaces} workspaces; {args.queries} queries.\n")
    print(report(args, results))
    if not args.citus_url:
        print("\nNo cluster (--citus-url not given): the single node only.")
    write_json(args.json, {"command": command, "results": results})


if __name__ == "__main__":
    main()
