"""Divergence detection measured on outside data, and what a run over a workspace costs.

    python benchmarks/divergence.py --json benchmarks/out/divergence.json
    python benchmarks/divergence.py --dialogue PATH/sgd/dev --vitaminc PATH/vitaminc_real/test.jsonl
    python benchmarks/divergence.py --size 100000 --json benchmarks/out/divergence-100k.json

Three sources of pairs, each pair two writers' memories with no order between them; each
pair's two texts are embedded by the engine's embedder and scored by the detector
(``memories.divergence.detectors.assess``, no model endpoint):

* ``--data``, ProSeCCo's JSON-lines shape (``proposition_1``, ``proposition_2``, ``label``
  ``self-contradiction`` or another; see ``../shared/data/README.md``): positive, a
  self-contradiction.
* ``--dialogue``, a split folder in the Schema-Guided Dialogue shape, read by
  ``readiness.dialogue`` (the supersession check's reader; its ``test`` split is refused): two
  user turns of one dialogue, positive when the dialogue state says they inform one slot of
  one service with values that share no word, negative when they inform no slot in common
  (different slots, or the same slot of another service); a value restated is neither.
* ``--vitaminc``, VitaminC's JSON-lines shape, read by ``readiness.corrections`` (its held-out
  part only: nothing in the engine was fitted on it): a claim and a sentence of one Wikipedia
  revision, two writers' statements of one fact of one page. VitaminC writes its claims
  against pairs of revisions that changed a fact, so a claim is supported by one revision's
  sentence and refuted by the other's: ``REFUTES`` (the sentence gives the fact another value)
  is positive, ``SUPPORTS`` (the two agree) negative, and ``NOT ENOUGH INFO`` (neither) left
  out. Both labels share subjects and most words, so only the values tell them apart.

Printed side by side for each source, AUC: the detector, its rules alone (the strongest rule's
strength), the slot rule alone (fired or not), the embedder's cosine similarity alone; then
precision and recall at the operating threshold (``MM_DIVERGENCE_THRESHOLD``) among the pairs
a run would examine (cosine at least ``MM_DIVERGENCE_MIN_SIMILARITY``), and of the slot rule
firing. For ProSeCCo also the share of each label that gate keeps, a negation baseline, and
how often each rule fired on each label.

Workspace (``--size N``): on its own embedded PostgreSQL (``--data-dir``), N memories written by
four agents about a few hundred customers (each memory mentions one; some state a customer's
renewal month, plan or owner, and some of those disagree with another agent's), then one
``divergence_run`` over the workspace: its time, the pairs examined a second and the pairs
flagged. Timings are printed, never asserted. ``--smoke``: the first 40 ProSeCCo pairs, the
few dialogues and claim pairs of ``benchmarks/supersede.py``'s smoke (every part) unless
``--dialogue`` or ``--vitaminc`` is given, and 300 memories.
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
from supersede import smoke_dialogues, smoke_file


def measured(pairs: list, name: str, digest: str) -> dict[str, Any]:
    """Each pair (``readiness.pairs.Pair``) embedded and scored by the detector, and the figures
    of the module docstring."""
    from django.conf import settings

    from memories.divergence.detectors import NEGATIONS, words
    from readiness.metrics import auc
    from readiness.pairs import score

    started = time.perf_counter()
    scored = score(pairs)
    seconds = time.perf_counter() - started
    labels, scores = scored.labels, scored.scores

    def negated(text: str) -> bool:
        return any(word in NEGATIONS for word in words(text))

    def strongest(assessment, only: str | None = None) -> float:
        kept = [r["strength"] for r in assessment.rules if only in (None, r["rule"])]
        return max(kept, default=0.0)

    baselines = {
        "cosine": auc(scored.similarities, labels),
        "negation": auc(
            np.array([float(negated(p.first) != negated(p.second)) for p in pairs]), labels
        ),
    }
    rules_only = auc(np.array([strongest(a) for a in scored.assessments]), labels)
    slot = np.array([strongest(a, "slot") > 0 for a in scored.assessments])
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
        "dataset": name,
        "dataset_sha256": digest,
        "pairs": len(pairs),
        "positives": int(labels.sum()),
        "auc": auc(scores, labels),
        "rules_auc": rules_only,
        "slot_auc": auc(slot.astype(float), labels),
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
        "slot_fired": int(slot.sum()),
        "slot_precision": float(labels[slot].mean()) if slot.any() else None,
        "slot_recall": float(slot[labels].mean()) if labels.any() else None,
        "rules_fired": {label: dict(counts) for label, counts in fired.items()},
        "seconds": seconds,
    }


def sha256(path: Path) -> str:
    """A file's digest, or a folder's: its dialogue files' digests in order."""
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for file in sorted(path.glob("dialogues_*.json")):
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def pairs_case(path: Path, smoke: bool) -> dict[str, Any]:
    """ProSeCCo's pairs (``readiness.pairs``), the first 40 with ``smoke``."""
    from readiness.pairs import read

    pairs = read(path, limit=40 if smoke else None)
    return measured(pairs, path.name, sha256(path))


