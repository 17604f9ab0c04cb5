"""Bytes per memory on disk: the row, its vector (TOAST), the HNSW and full-text indexes and the
others, measured on a loaded table (the numbers ``docs/SCALING.md`` sizes 10M-1B memories from).

    python benchmarks/sizes.py --size 1000000

Loads ``--size`` synthetic memories into one workspace of its own embedded PostgreSQL (the
search latency benchmark's corpus, loader and index build: 8-24 word texts, 384-dimension
vectors, no episode), then reads each relation's size from PostgreSQL after ``VACUUM
ANALYZE``. Memories written by agents add what the loader leaves out: an episode's text and
vector for a memory in a session, and its provenance events and links; those are measured on
``--written`` memories stored through the real write path (``memory_remember_bulk``).

Then a sizing table for 10M, 100M and 1B memories from those bytes and the node and rates given
(``--node-ram-gib`` …; the defaults name the benchmarks they come from). ``--report JSON``
prints the tables of a saved run again, with other node figures, without loading anything.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django
from search_latency import Corpus, build_indexes, load, reset

#: The tables a memory's bytes are in, besides its own row (a written memory's events and links).
RELATED = ("memories_provenanceevent", "memories_link", "memories_memorydegree")


def relation_sizes(tables: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each relation of ``tables`` (heap, TOAST, every index) with its bytes."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.relname, 'table', pg_relation_size(t.oid)
            FROM pg_class t WHERE t.relname = ANY(%(tables)s)
            UNION ALL
            SELECT t.relname, 'TOAST', pg_total_relation_size(t.reltoastrelid)
            FROM pg_class t WHERE t.relname = ANY(%(tables)s) AND t.reltoastrelid <> 0
            UNION ALL
            SELECT t.relname, i.relname, pg_relation_size(i.oid)
            FROM pg_class t JOIN pg_index x ON x.indrelid = t.oid
            JOIN pg_class i ON i.oid = x.indexrelid WHERE t.relname = ANY(%(tables)s)
            """,
            {"tables": list(tables)},
        )
        return [
            {"table": t, "part": part, "bytes": int(size)} for t, part, size in cursor.fetchall()
        ]


def loaded(corpus: Corpus, size: int, seed: int, ef_construction: int) -> dict[str, Any]:
    from django.db import connection

    rng = np.random.default_rng([seed, size])
    agents, ddl = reset(1)
    load_s = load(corpus, rng, size, agents)
    index_s = build_indexes(ddl, ef_construction)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memory")
        (count,) = cursor.fetchone()
    return {"memories": count, "load_s": load_s, "index_s": index_s,
            "parts": relation_sizes(("memories_memory",))}  # fmt: skip


def written(count: int, ef_construction: int) -> dict[str, Any]:
    """``count`` memories through the real write path, in sessions (so with episodes) and
    naming an entity, after an empty table: what each adds in the related tables."""
    from django.db import connection

    from memories.operations import memory_remember_bulk

    agents, ddl = reset(1)
    build_indexes(ddl, ef_construction)  # the write path with every index, as served
    agent = agents[0]
    items = [
        {
            "text": f"Note {i}: the Zephyr Logistics renewal moved to month {i % 12 + 1}.",
            "session": f"s{i // 10}",
            "entities": [{"name": "Zephyr Logistics", "type": "customer"}],
        }
        for i in range(count)
    ]
    for first in range(0, count, 200):
        memory_remember_bulk(agent=agent, items=items[first : first + 200])
    with connection.cursor() as cursor:
        for table in ("memories_memory", *RELATED):
            cursor.execute(f"VACUUM ANALYZE {table}")
        cursor.execute(
            "SELECT count(*), avg(pg_column_size(episode_embedding)), "
            "avg(octet_length(episode_text)) FROM memories_memory"
        )
        stored, episode_vector, episode_text = cursor.fetchone()
    return {
        "memories": stored,
        "episode_vector_bytes": float(episode_vector or 0),
        "episode_text_bytes": float(episode_text or 0),
        "parts": relation_sizes(RELATED),
    }


def table(result: dict[str, Any]) -> str:
    n = result["loaded"]["memories"]
    lines = [
        f"Loaded: {n:,} memories (load {result['loaded']['load_s']:.1f} s).\n",
        "| relation | part | bytes | bytes per memory |",
        "|---|---|---:|---:|",
    ]
    total = 0
    for part in sorted(result["loaded"]["parts"], key=lambda p: -p["bytes"]):
        total += part["bytes"]
        lines.append(
            f"| {part['table']} | {part['part']} | {part['bytes']:,} | {part['bytes'] / n:,.0f} |"
        )
    lines.append(f"| **all** | | **{total:,}** | **{total / n:,.0f}** |")
    w = result["written"]
    m = w["memories"]
    lines += [
        "",
        f"Written through the write path: {m:,} memories (in sessions of 10, each naming an "
        f"entity): an episode adds {w['episode_vector_bytes']:,.0f} bytes of vector and "
        f"{w['episode_text_bytes']:,.0f} of text to a row;",
        "",
        "| relation | part | bytes | bytes per memory |",
        "|---|---|---:|---:|",
    ]
    for part in sorted(w["parts"], key=lambda p: -p["bytes"]):
        lines.append(
            f"| {part['table']} | {part['part']} | {part['bytes']:,} | {part['bytes'] / m:,.0f} |"
        )
    return "\n".join(lines)


