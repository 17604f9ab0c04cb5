"""Bulk ingest rate against the embedder's own, on the same texts; and a 10,000-line seed.

    python benchmarks/ingest.py [--sizes 1000,10000] [--data PATH]

Runs on its own embedded PostgreSQL (``--data-dir``, default ``benchmarks/out/ingest-db``).
Texts: the distinct LoCoMo dialogue turns (``"<speaker>: <turn>"`` on one line, real English),
repeated with a number appended until there are enough, so every text is distinct. For each
size, in one run:

* embedder: ``get_embedder().embed(texts)`` alone (the rate a perfect engine would reach);
* engine: ``memory_remember_bulk`` in batches of ``MM_BULK_MAX_ITEMS`` into an empty workspace
  (validation, duplicate checks, embedding, the scorer, entities and links, insert with its
  indexes, provenance), once with the offline entity recognition (``MM_ENTITY_EXTRACTION``, the
  default) and once without, each into a workspace of its own.

Then ``meaning-memory seed`` imports a 10,000-line markdown list into a fresh workspace, and
runs again over the same file, which must store nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from io import StringIO
from pathlib import Path
from typing import Any

from common import ROOT, add_smoke_option, describe, machine, setup_django
from locomo import read


def texts_for(size: int, turns: list[str]) -> list[str]:
    return [
        turns[n % len(turns)] + ("" if n < len(turns) else f" ({n // len(turns)})")
        for n in range(size)
    ]


def fresh_agent(slug: str) -> Any:
    from memories.services import agent_create

    return agent_create(workspace_slug=slug, name="bench")[0]


def reset() -> None:
    """Empty the benchmark's own database (its memory tables)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")


def measure(size: int, turns: list[str]) -> dict[str, Any]:
    from django.conf import settings

    from memories.embeddings import get_embedder
    from memories.operations import memory_remember_bulk

    texts = texts_for(size, turns)
    started = time.perf_counter()
    get_embedder().embed(texts)
    embedder_s = time.perf_counter() - started

    batch = settings.MM_BULK_MAX_ITEMS
    timed: dict[bool, tuple[float, int]] = {}
    for extraction in (False, True):
        settings.MM_ENTITY_EXTRACTION = extraction
        agent = fresh_agent(f"ingest-{size}-{'ner' if extraction else 'bare'}")
        started = time.perf_counter()
        stored = 0
        for first in range(0, size, batch):
            results = memory_remember_bulk(
                agent=agent, items=[{"text": t} for t in texts[first : first + batch]]
            )
            stored += sum(1 for r in results if r.status == "stored")
        timed[extraction] = (time.perf_counter() - started, stored)
    settings.MM_ENTITY_EXTRACTION = True
    from memories.models import Link

    bare_s, ner_s = timed[False][0], timed[True][0]
    return {
        "memories": size,
        "stored": timed[True][1],
        "embedder_s": embedder_s,
        "embedder_per_s": size / embedder_s,
        "engine_bare_s": bare_s,
        "engine_bare_per_s": size / bare_s,
        "engine_s": ner_s,
        "engine_per_s": size / ner_s,
        "ratio_bare": embedder_s / bare_s,
        "ratio": embedder_s / ner_s,
        "links": Link.objects.filter(workspace__slug=f"ingest-{size}-ner").count(),
    }


def seed_twice(lines: int, turns: list[str], out: Path) -> dict[str, Any]:
    from django.core.management import call_command

    agent = fresh_agent("ingest-seed")
    path = out / "seed-10k.md"
    path.write_text("".join(f"- {text}\n" for text in texts_for(lines, turns)))
    runs = []
    for _ in range(2):
        err = StringIO()
        started = time.perf_counter()
        call_command(
            "seed",
            str(path),
            "--workspace",
            agent.workspace.slug,
            "--agent",
            agent.name,
            stderr=err,
        )
        runs.append((time.perf_counter() - started, err.getvalue().strip().splitlines()))
    return {
        "lines": lines,
        "first_s": runs[0][0],
        "first_summary": runs[0][1][-1],
        "progress_lines": len(runs[0][1]) - 1,
        "second_s": runs[1][0],
        "second_summary": runs[1][1][-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--seed-lines", type=int, default=10_000)
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared/data/locomo/locomo_dev7.json"
    )
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks/out/ingest-db")
    parser.add_argument("--json", type=Path, help="Also write the results here.")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.seed_lines = "100", 200
        args.data_dir = ROOT / "benchmarks/out/smoke-ingest"

    setup_django(args.data_dir)
    reset()
    info = machine()
    # Distinct turns (LoCoMo repeats a few, e.g. thanks), on one line each, so every line of
    # the seed file is a distinct memory.
    turns = list(
        dict.fromkeys(
            " ".join(f"{t.speaker}: {t.text}".split()) for c in read(args.data) for t in c.turns
        )
    )
    from memories.embeddings import get_embedder

    get_embedder().embed(turns[:64])  # load the model before timing
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        result = measure(size, turns)
        results.append(result)
        print(f"  {result}", file=sys.stderr, flush=True)
    seeded = seed_twice(args.seed_lines, turns, ROOT / "benchmarks/out")

    from django.conf import settings

    print(describe(info))
    print(
        f"Embedder: {get_embedder().model_name}, {settings.MM_EMBEDDER_THREADS} thread(s); "
        f"bulk batches of {settings.MM_BULK_MAX_ITEMS}.\n"
    )
    print(
        "| memories | embedder alone, texts/s | engine without entities, memories/s | "
        "engine with entities, memories/s | links made | engine / embedder (without, with) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['memories']:,} | {r['embedder_per_s']:,.0f} ({r['embedder_s']:.1f} s) "
            f"| {r['engine_bare_per_s']:,.0f} ({r['engine_bare_s']:.1f} s) "
            f"| {r['engine_per_s']:,.0f} ({r['engine_s']:.1f} s) | {r['links']:,} "
            f"| {r['ratio_bare']:.0%}, {r['ratio']:.0%} |"
        )
    print(
        f"\n`meaning-memory seed` of a {seeded['lines']:,}-line markdown list: "
        f"{seeded['first_summary']!r} ({seeded['progress_lines']} progress lines); "
        f"again: {seeded['second_summary']!r}."
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"machine": info, "results": results, "seed": seeded}, indent=2)
        )


if __name__ == "__main__":
    main()
