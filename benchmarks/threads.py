"""Open Threads measured on outside data: are the turns a multi-hop question needs, told in
different sessions, put in one thread?

    python benchmarks/threads.py --json benchmarks/out/threads.json

Runs on its own embedded PostgreSQL (``--data-dir``). Each conversation of ``--data`` (LoCoMo's
format; see ``../shared/data/README.md``) becomes a workspace, each dialogue turn an episodic
memory (``"<speaker>: <turn>"``, at its session's date, its session as ``session``) written by
the bulk API; nothing of the annotation (questions, evidence, summaries) reaches the engine.
Then consolidation's ``threads`` phase runs over each workspace, once per minimum score of
``--min-scores`` (the threads emptied between), with the engine's other settings.

Reported per minimum score:

* **pair recall**: of the pairs of evidence turns of a multi-hop question (category 1) that
  lie in different sessions, the share put in one thread;
* **false grouping**: of all pairs of turns in different sessions, the share put in one
  thread (what grouping at random with the same thread sizes would score on the evidence);
* **lift**: pair recall over false grouping;
* threads of two memories or more, their sizes (median, 90th percentile, largest), the share
  of memories in one, the share open, and the phase's time.

``load`` is shared with ``benchmarks/saga.py``. Timings are printed, never asserted.
``--smoke``: the first conversation's first 120 turns, the default minimum score.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django

from readiness.locomo import Conversation, memory_text, read


def load(conversations: list[Conversation]) -> dict[str, Any]:
    """Empty the memory tables, then write each conversation's turns as episodic memories of
    its own workspace (``locomo-<sample>``); returns the agents by sample id."""
    from django.db import connection

    from memories.services import agent_create, memory_remember_bulk

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
    agents = {}
    for conversation in conversations:
        agent, _ = agent_create(workspace_slug=f"locomo-{conversation.sample_id}", name="reader")
        agents[conversation.sample_id] = agent
        items = [
            {
                "text": memory_text(turn, True),
                "memory_type": "episodic",
                "created_at": turn.written_at,
                "session": f"session_{turn.session}",
                "metadata": {"dia_id": turn.dia_id},
            }
            for turn in conversation.turns
        ]
        for start in range(0, len(items), 500):
            for result in memory_remember_bulk(agent=agent, items=items[start : start + 500]):
                conversation.memory_ids[result.memory.pk] = result.memory.metadata["dia_id"]
        print(f"  {conversation.sample_id}: {len(conversation.turns)} turns", flush=True)
    return agents


def run_threads(agent: Any) -> tuple[float, dict[str, Any]]:
    """The threads phase over the agent's workspace, from nothing: seconds and its counts."""
    from django.test.utils import override_settings

    from consolidation.models import PhaseWatermark, ThreadCorpus, WordFrequency
    from consolidation.services import consolidation_execute, consolidation_start
    from memories.models import Thread

    workspace = agent.workspace
    Thread.objects.filter(workspace=workspace).delete()
    ThreadCorpus.objects.filter(workspace=workspace).delete()
    WordFrequency.objects.filter(scope__workspace=workspace).delete()
    PhaseWatermark.objects.filter(workspace=workspace, phase="threads").delete()
    with override_settings(MM_OPEN_THREADS=True):
        started = time.perf_counter()
        run = consolidation_execute(
            consolidation_start(workspace=workspace, trigger="command", phases=["threads"])
        )
        seconds = time.perf_counter() - started
    if run.status != "done":
        raise SystemExit(f"the run failed: {run.error}")
    return seconds, run.counts["threads"]


def thread_of(conversation: Conversation) -> dict[str, int]:
    """Each turn's thread (turns in none are left out)."""
    from memories.models import ThreadMember

    return {
        conversation.memory_ids[memory]: thread
        for memory, thread in ThreadMember.objects.filter(
            memory_id__in=conversation.memory_ids
        ).values_list("memory_id", "thread_id")
    }