GiB = 2**30
#: The memories counts the sizing table is for.
SIZING_COUNTS = (10_000_000, 100_000_000, 1_000_000_000)


def per_memory(result: dict[str, Any]) -> dict[str, float]:
    """Bytes per memory by kind: the HNSW and full-text indexes, the row with its vector, the
    other indexes of the memory table, and what a memory written by an agent adds (its
    episode's text and vector; its events, links and degree row with their indexes)."""
    n = result["loaded"]["memories"]
    parts = {p["part"]: p["bytes"] / n for p in result["loaded"]["parts"]}
    w = result["written"]
    hnsw, gin = parts["memory_embedding_hnsw"], parts["memory_words_metadata"]
    heap = parts["table"] + parts["TOAST"]
    return {
        "hnsw": hnsw,
        "gin": gin,
        "heap": heap,
        "other_indexes": sum(parts.values()) - hnsw - gin - heap,
        "lookup_indexes": parts["memories_memory_pkey"] + parts["memory_unique_mem_id"],
        "episode": w["episode_vector_bytes"] + w["episode_text_bytes"],
        "related": sum(p["bytes"] for p in w["parts"]) / w["memories"],
    }


def sizing(result: dict[str, Any], args: argparse.Namespace) -> str:
    """The sizing table (see ``docs/SCALING.md``): disk, the indexes a search reads that must
    stay in RAM, the nodes that holds, searches a node's PostgreSQL can answer, and the
    consolidation workers a day's writes need."""
    b = per_memory(result)
    disk = sum(v for k, v in b.items() if k != "lookup_indexes")
    hot = b["hnsw"] + b["gin"] + b["lookup_indexes"]
    budget = args.node_ram_gib * GiB * args.hot_share
    per_second = args.node_vcpus / (args.db_cpu_ms_per_search / 1000)
    per_worker_day = args.consolidation_per_s * 86_400
    lines = [
        f"Bytes per memory written by an agent: {disk:,.0f} (HNSW {b['hnsw']:,.0f}, full-text "
        f"GIN {b['gin']:,.0f}, row and vector {b['heap']:,.0f}, the memory table's other "
        f"indexes {b['other_indexes']:,.0f}, its episode {b['episode']:,.0f}, its events, links "
        f"and degree row {b['related']:,.0f}). Kept in RAM for search: {hot:,.0f} (HNSW, GIN, "
        "the primary key and the public id's index). A node: "
        f"{args.node_ram_gib} GiB RAM of which {args.hot_share:.0%} for those indexes, "
        f"{args.node_vcpus} vCPUs. Writes: {args.daily_growth:.0%} of the memories a day.",
        "",
        "| memories | disk | indexes in RAM | nodes | disk per node | searches/s per node "
        "(PostgreSQL CPU) | search p95 per node | writes a day | consolidation workers |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for count in SIZING_COUNTS:
        nodes = max(1, math.ceil(count * hot / budget))
        writes = count * args.daily_growth
        lines.append(
            f"| {count:,} | {count * disk / GiB:,.0f} GiB | {count * hot / GiB:,.0f} GiB "
            f"| {nodes} | {count * disk / nodes / GiB:,.0f} GiB | {per_second:,.0f} "
            f"| {args.search_p95_ms:g} ms | {writes:,.0f} "
            f"| {writes / per_worker_day:.2f} |"
        )
    return "\n".join(lines)


def add_sizing_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node-ram-gib", type=int, default=128)
    parser.add_argument(
        "--hot-share", type=float, default=0.5, help="share of a node's RAM for the indexes"
    )
    parser.add_argument("--node-vcpus", type=int, default=16)
    parser.add_argument(
        "--search-p95-ms",
        type=float,
        default=15.0,
        help="BENCHMARKS.md, search latency at 1,000,000 in one workspace, p95 without the "
        "query's embedding",
    )
    parser.add_argument(
        "--db-cpu-ms-per-search",
        type=float,
        default=12.0,
        help="BENCHMARKS.md, load over HTTP: PostgreSQL's CPU ms per request at one agent",
    )
    parser.add_argument(
        "--consolidation-per-s",
        type=float,
        default=65.0,
        help="BENCHMARKS.md, a consolidation run: memories a second of a full run of 100,000",
    )
    parser.add_argument(
        "--daily-growth", type=float, default=0.01, help="new memories a day, as a share"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--written", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "sizes-data")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--report", type=Path, help="print the tables of a saved run (--json)")
    add_sizing_options(parser)
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        print(f"\n`{saved['command']}`\n")
        print(table(saved) + "\n")
        print(sizing(saved, args))
        return
    if args.smoke:
        args.size, args.written = 1_000, 50
        args.data_dir = ROOT / "benchmarks" / "out" / "smoke-sizes"
    if args.size < 1 or args.written < 1:
        parser.error("--size and --written must be positive")
    setup_django(args.data_dir)
    from memories.models import HNSW_EF_CONSTRUCTION

    corpus = Corpus(args.seed)
    result = {"written": written(args.written, HNSW_EF_CONSTRUCTION)}
    result["loaded"] = loaded(corpus, args.size, args.seed, HNSW_EF_CONSTRUCTION)
    info = machine()
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(info) + "\n")
    print(table(result) + "\n")
    print(sizing(result, args))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"command": command, "machine": info, **result}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
