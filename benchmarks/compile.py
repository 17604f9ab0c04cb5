"""Compile time of the compiled memory file at 1k, 10k and 100k memories.

    python benchmarks/compile.py [--sizes 1000,10000,100000] [--runs 20] [--budget 4000]

Runs on its own embedded PostgreSQL (``--data-dir``, default ``benchmarks/out/compile-db``),
never on ``DATABASE_URL`` or the developer's ``MM_DATA_DIR``. One workspace per size, all in
the same table, each with one agent whose private scope holds every memory; rows are loaded by
binary COPY with a vector each (so rows are as wide as real ones). Memories: synthetic texts of
8-24 words (``search_latency.Corpus``), 70% at the default significance 0.80 and the rest
uniform in [0.2, 1.0], 0.5% pinned, categories and STARE scores drawn at random (a third of the
scores empty), ages up to two years, 5% already expired.

Each case compiles the agent's file ``--runs`` times after one warm-up run (the process has
loaded the token counter by then) and reports the median and the 95th percentile of the wall
time of ``compiled_memory_file``, of which the candidates query and ordering is a part; with
decay off (the default) and with ``standard`` decay. It also prints how far a characters ÷ 4
estimate of the compiled file's tokens is from the cl100k_base count.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django
from search_latency import Corpus, copy_types, mem_id

TWO_YEARS_S = 2 * 365 * 86_400
CATEGORIES = ("fact", "decision", "preference", "commitment", "event", "procedure", "observation")
COLUMNS = [
    "mem_id",
    "workspace_id",
    "scope_id",
    "text",
    "source",
    "content_hash",
    "category",
    "significance",
    "pinned",
    "created_at",
    "updated_at",
    "valid_until",
    "s_score",
    "t_score",
    "a_score",
    "r_score",
    "e_score",
    "embedding",
]
CONSTANT: dict[str, object] = {"memory_type": "semantic", "status": "active"}
CONSTANT |= {"idempotency_key": ""}
CONSTANT |= {"session": "", "thread": "", "embedding_model": "all-MiniLM-L6-v2-onnx-int8"}
CONSTANT |= {f"{d}_origin": "" for d in "stare"}


def reset_and_load(corpus: Corpus, sizes: list[int], seed: int) -> tuple[list[Any], float]:
    from django.db import connection
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb

    from memories.services import agent_create, content_hash

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
    agents = [agent_create(workspace_slug=f"compile-{size}", name="bench")[0] for size in sizes]
    connection.ensure_connection()
    raw = connection.connection
    register_vector(raw)
    columns = (*COLUMNS, *CONSTANT, "metadata")
    types = copy_types(raw, columns)  # fails, naming them, if a NOT NULL column is not filled
    sql = f"COPY memories_memory ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    rng = np.random.default_rng(seed)
    now = datetime.now(UTC)
    started = time.perf_counter()
    for size, agent in zip(sizes, agents, strict=True):
        texts, vectors = corpus.texts(rng, size, 8, 24), corpus.vectors(rng, size)
        significance = np.where(rng.random(size) < 0.7, 0.8, rng.uniform(0.2, 1.0, size))
        pinned = rng.random(size) < 0.005
        ages = rng.uniform(0, TWO_YEARS_S, size)
        expired = rng.random(size) < 0.05
        scores = np.where(rng.random((size, 5)) < 1 / 3, np.nan, rng.random((size, 5)))
        category = rng.integers(0, len(CATEGORIES), size)
        key = int(rng.integers(0, 2**63))

        def digest(text: str, scope_id: int = agent.private_scope_id) -> str:
            return content_hash(scope_id=scope_id, source="bench", text=text)

        with raw.cursor() as cursor, cursor.copy(sql) as copy:
            copy.set_types(types)
            for i in range(size):
                created = now - timedelta(seconds=float(ages[i]))
                until = created + (now - created) / 2 if expired[i] else None
                row_scores = [None if np.isnan(v) else float(v) for v in scores[i]]
                copy.write_row(
                    (
                        mem_id(i, key),
                        agent.workspace_id,
                        agent.private_scope_id,
                        texts[i],
                        "bench",
                        digest(texts[i]),
                        CATEGORIES[category[i]],
                        float(significance[i]),
                        bool(pinned[i]),
                        created,
                        created,
                        until,
                        *row_scores,
                        vectors[i],
                        *CONSTANT.values(),
                        Jsonb({}),
                    )
                )
        print(f"  loaded {size:,} memories", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memories_memory")
    connection.close()
    return agents, seconds


def loaded_agents(sizes: list[int]) -> list[Any] | None:
    """The agents of a previous run's data if it has these sizes (for --reuse)."""
    from django.db import connection
    from django.db.models import Count

    from memories.models import Agent

    agents = [
        Agent.objects.select_related("workspace", "private_scope")
        .filter(workspace__slug=f"compile-{size}", name="bench")
        .annotate(count=Count("workspace__memories"))
        .first()
        for size in sizes
    ]
    if any(a is None or a.count != size for a, size in zip(agents, sizes, strict=True)):
        return None
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memories_memory")
    return agents


