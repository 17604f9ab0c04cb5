"""Divergence detection measured on outside data, and what a run over a workspace costs.

    python benchmarks/divergence.py --json benchmarks/out/divergence.json
    python benchmarks/divergence.py --size 100000 --json benchmarks/out/divergence-100k.json

Pairs (``--data``, ProSeCCo's JSON-lines shape: ``proposition_1``, ``proposition_2``, ``label``
``self-contradiction`` or another; see ``../shared/data/README.md``): each pair's two
propositions are embedded by the engine's embedder and scored by the detector
(``memories.divergence.detectors.assess``, no model endpoint). Printed side by side, AUC for
"self-contradiction": the detector, its rules alone, and the baselines (the embedder's cosine
similarity alone; one side negated and the other not); then precision and recall at the
operating threshold (``MM_DIVERGENCE_THRESHOLD``) among the pairs a run would examine (cosine at
least ``MM_DIVERGENCE_MIN_SIMILARITY``), the share of each label that gate keeps, and how often
each rule fired on each label.

Workspace (``--size N``): on its own embedded PostgreSQL (``--data-dir``), N memories written by
four agents about a few hundred customers (each memory mentions one; some state a customer's
renewal month, plan or owner, and some of those disagree with another agent's), then one
``divergence_run`` over the workspace: its time, the pairs examined a second and the pairs
flagged. Timings are printed, never asserted. ``--smoke``: the first 40 pairs and 300 memories.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django


def pairs_case(path: Path, smoke: bool) -> dict[str, Any]:
    from django.conf import settings

    from memories.divergence.detectors import NEGATIONS, words
    from readiness.metrics import auc
    from readiness.pairs import read, score

    pairs = read(path, limit=40 if smoke else None)
    started = time.perf_counter()
    scored = score(pairs)
    seconds = time.perf_counter() - started
    labels, scores = scored.labels, scored.scores

    def negated(text: str) -> bool:
        return any(word in NEGATIONS for word in words(text))

    baselines = {
        "cosine": auc(scored.similarities, labels),
        "negation": auc(
            np.array([float(negated(p.first) != negated(p.second)) for p in pairs]), labels
        ),
    }
    rules_only = auc(
        np.array([a.rules[0]["strength"] if a.rules else 0.0 for a in scored.assessments]),
        labels,
    )
    threshold = float(settings.MM_DIVERGENCE_THRESHOLD)
    gate = float(settings.MM_DIVERGENCE_MIN_SIMILARITY)
    examined = scored.similarities >= gate
    flagged = (scores >= threshold) & examined
    true_positives = int((flagged & labels).sum())
    fired: dict[str, Counter] = {"positive": Counter(), "negative": Counter()}
    for assessment, label in zip(scored.assessments, labels, strict=True):
        for rule in {r["rule"] for r in assessment.rules}:
            fired["positive" if label else "negative"][rule] += 1
    return {
        "dataset": path.name,
        "dataset_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "pairs": len(pairs),
        "positives": int(labels.sum()),
        "auc": auc(scores, labels),
        "rules_auc": rules_only,
        "baselines": baselines,
        "threshold": threshold,
        "min_similarity": gate,
        "median_cosine": {
            "positive": float(np.median(scored.similarities[labels])) if labels.any() else None,
            "negative": float(np.median(scored.similarities[~labels])) if (~labels).any() else None,
        },
        "gate_keeps": {
            "positive": float(examined[labels].mean()) if labels.any() else None,
            "negative": float(examined[~labels].mean()) if (~labels).any() else None,
        },
        "flagged": int(flagged.sum()),
        "precision": true_positives / int(flagged.sum()) if flagged.any() else None,
        "recall": true_positives / int(labels.sum()) if labels.any() else None,
        "rules_fired": {label: dict(counts) for label, counts in fired.items()},
        "seconds": seconds,
    }


def pairs_table(result: dict[str, Any]) -> str:
    lines = [
        "| scorer | AUC (self-contradiction) |",
        "|---|---:|",
        f"| the detector (rules + geometry) | {result['auc']:.3f} |",
        f"| its rules alone | {result['rules_auc']:.3f} |",
        f"| baseline: cosine similarity | {result['baselines']['cosine']:.3f} |",
        f"| baseline: negation on one side | {result['baselines']['negation']:.3f} |",
    ]
    precision = result["precision"]
    keeps = result["gate_keeps"]
    lines += [
        "",
        f"A run examines a pair only from a cosine of {result['min_similarity']:.2f} "
        f"(MM_DIVERGENCE_MIN_SIMILARITY): that keeps {keeps['positive']:.1%} of these "
        f"self-contradictions and {keeps['negative']:.1%} of the others (median cosine "
        f"{result['median_cosine']['positive']:.3f} and "
        f"{result['median_cosine']['negative']:.3f}).",
        f"At the operating threshold {result['threshold']:.2f} (among the pairs examined): "
        f"{result['flagged']} of {result['pairs']} pairs flagged, precision "
        + ("–" if precision is None else f"{precision:.3f}")
        + f", recall {result['recall']:.3f}. Rules fired (pairs): on self-contradictions "
        f"{result['rules_fired']['positive'] or '{}'}, on the others "
        f"{result['rules_fired']['negative'] or '{}'}.",
    ]
    return "\n".join(lines)


CUSTOMER_WORDS = (
    "Zephyr", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Acme",
    "Tyrell", "Cyberdyne", "Soylent", "Wonka", "Oscorp", "Gringotts", "Monarch", "Dunder",
    "Nakatomi", "Prestige", "Virtucon",
)  # fmt: skip
PRODUCTS = ("support", "hosting", "analytics", "storage", "security", "billing")
PLANS = ("bronze", "silver", "gold", "platinum", "starter", "enterprise")
OWNERS = ("Dana", "Ravi", "Mei", "Tom", "Ines", "Olu", "Sara", "Yusuf")
TOPICS = ("invoices", "latency", "the API limits", "single sign-on", "data export", "onboarding")
MONTHS = ("January", "March", "April", "June", "September", "November")


def workspace_texts(rng: np.random.Generator, size: int) -> list[tuple[int, str, str]]:
    """``size`` (agent, customer, text): four agents writing about ``size / 100`` customers."""
    customers = [
        f"{CUSTOMER_WORDS[i % len(CUSTOMER_WORDS)]} {i // len(CUSTOMER_WORDS) + 1}"
        for i in range(max(size // 100, 1))
    ]
    rows, seen = [], set()
    while len(rows) < size:  # distinct texts a writer: a bulk write stores a repeat once
        customer = customers[int(rng.integers(len(customers)))]
        kind = int(rng.integers(5))
        pick = lambda items: items[int(rng.integers(len(items)))]  # noqa: E731
        text = (
            f"{customer} renews its {pick(PRODUCTS)} contract in {pick(MONTHS)}.",
            f"{customer} is on the {pick(PLANS)} plan.",
            f"{customer}'s account is owned by {pick(OWNERS)}.",
            f"{customer} asked about {pick(TOPICS)} in the weekly call.",
            f"{customer} has {int(rng.integers(1, 30))} open tickets about {pick(TOPICS)}.",
        )[kind]
        row = (int(rng.integers(4)), customer, text)
        if (row[0], text) not in seen:
            seen.add((row[0], text))
            rows.append(row)
    return rows


def workspace_case(size: int) -> dict[str, Any]:
    """Load ``size`` memories (bulk, the writers' entities, no offline model) unless a previous
    run left exactly that many, then time one full divergence run over them (a dry run: the
    flagged pairs are counted, not written)."""
    from django.db import connection
    from django.test.utils import override_settings

    from memories.models import Divergence, Memory
    from memories.operations import memory_remember_bulk
    from memories.services import agent_create
    from memories.services.divergence import divergence_run

    slug = f"divergence-{size}"
    loaded = Memory.objects.filter(workspace__slug=slug).count() == size
    if not loaded:  # this database is the benchmark's own: start it empty
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
    agents = [
        None
        if loaded
        else agent_create(workspace_slug=slug, name=f"agent{n}", shared_scopes=["team:all"])[0]
        for n in range(4)
    ]
    started = time.perf_counter()
    if agents[0] is not None:
        rows = workspace_texts(np.random.default_rng(size), size)
        with override_settings(MM_ENTITY_EXTRACTION=False):
            for first in range(0, size, 1000):
                batch = rows[first : first + 1000]
                for n, agent in enumerate(agents):
                    items = [
                        {
                            "text": text,
                            "scope": "team:all",
                            "entities": [{"name": customer, "type": "customer"}],
                        }
                        for who, customer, text in batch
                        if who == n
                    ]
                    if items:
                        memory_remember_bulk(agent=agent, items=items)
                print(f"  {min(first + 1000, size):,} memories", flush=True)
    load_s = time.perf_counter() - started
    workspace = Memory.objects.filter(workspace__slug=slug).first().workspace
    Divergence.objects.filter(workspace=workspace).delete()
    with override_settings(MM_DIVERGENCE=True):
        result = divergence_run(workspace=workspace, full=True, dry_run=True)
    return {
        "memories": result.memories,
        "pairs": result.pairs,
        "flagged": len(result.flagged),
        "seconds": result.seconds,
        "pairs_per_second": result.pairs_per_second,
        "memories_per_second": result.memories / result.seconds if result.seconds else 0.0,
        "load_seconds": load_s,
    }


def workspace_table(result: dict[str, Any]) -> str:
    return "\n".join(
        [
            "| memories read | pairs examined | flagged | run s | pairs/s | memories/s |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {result['memories']:,} | {result['pairs']:,} | {result['flagged']:,} | "
            f"{result['seconds']:.1f} | {result['pairs_per_second']:,.0f} | "
            f"{result['memories_per_second']:,.0f} |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=ROOT.parent / "shared" / "data" / "prosecco" / "prosecco_qt30_dev.jsonl",
        help="pairs in ProSeCCo's JSON-lines shape",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--size", type=int, help="also time a run over a workspace of N memories")
    parser.add_argument(
        "--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "divergence-db"
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if not args.data.exists():
        parser.error(f"--data {args.data} does not exist")
    if args.smoke:
        args.size, args.data_dir = 300, ROOT / "benchmarks" / "out" / "smoke-divergence"
    setup_django(args.data_dir)

    result = pairs_case(args.data, args.smoke)
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    info = machine()
    print(f"\n`{command}`\n")
    print(describe(info))
    print(
        f"Data: {result['dataset']}, {result['pairs']} pairs, {result['positives']} labelled "
        f"self-contradiction; embedded and scored in {result['seconds']:.1f} s.\n"
    )
    print(pairs_table(result))
    payload = {**result, "command": command, "machine": info}
    if args.size:
        payload["workspace"] = workspace_case(args.size)
        print()
        print(workspace_table(payload["workspace"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
