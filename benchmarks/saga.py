"""Saga recall measured on outside data: does recalling the stories a question's best hits
belong to find more of its evidence than the plain search?

    python benchmarks/saga.py --json benchmarks/out/saga.json

Runs on its own embedded PostgreSQL (``--data-dir``). Each conversation of ``--data`` (LoCoMo's
format; see ``../shared/data/README.md``) is loaded as ``benchmarks/threads.py`` loads it
(episodic memories, one per turn) and consolidation's ``threads`` phase runs over it with the
engine's settings. Then every question with evidence is asked twice: the plain search (top
20) and saga recall (``consolidation.saga.saga_recall``, ``limit`` 20: the hits, then the
members of their threads nearest the question). Reported per category (1 multi-hop, 2
temporal, 3 open-domain, 4 single-hop, 5 adversarial) and overall: evidence recall of each's
20 memories (the share of the evidence turns among them), and the saga's gain. The seed says
saga recall is "not yet reliable": this measures how far. Timings are printed, never asserted.
``--smoke``: the first conversation's first 120 turns and its first 10 questions.
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import sys
import time
from collections import defaultdict

import numpy as np
from common import (
    ROOT,
    add_data_options,
    add_smoke_option,
    check_data,
    describe,
    machine,
    setup_django,
    write_json,
)
from threads import load, run_threads

from readiness.locomo import CATEGORIES, read

LIMIT = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_options(parser, "saga-db")
    add_smoke_option(parser)
    args = parser.parse_args()
    check_data(parser, args)
    conversations = read(args.data)
    if args.smoke:
        conversations = conversations[:1]
        conversations[0].turns = conversations[0].turns[:120]
        known = {turn.dia_id for turn in conversations[0].turns}
        conversations[0].questions = [q for q in conversations[0].questions if q.evidence <= known][
            :10
        ]
        args.data_dir = ROOT / "benchmarks/out/smoke-saga"
    setup_django(args.data_dir)
    from django.test.utils import override_settings

    from consolidation.saga import saga_recall
    from memories.embeddings import get_embedder
    from memories.operations import memory_search
    from memories.selectors.reader import Reader

    started = time.perf_counter()
    agents = load(conversations)
    load_seconds = time.perf_counter() - started
    thread_seconds = sum(run_threads(agents[c.sample_id])[0] for c in conversations)

    recall: dict[str, dict[str, list[float]]] = {
        "plain": defaultdict(list),
        "saga": defaultdict(list),
    }
    threads_found: list[int] = []
    search_ms, saga_ms = [], []
    embedder = get_embedder()
    with override_settings(MM_SAGA=True):
        for conversation in conversations:
            agent = agents[conversation.sample_id]
            for question in conversation.questions:
                vector = embedder.embed([question.text])[0]
                began = time.perf_counter()
                hits = memory_search(
                    Reader.of_agent(agent), query=question.text, query_vector=vector, limit=LIMIT
                )
                search_ms.append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                saga = saga_recall(
                    Reader.of_agent(agent), query=question.text, limit=LIMIT, query_vector=vector
                )
                saga_ms.append((time.perf_counter() - began) * 1000)
                threads_found.append(len(saga.threads))
                for name, memories in (
                    ("plain", [hit.memory for hit in hits]),
                    ("saga", saga.memories),
                ):
                    found = {conversation.memory_ids.get(m.pk) for m in memories}
                    share = len(question.evidence & found) / len(question.evidence)
                    recall[name][str(question.category)].append(share)
                    recall[name]["all"].append(share)

    rows = {}
    for category in [*(str(c) for c in sorted(CATEGORIES)), "all"]:
        plain, saga = recall["plain"].get(category, []), recall["saga"].get(category, [])
        if not plain:
            continue
        rows[category] = {
            "questions": len(plain),
            "plain": float(np.mean(plain)),
            "saga": float(np.mean(saga)),
        }
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(machine()))
    turns = sum(len(c.turns) for c in conversations)
    print(
        f"Data: {args.data.name}, {len(conversations)} conversations, {turns:,} turns, "
        f"{rows['all']['questions']:,} questions with evidence. Load {load_seconds:.1f} s, "
        f"threads phase {thread_seconds:.1f} s. Threads per saga: mean "
        f"{np.mean(threads_found):.2f}; no thread for {np.mean(np.array(threads_found) == 0):.1%}"
        f" of questions.\n"
    )
    print(f"| category | questions | plain recall@{LIMIT} | saga recall@{LIMIT} | saga − plain |")
    print("|---|---:|---:|---:|---:|")
    for category, row in rows.items():
        name = "overall" if category == "all" else f"{category} {CATEGORIES[int(category)]}"
        print(
            f"| {name} | {row['questions']:,} | {row['plain']:.3f} | {row['saga']:.3f} | "
            f"{row['saga'] - row['plain']:+.3f} |"
        )
    print(
        f"\nSearch p50 {np.percentile(search_ms, 50):.1f} ms, p95 "
        f"{np.percentile(search_ms, 95):.1f} ms; saga p50 {np.percentile(saga_ms, 50):.1f} ms, "
        f"p95 {np.percentile(saga_ms, 95):.1f} ms (query embedded beforehand)."
    )
    if args.json:
        payload = {
            "dataset": args.data.name,
            "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "limit": LIMIT,
            "by_category": rows,
            "threads_per_saga": float(np.mean(threads_found)),
            "search_p95_ms": float(np.percentile(search_ms, 95)),
            "saga_p95_ms": float(np.percentile(saga_ms, 95)),
            "machine": machine(),
            "command": command,
        }
        write_json(args.json, payload)


if __name__ == "__main__":
    main()