def measure(agent: Any, budget: int, decay: str, runs: int) -> dict[str, Any]:
    from django.db import connection

    from memories import compile as compiler
    from memories.compile.selection import candidates_of
    from memories.selectors.reader import Reader

    options = compiler.compile_options(budget=budget, decay=decay)
    workspace = agent.workspace

    def once() -> tuple[float, float, Any]:
        started = time.perf_counter()
        as_of = datetime.now(UTC)
        candidates = candidates_of(workspace.pk, [agent.private_scope_id], as_of, options.decay)
        selected = time.perf_counter() - started
        started = time.perf_counter()
        compiled = compiler.compiled_memory_file(
            Reader.of_agent(agent), as_of=as_of, options=options
        )
        assert compiled.candidates == len(candidates)
        return (time.perf_counter() - started) * 1000, selected * 1000, compiled

    once()  # warm-up: token counter, statement cache, buffers
    totals, candidates_ms, compiled = [], [], None
    for _ in range(runs):
        total, part, compiled = once()
        totals.append(total)
        candidates_ms.append(part)
    connection.close()
    estimate = len(compiled.markdown) / 4
    return {
        "memories": compiled.candidates + 0,
        "decay": decay,
        "p50_ms": float(np.percentile(totals, 50)),
        "p95_ms": float(np.percentile(totals, 95)),
        "candidates_p50_ms": float(np.percentile(candidates_ms, 50)),
        "in": len(compiled.included),
        "cut": compiled.cut_count,
        "protected_cut": compiled.cut_protected,
        "tokens": compiled.tokens,
        "budget": budget,
        "chars_div_4": round(estimate),
        "chars_div_4_error": (estimate - compiled.tokens) / compiled.tokens,
    }


def counter_check(path: Path) -> str:
    """How a characters ÷ 4 estimate compares with cl100k_base on real English: the LoCoMo
    dialogue turns, each rendered as a compiled file's line."""
    from memories.tokens import count_each

    if not path.exists():
        return f"(no {path}: the English check is skipped)"
    lines = [
        f"- ————— {turn['speaker']}: {' '.join(turn['text'].split())}\n"
        for conversation in json.loads(path.read_text())
        for key, turns in conversation["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    ]
    tokens = sum(count_each(lines))
    estimate = sum(len(line) for line in lines) / 4
    return (
        f"Token counter on real English ({len(lines):,} LoCoMo dialogue turns as file lines): "
        f"cl100k_base {tokens:,} tokens, characters ÷ 4 {estimate:,.0f} "
        f"({(estimate - tokens) / tokens:+.1%})."
    )


def table(results: list[dict[str, Any]], sizes: dict[int, int]) -> str:
    lines = [
        "| memories in workspace | valid, active | decay | compile p50 ms | p95 ms "
        "| candidates query and order p50 ms (separate run) | in | cut (protected) "
        "| tokens / budget | chars ÷ 4 estimate |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {sizes[id(r)]:,} | {r['memories']:,} | {r['decay']} | {r['p50_ms']:.0f} "
            f"| {r['p95_ms']:.0f} | {r['candidates_p50_ms']:.0f} | {r['in']} "
            f"| {r['cut']:,} ({r['protected_cut']:,}) | {r['tokens']:,} / {r['budget']:,} "
            f"| {r['chars_div_4']:,} ({r['chars_div_4_error']:+.0%}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks/out/compile-db")
    parser.add_argument("--json", type=Path, help="Also write the results here.")
    parser.add_argument(
        "--reuse", action="store_true", help="Keep the data of a previous run with these sizes."
    )
    parser.add_argument(
        "--locomo", type=Path, default=ROOT.parent / "shared/data/locomo/locomo_dev7.json"
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.runs, args.reuse = "1000", 2, False
        args.data_dir = ROOT / "benchmarks/out/smoke-compile"
    sizes = [int(s) for s in args.sizes.split(",")]

    setup_django(args.data_dir)
    info = machine()
    agents = loaded_agents(sizes) if args.reuse else None
    load_s = None
    if agents is None:
        agents, load_s = reset_and_load(Corpus(args.seed), sizes, args.seed)
    results, by_result = [], {}
    for size, agent in zip(sizes, agents, strict=True):
        for decay in ("never", "standard"):
            result = measure(agent, args.budget, decay, args.runs)
            result["workspace_memories"] = size
            by_result[id(result)] = size
            results.append(result)
            print(
                f"  {size:,} memories, decay {decay}: p50 {result['p50_ms']:.0f} ms",
                file=sys.stderr,
                flush=True,
            )
    print(describe(info))
    loaded = "reused" if load_s is None else f"loaded in {load_s:.1f} s"
    print(f"{sum(sizes):,} memories ({loaded}); {args.runs} runs per case.\n")
    print(table(results, by_result))
    print()
    print(counter_check(args.locomo))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"machine": info, "results": results}, indent=2))


if __name__ == "__main__":
    main()
