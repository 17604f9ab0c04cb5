"""What a consolidation run costs: a full run over a large workspace, then an incremental run
after new memories, phase by phase.

    python benchmarks/consolidation.py --size 100000 --json benchmarks/out/consolidation-100k.json

On its own embedded PostgreSQL (``--data-dir``): ``--size`` episodic memories written through the
bulk API by four agents into one shared scope, in sessions of 20, about 500 customers (each
memory names one, given as the writer's entity) and a vocabulary of a few thousand words; 1% of
them are a copy of an earlier memory, 1% an earlier memory with a word added, and some state a
customer's renewal month (a later one from the same agent changes it). Entity extraction by the
offline model is off for the whole benchmark (its cost is ``benchmarks/ingest.py``'s). Then a
consolidation run with every phase switched on here but divergence and extraction (Open
Threads on): each phase's time and counts. Then ``--new`` more memories, and a second run: its
time per phase should follow the new memories, not the workspace. A previous run's workspace
of the same size is reused unless ``--fresh``. Timings are printed, never asserted.
``--smoke``: 500 memories, 50 new (every phase still finds work).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from typing import Any

import numpy as np
from common import (
    ROOT,
    add_data_options,
    add_smoke_option,
    describe,
    machine,
    setup_django,
    write_json,
)

PHASES = ["dedupe", "link", "supersede", "threads", "rescore", "compile"]
MONTHS = ["January", "February", "March", "April", "June", "July"]
MONTHS += ["August", "September", "October", "November"]


def texts(rng: np.random.Generator, count: int, start: int) -> list[tuple[int, str, str, int]]:
    """(agent, customer, text, session) for memories ``start`` .. ``start + count``."""
    syllables = ["ka", "lo", "mi", "ru", "te", "sa", "po", "ne", "di", "va"]
    words = [a + b + c for a in syllables for b in syllables for c in syllables]
    customers = [f"Customer {a}{b}".title() for a in syllables for b in syllables] * 5
    rows: list[tuple[int, str, str, int]] = []
    for index in range(start, start + count):
        session = index // 20
        agent = session % 4
        customer = customers[(session * 7) % len(customers)]
        roll = rng.random()
        if rows and roll < 0.01:
            who, name, text, _ = rows[int(rng.integers(len(rows)))]
            # A copy of an earlier memory by another writer (the bulk API itself keeps one
            # copy of a text per writer).
            rows.append(((who + 1) % 4, name, text, session))
            continue
        if rows and roll < 0.02:
            who, name, text, _ = rows[int(rng.integers(len(rows)))]
            rows.append((who, name, text + " Indeed.", session))
            continue
        if roll < 0.05:
            month = MONTHS[int(rng.integers(len(MONTHS)))]
            text = f"{customer} renews its support contract in {month}."
        else:
            topic = rng.choice(words, 5)
            text = f"Talked with {customer} about {' '.join(topic)} and the next steps."
        rows.append((agent, customer, text, session))
    return rows


def write(agents: list[Any], rows: list[tuple[int, str, str, int]]) -> float:
    from memories.operations import memory_remember_bulk

    started = time.perf_counter()
    for first in range(0, len(rows), 1000):
        batch = rows[first : first + 1000]
        for n, agent in enumerate(agents):
            items = [
                {
                    "text": text,
                    "scope": "team:all",
                    "memory_type": "episodic",
                    "session": f"s{session}",
                    "entities": [{"name": customer, "type": "customer"}],
                }
                for who, customer, text, session in batch
                if who == n
            ]
            if items:
                memory_remember_bulk(agent=agent, items=items)
        if len(rows) > 5000:
            print(f"  {min(first + 1000, len(rows)):,} memories", flush=True)
    return time.perf_counter() - started


def consolidate(workspace: Any) -> dict[str, Any]:
    from consolidation.services import consolidation_execute, consolidation_start

    started = time.perf_counter()
    run = consolidation_execute(
        consolidation_start(workspace=workspace, trigger="command", phases=PHASES)
    )
    if run.status != "done":
        raise SystemExit(f"the run failed: {run.error}")
    return {
        "seconds": time.perf_counter() - started,
        "timings": run.timings,
        "counts": {
            phase: {k: v for k, v in counts.items() if k != "read_after_id"}
            for phase, counts in run.counts.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="memories of the full run")
    parser.add_argument("--new", type=int, default=1_000, help="memories of the incremental run")
    add_data_options(parser, "consolidation-db", data=None)
    parser.add_argument("--fresh", action="store_true", help="load the workspace again")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.size, args.new = 500, 50
        args.data_dir, args.fresh = ROOT / "benchmarks/out/smoke-consolidation", True
    if args.size < 1 or args.new < 1:
        parser.error("--size and --new: at least 1")
    setup_django(args.data_dir)
    from django.db import connection
    from django.test import override_settings

    from memories.models import Memory
    from memories.services import agent_create

    slug = f"consolidation-{args.size}"
    with override_settings(
        MM_ENTITY_EXTRACTION=False, MM_OPEN_THREADS=True, MM_CONSOLIDATE_AFTER_IMPORT=False
    ):
        reuse = not args.fresh and Memory.objects.filter(workspace__slug=slug).count() == args.size
        if not reuse:
            with connection.cursor() as cursor:
                cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
        agents = [
            agent_create(workspace_slug=slug, name=f"agent{n}", shared_scopes=["team:all"])[0]
            for n in range(4)
        ]
        workspace = agents[0].workspace
        rng = np.random.default_rng(args.size)
        load_seconds = 0.0 if reuse else write(agents, texts(rng, args.size, 0))
        if reuse:  # the memories of the previous incremental run go, the consolidation's too
            with connection.cursor() as cursor:
                cursor.execute(
                    "DELETE FROM memories_memory WHERE workspace_id = %s AND id > "
                    "(SELECT id FROM memories_memory WHERE workspace_id = %s ORDER BY id "
                    "OFFSET %s LIMIT 1)",
                    [workspace.pk, workspace.pk, args.size - 1],
                )
        from consolidation.models import (
            PhaseWatermark,
            SupersessionProposal,
            ThreadCorpus,
            WordFrequency,
        )
        from memories.models import Link, Thread

        PhaseWatermark.objects.filter(workspace=workspace).delete()
        SupersessionProposal.objects.filter(workspace=workspace).delete()
        Thread.objects.filter(workspace=workspace).delete()
        ThreadCorpus.objects.filter(workspace=workspace).delete()
        WordFrequency.objects.filter(scope__workspace=workspace).delete()
        Link.objects.filter(workspace=workspace, origin="consolidation").delete()
        Memory.objects.filter(workspace=workspace).exclude(status="active").update(
            status="active", superseded_by=None, valid_until=None
        )
        full = consolidate(workspace)
        new_seconds = write(agents, texts(rng, args.new, args.size))
        incremental = consolidate(workspace)

    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(machine()))
    print(
        f"Workspace: {args.size:,} episodic memories (loaded in {load_seconds:.0f} s"
        f"{', reused' if reuse else ''}), then {args.new:,} new (written in {new_seconds:.1f} "
        "s). Phases: " + ", ".join(PHASES) + " (Open Threads on; entity extraction off).\n"
    )
    print("| phase | full run s | incremental run s | full run: what it did | incremental |")
    print("|---|---:|---:|---|---|")
    for phase in PHASES:

        def said(run: dict[str, Any], name: str = phase) -> str:
            return ", ".join(f"{k} {v:,}" for k, v in sorted(run["counts"][name].items()))

        print(
            f"| {phase} | {full['timings'][phase]:.1f} | {incremental['timings'][phase]:.2f} | "
            f"{said(full)} | {said(incremental)} |"
        )
    print(
        f"| **total** | **{full['seconds']:.1f}** | **{incremental['seconds']:.2f}** | "
        f"{args.size / full['seconds']:,.0f} memories/s | "
        f"{args.new / incremental['seconds']:,.0f} new memories/s |"
    )
    if args.json:
        payload = {
            "size": args.size,
            "new": args.new,
            "full": full,
            "incremental": incremental,
            "load_seconds": load_seconds,
            "machine": machine(),
            "command": command,
        }
        write_json(args.json, payload)


if __name__ == "__main__":
    main()
