"""Consolidation's dedupe measured on outside data: what it merges, and what it must not.

    python benchmarks/dedupe.py --json benchmarks/out/dedupe.json

Runs on its own embedded PostgreSQL (``--data-dir``). Each conversation of ``--data`` (LoCoMo's
format; see ``../shared/data/README.md``) is written, one memory per dialogue turn
(``"<speaker>: <turn>"``, at its session's date), into three workspaces by the bulk API:

* **twice**: the conversation loaded twice, once with source ``copy-a`` and once ``copy-b`` (a
  file seeded twice by two sources): every turn's second copy should be merged into its first
  (exact duplicates), and no two different turns merged;
* **once**: one copy. Real turns rarely repeat, so a merge here joins two different turns: each
  is listed;
* **edited**: one copy, then every turn written again with a small edit that keeps its meaning
  (cycling through: lower case without punctuation; contractions written out, ``I'm`` as
  ``I am``; a filler word (really, just, actually, so) taken out or ``really`` put in; ``!``
  as ``.``): near-duplicates that dedupe should merge into the original.

A turn whose text another turn of its conversation already has is stored once per copy (the
bulk API's own rule for a batch), hence fewer memories than turns loaded. Then one
consolidation run (phase ``dedupe`` only) per workspace, and the merges it made are
read from the ``same_as`` links (each memory's turn id is in its metadata).

Before that, the thresholds: for each turn, its nearest other turn of the conversation (cosine
of the stored vectors) and its edited copy, each pair's similarity, word-shingle overlap and
guards (``consolidation.duplicates``); printed as the share of edited copies and the number of
distinct-turn pairs that each pair of thresholds would merge, the operating point marked.
Timings are printed, never asserted. ``--smoke``: the first conversation's first 40 turns.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shlex
import sys
import time
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

from readiness.locomo import Conversation, memory_text, read

SIMILARITIES = (0.90, 0.92, 0.94, 0.96)
OVERLAPS = (0.5, 0.6, 0.7, 0.8)
CONTRACTIONS = {
    "i'm": "I am",
    "don't": "do not",
    "it's": "it is",
    "that's": "that is",
    "i've": "I have",
    "you're": "you are",
    "can't": "cannot",
    "i'll": "I will",
    "didn't": "did not",
    "isn't": "is not",
    "we're": "we are",
    "what's": "what is",
}
FILLERS = ("really", "just", "actually", "so")


def edited(text: str, kind: int) -> str:
    """``text`` with one small edit that keeps its meaning (module docstring), by ``kind``."""
    if kind == 0:
        return re.sub(r"[.!?,]", "", text).lower()
    if kind == 1:
        out = text
        for short, long in CONTRACTIONS.items():
            out = re.sub(rf"\b{re.escape(short)}\b", long, out, flags=re.IGNORECASE)
        return out if out != text else re.sub(r"[.!]*$", "!", text)
    if kind == 2:
        words = text.split()
        for index, word in enumerate(words):
            if word.lower() in FILLERS and index > 1:
                return " ".join(words[:index] + words[index + 1 :])
        return " ".join(words[:2] + ["really"] + words[2:])
    return text.replace("!", ".")


def load(conversation: Conversation, slug: str, copies: list[tuple[str, bool]]) -> Any:
    """A workspace ``slug`` with one memory per turn for each (source, edited) copy."""
    from memories.operations import memory_remember_bulk
    from memories.services import agent_create

    agent, _ = agent_create(workspace_slug=slug, name="reader")
    for source, edit in copies:
        items = [
            {
                "text": edited(memory_text(turn, True), index % 4)
                if edit
                else memory_text(turn, True),
                "created_at": turn.written_at,
                "session": f"session_{turn.session}",
                "source": source,
                "metadata": {"dia_id": turn.dia_id, "copy": source},
            }
            for index, turn in enumerate(conversation.turns)
        ]
        for start in range(0, len(items), 500):
            memory_remember_bulk(agent=agent, items=items[start : start + 500])
    return agent


def merges(agent: Any) -> tuple[list[dict[str, Any]], float, dict[str, Any]]:
    """Run dedupe on the agent's workspace: the merges made, the seconds, the counts."""
    from consolidation.services import consolidation_execute, consolidation_start
    from memories.models import Link

    started = time.perf_counter()
    run = consolidation_execute(
        consolidation_start(workspace=agent.workspace, trigger="command", phases=["dedupe"])
    )
    seconds = time.perf_counter() - started
    if run.status != "done":
        raise SystemExit(f"the run failed: {run.error}")
    links = Link.objects.filter(
        workspace=agent.workspace, kind="same_as", removed_at__isnull=True
    ).select_related("source", "target_memory")
    made = [
        {
            "merged": link.source.metadata["dia_id"],
            "merged_copy": link.source.metadata["copy"],
            "into": link.target_memory.metadata["dia_id"],
            "into_copy": link.target_memory.metadata["copy"],
            "rule": link.evidence.get("rule"),
            "similarity": link.evidence.get("similarity"),
            "overlap": link.evidence.get("overlap"),
            "merged_text": link.source.text,
            "into_text": link.target_memory.text,
        }
        for link in links
    ]
    return made, seconds, run.counts["dedupe"]