def measure(conversations: list[Conversation], agents: dict[str, Any]) -> dict[str, Any]:
    from memories.models import Thread

    evidence_pairs = together = 0
    cross_pairs = cross_together = 0
    sizes: list[int] = []
    threaded = total = opened = 0
    seconds = 0.0
    for conversation in conversations:
        spent, _ = run_threads(agents[conversation.sample_id])
        seconds += spent
        threads = thread_of(conversation)
        session = {turn.dia_id: turn.session for turn in conversation.turns}
        for question in conversation.questions:
            if question.category != 1:
                continue
            for a, b in combinations(sorted(question.evidence), 2):
                if session.get(a) is None or session.get(b) is None or session[a] == session[b]:
                    continue
                evidence_pairs += 1
                together += a in threads and threads.get(a) == threads.get(b)
        # All pairs of turns in different sessions, and those in one thread, counted exactly.
        per_session = Counter(session.values())
        turns = len(conversation.turns)
        cross_pairs += (turns * turns - sum(n * n for n in per_session.values())) // 2
        members: dict[int, Counter] = defaultdict(Counter)
        for dia_id, thread in threads.items():
            members[thread][session[dia_id]] += 1
        for by_session in members.values():
            size = sum(by_session.values())
            cross_together += (size * size - sum(n * n for n in by_session.values())) // 2
            if size > 1:
                sizes.append(size)
                threaded += size
        total += turns
        opened += Thread.objects.filter(
            workspace=agents[conversation.sample_id].workspace, size__gt=1, status="open"
        ).count()
    recall = together / evidence_pairs if evidence_pairs else 0.0
    false = cross_together / cross_pairs if cross_pairs else 0.0
    return {
        "evidence_pairs": evidence_pairs,
        "pair_recall": recall,
        "false_grouping": false,
        "lift": recall / false if false else 0.0,
        "threads": len(sizes),
        "open": opened,
        "size_median": float(np.median(sizes)) if sizes else 0.0,
        "size_p90": float(np.percentile(sizes, 90)) if sizes else 0.0,
        "size_max": max(sizes, default=0),
        "threaded_share": threaded / total if total else 0.0,
        "seconds": seconds,
        "memories_per_second": total / seconds if seconds else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev7.json",
        help="a file in LoCoMo's format",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "threads-db")
    parser.add_argument(
        "--min-scores",
        default="0.35,0.4,0.45",
        help="the minimum scores to run (MM_THREAD_MIN_SCORE), comma-separated",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if not args.data.exists():
        parser.error(f"--data {args.data} does not exist")
    try:
        min_scores = [float(value) for value in args.min_scores.split(",")]
    except ValueError:
        parser.error("--min-scores: numbers separated by commas")
    conversations = read(args.data)
    if args.smoke:
        conversations = conversations[:1]
        conversations[0].turns = conversations[0].turns[:120]
        args.data_dir, min_scores = ROOT / "benchmarks/out/smoke-threads", []
    setup_django(args.data_dir)
    from django.conf import settings
    from django.test.utils import override_settings

    started = time.perf_counter()
    agents = load(conversations)
    load_seconds = time.perf_counter() - started
    default = settings.MM_THREAD_MIN_SCORE
    min_scores = min_scores or [default]
    results = {}
    for min_score in min_scores:
        with override_settings(MM_THREAD_MIN_SCORE=min_score):
            results[min_score] = measure(conversations, agents)

    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(machine()))
    turns = sum(len(c.turns) for c in conversations)
    pairs = next(iter(results.values()))["evidence_pairs"]
    print(
        f"Data: {args.data.name}, {len(conversations)} conversations, {turns:,} turns; "
        f"{pairs:,} pairs of multi-hop evidence turns in different sessions. Word weight "
        f"{settings.MM_THREAD_WORD_WEIGHT}, common share {settings.MM_THREAD_COMMON_SHARE}; "
        f"the default minimum score ({default}) in bold. Load {load_seconds:.1f} s.\n"
    )
    print(
        "| min score | pair recall | false grouping | lift | threads (≥2) | open | size "
        "median / p90 / max | memories threaded | phase s | memories/s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for min_score, r in results.items():
        label = f"**{min_score}**" if abs(min_score - default) < 1e-9 else f"{min_score}"
        print(
            f"| {label} | {r['pair_recall']:.3f} | {r['false_grouping']:.3f} | "
            f"{r['lift']:.1f} | {r['threads']:,} | {r['open']:,} | {r['size_median']:.0f} / "
            f"{r['size_p90']:.0f} / {r['size_max']} | {r['threaded_share']:.1%} | "
            f"{r['seconds']:.1f} | {r['memories_per_second']:.0f} |"
        )
    if args.json:
        payload = {
            "dataset": args.data.name,
            "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "turns": turns,
            "default_min_score": default,
            "results": {str(k): v for k, v in results.items()},
            "load_seconds": load_seconds,
            "machine": machine(),
            "command": command,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