def dialogue_pairs(path: Path) -> list:
    """Two user turns of one dialogue as two writers' memories (``readiness.pairs``)."""
    from readiness.pairs import from_dialogues

    return from_dialogues(path)


def vitaminc_pairs(path: Path, held_out_only: bool = True) -> list:
    """A claim and a revision's sentence as two writers' memories (``readiness.pairs``)."""
    from readiness.pairs import from_claims

    return from_claims(path, held_out_only)


CASES = {
    "prosecco": "ProSeCCo (self-contradiction)",
    "dialogue": "Schema-Guided Dialogue (a slot given another value)",
    "vitaminc": "VitaminC, held-out part (REFUTES against SUPPORTS)",
}


def summary_table(results: dict[str, dict[str, Any]]) -> str:
    def pr(precision: float | None, recall: float | None, count: int) -> str:
        shown = "–" if precision is None else f"{precision:.3f}"
        return f"{shown} / {'–' if recall is None else f'{recall:.3f}'} ({count})"

    lines = [
        "| pairs | n | positive | AUC detector | AUC rules | AUC slot rule | AUC cosine | "
        "at the threshold: P / R (flagged) | slot rule fired: P / R (fired) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for case, result in results.items():
        lines.append(
            f"| {CASES[case]} | {result['pairs']} | {result['positives']} | "
            f"{result['auc']:.3f} | {result['rules_auc']:.3f} | {result['slot_auc']:.3f} | "
            f"{result['baselines']['cosine']:.3f} | "
            f"{pr(result['precision'], result['recall'], result['flagged'])} | "
            f"{pr(result['slot_precision'], result['slot_recall'], result['slot_fired'])} |"
        )
    return "\n".join(lines)


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
    parser.add_argument(
        "--dialogue",
        type=Path,
        help="a split folder of dialogues, the Schema-Guided Dialogue shape",
    )
    parser.add_argument("--vitaminc", type=Path, help="pairs in VitaminC's JSON-lines shape")
    add_smoke_option(parser)
    args = parser.parse_args()
    for option in ("data", "dialogue", "vitaminc"):
        path = getattr(args, option)
        if path is not None and not path.exists():
            parser.error(f"--{option} {path} does not exist")
    if args.dialogue is not None and "test" in args.dialogue.resolve().parts:
        parser.error("--dialogue: the test split is kept apart and never read here")
    held_out_only = True
    if args.smoke:
        args.size, args.data_dir = 300, ROOT / "benchmarks" / "out" / "smoke-divergence"
        args.dialogue = args.dialogue or smoke_dialogues()
        if args.vitaminc is None:  # a dozen pairs of the benchmark's making: every part
            args.vitaminc, held_out_only = smoke_file(), False
    setup_django(args.data_dir)

    results = {"prosecco": pairs_case(args.data, args.smoke)}
    if args.dialogue is not None:
        results["dialogue"] = measured(
            dialogue_pairs(args.dialogue), args.dialogue.name, sha256(args.dialogue)
        )
    if args.vitaminc is not None:
        results["vitaminc"] = measured(
            vitaminc_pairs(args.vitaminc, held_out_only),
            args.vitaminc.name,
            sha256(args.vitaminc),
        )
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    info = machine()
    print(f"\n`{command}`\n")
    print(describe(info))
    for case, result in results.items():
        print(
            f"{CASES[case]}: {result['dataset']}, {result['pairs']} pairs, "
            f"{result['positives']} positive; embedded and scored in {result['seconds']:.1f} s."
        )
    print()
    print(summary_table(results))
    print()
    print(pairs_table(results["prosecco"]))
    payload = {**results["prosecco"], "command": command, "machine": info}
    payload |= {case: result for case, result in results.items() if case != "prosecco"}
    if args.size:
        payload["workspace"] = workspace_case(args.size)
        print()
        print(workspace_table(payload["workspace"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