def thresholds(conversations: list[Conversation], agents: dict[str, Any]) -> dict[str, Any]:
    """Each turn's nearest other turn and its edited copy: similarity, overlap, guards."""
    from consolidation.duplicates import guards, overlap
    from memories.models import Memory

    near, edits = [], []
    for conversation in conversations:
        rows = list(
            Memory.objects.filter(workspace=agents[conversation.sample_id].workspace)
            .order_by("metadata__copy", "pk")
            .values_list("text", "embedding", "metadata")
        )
        originals = [row for row in rows if row[2]["copy"] == "original"]
        copies = {row[2]["dia_id"]: row for row in rows if row[2]["copy"] == "edited"}
        vectors = np.array([row[1] for row in originals], dtype=np.float32)
        similarity = vectors @ vectors.T
        np.fill_diagonal(similarity, -1.0)
        for index, (text, vector, metadata) in enumerate(originals):
            other = int(np.argmax(similarity[index]))
            near.append(
                (
                    float(similarity[index, other]),
                    overlap(text, originals[other][0]),
                    bool(guards(text, originals[other][0])),
                )
            )
            copy_text, copy_vector, _ = copies[metadata["dia_id"]]
            edits.append(
                (
                    float(np.dot(vector, copy_vector)),
                    overlap(text, copy_text),
                    bool(guards(text, copy_text)),
                )
            )
    near_a, edits_a = np.array(near), np.array(edits)

    def merged(pairs: np.ndarray, min_similarity: float, min_overlap: float) -> np.ndarray:
        return (
            (pairs[:, 0] >= min_similarity - 1e-9)
            & (pairs[:, 1] >= min_overlap - 1e-9)
            & (pairs[:, 2] == 0)
        )

    grid = [
        {
            "min_similarity": min_similarity,
            "min_overlap": min_overlap,
            "edited_merged": float(merged(edits_a, min_similarity, min_overlap).mean()),
            "nearest_distinct_merged": int(merged(near_a, min_similarity, min_overlap).sum()),
        }
        for min_similarity in SIMILARITIES
        for min_overlap in OVERLAPS
    ]
    return {
        "turns": len(near),
        "nearest_similarity_p99": float(np.percentile(near_a[:, 0], 99)),
        "edited_similarity_p5": float(np.percentile(edits_a[:, 0], 5)),
        "guards_refuse_edited": float(edits_a[:, 2].mean()),
        "guards_refuse_nearest": float(near_a[:, 2].mean()),
        "grid": grid,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_options(parser, "dedupe-db")
    add_smoke_option(parser)
    args = parser.parse_args()
    check_data(parser, args)
    conversations = read(args.data)
    if args.smoke:
        conversations = conversations[:1]
        conversations[0].turns = conversations[0].turns[:40]
        args.data_dir = ROOT / "benchmarks/out/smoke-dedupe"
    setup_django(args.data_dir)
    from django.conf import settings
    from django.db import connection

    from memories.models import Memory

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")

    started = time.perf_counter()
    workspaces: dict[str, dict[str, Any]] = {"twice": {}, "once": {}, "edited": {}}
    for conversation in conversations:
        sample = conversation.sample_id
        workspaces["twice"][sample] = load(
            conversation, f"twice-{sample}", [("copy-a", False), ("copy-b", False)]
        )
        workspaces["once"][sample] = load(conversation, f"once-{sample}", [("original", False)])
        workspaces["edited"][sample] = load(
            conversation, f"edited-{sample}", [("original", False), ("edited", True)]
        )
        print(f"  {sample}: {len(conversation.turns)} turns, three workspaces", flush=True)
    load_seconds = time.perf_counter() - started
    measured = thresholds(conversations, workspaces["edited"])

    results: dict[str, Any] = {}
    turns = sum(len(c.turns) for c in conversations)
    for name, agents in workspaces.items():
        made, seconds, counts, stored = [], 0.0, {}, 0
        for agent in agents.values():
            stored += Memory.objects.filter(workspace=agent.workspace).count()
            found, spent, phase = merges(agent)
            made += found
            seconds += spent
            for key, value in phase.items():
                if key != "read_after_id":
                    counts[key] = counts.get(key, 0) + value
        same = [m for m in made if m["merged"] == m["into"]]
        results[name] = {
            "turns_loaded": turns * (1 if name == "once" else 2),
            "memories": stored,
            "merges": len(made),
            "same_turn": len(same),
            "distinct_turns": [m for m in made if m["merged"] != m["into"]],
            "exact": sum(m["rule"] == "exact duplicate" for m in made),
            "near": sum(m["rule"] == "near duplicate" for m in made),
            "seconds": seconds,
            "counts": counts,
        }

    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(machine()))
    print(
        f"Data: {args.data.name}, {len(conversations)} conversations, {turns:,} turns. "
        f"Operating point: similarity ≥ {settings.MM_DEDUPE_MIN_SIMILARITY}, overlap ≥ "
        f"{settings.MM_DEDUPE_MIN_OVERLAP}. Load {load_seconds:.1f} s.\n"
    )
    print("Thresholds: edited copies merged (share) / nearest distinct turns merged (count)\n")
    print("| similarity ≥ | " + " | ".join(f"overlap ≥ {o}" for o in OVERLAPS) + " |")
    print("|---:|" + "---:|" * len(OVERLAPS))
    for min_similarity in SIMILARITIES:
        cells = []
        for row in measured["grid"]:
            if row["min_similarity"] != min_similarity:
                continue
            cell = f"{row['edited_merged']:.3f} / {row['nearest_distinct_merged']}"
            operating = (
                abs(min_similarity - settings.MM_DEDUPE_MIN_SIMILARITY) < 1e-9
                and abs(row["min_overlap"] - settings.MM_DEDUPE_MIN_OVERLAP) < 1e-9
            )
            cells.append(f"**{cell}**" if operating else cell)
        print(f"| {min_similarity:.2f} | " + " | ".join(cells) + " |")
    print(
        f"\nNearest distinct turn: similarity p99 {measured['nearest_similarity_p99']:.3f}; "
        f"edited copy: similarity p5 {measured['edited_similarity_p5']:.3f}. Guards refuse "
        f"{measured['guards_refuse_edited']:.1%} of edited copies and "
        f"{measured['guards_refuse_nearest']:.1%} of nearest distinct pairs.\n"
    )
    print(
        "| workspace | turns loaded | memories | merges | exact | near | same turn | "
        "distinct turns | s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, result in results.items():
        print(
            f"| {name} | {result['turns_loaded']:,} | {result['memories']:,} | "
            f"{result['merges']:,} | {result['exact']:,} | "
            f"{result['near']:,} | {result['same_turn']:,} | {len(result['distinct_turns']):,} "
            f"| {result['seconds']:.1f} |"
        )
    for name, result in results.items():
        if result["distinct_turns"]:
            print(f"\nDistinct turns merged in {name}:")
            for merge in result["distinct_turns"][:20]:
                print(
                    f"- {merge['merged']} into {merge['into']} ({merge['rule']}, similarity "
                    f"{merge['similarity'] or 1:.3f}, overlap {merge['overlap'] or 1:.2f}): "
                    f"{merge['merged_text'][:90]!r} / {merge['into_text'][:90]!r}"
                )
    if args.json:
        payload = {
            "dataset": args.data.name,
            "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "turns": turns,
            "min_similarity": settings.MM_DEDUPE_MIN_SIMILARITY,
            "min_overlap": settings.MM_DEDUPE_MIN_OVERLAP,
            "thresholds": measured,
            "workspaces": results,
            "load_seconds": load_seconds,
            "machine": machine(),
            "command": command,
        }
        write_json(args.json, payload)


if __name__ == "__main__":
    main()
