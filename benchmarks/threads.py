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

Then the ``link`` phase's ``relates_to`` links at a few minimum similarities: how many, and the
share joining two evidence turns of one question, against the share among all pairs of turns
of one session (what linking within sessions at random would score).

``load`` is shared with ``benchmarks/saga.py``. Timings are printed, never asserted.
``--smoke``: the first conversation's first 120 turns, the default minimum score.
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import sys
import time
from collections import Counter, defaultdict
from itertools import combinations
from typing import Any

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

from readiness.locomo import Conversation, episodic_items, read


def load(conversations: list[Conversation]) -> dict[str, Any]:
    """Empty the memory tables, then write each conversation's turns as episodic memories of
    its own workspace (``locomo-<sample>``); returns the agents by sample id."""
    from django.db import connection

    from memories.operations import memory_remember_bulk
    from memories.services import agent_create

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
    agents = {}
    for conversation in conversations:
        agent, _ = agent_create(workspace_slug=f"locomo-{conversation.sample_id}", name="reader")
        agents[conversation.sample_id] = agent
        items = episodic_items(conversation)
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


def measure_links(
    conversations: list[Conversation], agents: dict[str, Any], min_similarity: float
) -> dict[str, Any]:
    """Consolidation's link phase from nothing at ``min_similarity``: its ``relates_to`` links,
    and how many join two evidence turns of one question (against that rate among all pairs
    of turns of one session)."""
    from django.test.utils import override_settings

    from consolidation.models import PhaseWatermark
    from consolidation.services import consolidation_execute, consolidation_start
    from memories.models import Link

    links = co_evidence = pairs = pairs_co = 0
    seconds = 0.0
    for conversation in conversations:
        workspace = agents[conversation.sample_id].workspace
        Link.objects.filter(workspace=workspace, kind="relates_to").delete()
        PhaseWatermark.objects.filter(workspace=workspace, phase="link").delete()
        with override_settings(MM_RELATES_MIN_SIMILARITY=min_similarity):
            started = time.perf_counter()
            consolidation_execute(
                consolidation_start(workspace=workspace, trigger="command", phases=["link"])
            )
            seconds += time.perf_counter() - started
        together = set()
        for question in conversation.questions:
            for a, b in combinations(sorted(question.evidence), 2):
                together.add((a, b))
        for source, target in Link.objects.filter(
            workspace=workspace, kind="relates_to"
        ).values_list("source_id", "target_memory_id"):
            a, b = sorted((conversation.memory_ids[source], conversation.memory_ids[target]))
            links += 1
            co_evidence += (a, b) in together
        by_session: dict[int, list[str]] = defaultdict(list)
        for turn in conversation.turns:
            by_session[turn.session].append(turn.dia_id)
        for dia_ids in by_session.values():
            for a, b in combinations(sorted(dia_ids), 2):
                pairs += 1
                pairs_co += (a, b) in together
    turns = sum(len(c.turns) for c in conversations)
    return {
        "min_similarity": min_similarity,
        "links": links,
        "links_per_memory": links / turns if turns else 0.0,
        "co_evidence_share": co_evidence / links if links else 0.0,
        "session_pairs_co_evidence_share": pairs_co / pairs if pairs else 0.0,
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_options(parser, "threads-db")
    parser.add_argument(
        "--min-scores",
        default="0.35,0.4,0.45",
        help="the minimum scores to run (MM_THREAD_MIN_SCORE), comma-separated",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    check_data(parser, args)
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
    link_default = settings.MM_RELATES_MIN_SIMILARITY
    similarities = [link_default] if args.smoke else sorted({0.5, 0.6, 0.7, link_default})
    linked = [measure_links(conversations, agents, value) for value in similarities]
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
    print(
        "\nThe link phase's relates_to links (in a session or sharing an entity, at most "
        f"{settings.MM_RELATES_NEIGHBOURS} per memory): the share joining two evidence turns of "
        "one question, against that share among all pairs of turns of one session; the "
        "default in bold.\n"
    )
    print("| min similarity | links | links/memory | co-evidence share | base share | s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for row in linked:
        value = row["min_similarity"]
        label = f"**{value}**" if abs(value - link_default) < 1e-9 else f"{value}"
        print(
            f"| {label} | {row['links']:,} | {row['links_per_memory']:.2f} | "
            f"{row['co_evidence_share']:.3f} | {row['session_pairs_co_evidence_share']:.3f} | "
            f"{row['seconds']:.1f} |"
        )
    if args.json:
        payload = {
            "dataset": args.data.name,
            "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "turns": turns,
            "links": linked,
            "default_min_score": default,
            "results": {str(k): v for k, v in results.items()},
            "load_seconds": load_seconds,
            "machine": machine(),
            "command": command,
        }
        write_json(args.json, payload)


if __name__ == "__main__":
    main()
