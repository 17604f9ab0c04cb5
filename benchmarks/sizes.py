"""Bytes per memory on disk: the row, its vector (TOAST), the HNSW and full-text indexes and the
others, measured on a loaded table (the numbers ``docs/SCALING.md`` sizes 10M-1B memories from).

    python benchmarks/sizes.py --size 1000000

Loads ``--size`` synthetic memories into one workspace of its own embedded PostgreSQL (the
search latency benchmark's corpus, loader and index build: 8-24 word texts, 384-dimension
vectors, no episode), then reads each relation's size from PostgreSQL after ``VACUUM
ANALYZE``. Memories written by agents add what the loader leaves out: an episode's text and
vector for a memory in a session, and its provenance events and links; those are measured on
``--written`` memories stored through the real write path (``memory_remember_bulk``).
"""

from __future__ import annotations

import argparse
import json
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

    from memories.services import memory_remember_bulk

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--written", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "sizes-data")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    add_smoke_option(parser)
    args = parser.parse_args()
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
    print(table(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"command": command, "machine": info, **result}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
