"""Correction detection measured on outside data: does a newer statement update or contradict an
older one, beside a cosine baseline.

    python benchmarks/supersede.py --data PATH/vitaminc_real/test.jsonl --json OUT
    python benchmarks/supersede.py --data PATH --fit     # fit the model on the tuning part
    python benchmarks/supersede.py --dialogue PATH/sgd/dev --json OUT   # conversations

``--dialogue`` (a folder of dialogues in the Schema-Guided Dialogue shape, ``readiness.dialogue``;
its ``test`` split is refused): every pair of user turns of one dialogue labelled by the
dialogue state, read as consolidation reads a session; printed: precision of what would be
applied, recall of what is caught (applied or proposed), precision of the proposals.

Pairs (``--data``, VitaminC's JSON-lines shape, ``readiness.corrections``: the claim is the
older statement, the evidence the newer, a pair positive when the evidence refutes the claim;
nothing of the data is in the project), split by page into a **tuning** part and a **held-out**
part that nothing is fitted or tuned on.

Printed for each part of ``--data``: AUC of the detector
(``memories.temporal.corrections.assess``), of its rules without the model (the strongest
finding's order), and of the embedder's cosine similarity of the two texts (the baseline: two
statements that contradict each other are about the same thing, so alike; alone it cannot tell
agreement from disagreement); then precision and
recall at the two operating points the model file holds (``confident`` and ``propose``), and of
what consolidation would do with the pair (``memories.temporal.judgment``, the writers unknown):
**applied**, and **caught** (applied or proposed).

``--fit`` fits the logistic model on the tuning part (L2, Newton's method) and chooses the
thresholds there: ``confident`` the lowest at which the tuning part's precision is at least
``--precision`` (0.92, above the 0.90 the held-out part must reach), ``propose`` the lowest at
which it is at least 0.6; it writes ``memories/data/correction_model.json``. ``--smoke``: a file
of a dozen pairs of the benchmark's own making, no fit; figures printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django, write_json

SMOKE_PAIRS = [
    ("Atlas Foods renews its contract in March.", "Atlas Foods renews in September.", "REFUTES"),
    ("The office opens at 9am.", "The office opens at 9am on weekdays.", "SUPPORTS"),
    ("Helios Bank renewal moved to June.", "Helios Bank renewal is in March.", "REFUTES"),
    ("Revenue grew by more than 10%.", "Revenue grew by 12% last year.", "SUPPORTS"),
    ("The team has 40 engineers.", "The team has 25 engineers after the cuts.", "REFUTES"),
    ("Maria owns the billing project.", "Maria likes the billing project.", "NOT ENOUGH INFO"),
    ("Zephyr renews every March.", "Zephyr renews in June, not March.", "REFUTES"),
    ("The launch was on May 3, 2024.", "The launch happened on May 3, 2024.", "SUPPORTS"),
    ("Sales reached $2 million.", "Sales reached $2.4 million in 2023.", "REFUTES"),
    ("The warehouse is in Rotterdam.", "The warehouse ships on Tuesdays.", "NOT ENOUGH INFO"),
]


def smoke_file() -> Path:
    path = Path(tempfile.mkdtemp()) / "smoke-pairs.jsonl"
    rows = [
        {"claim": a, "evidence": b, "label": label, "page": f"smoke {n}"}
        for n, (a, b, label) in enumerate(SMOKE_PAIRS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


SMOKE_DIALOGUES = [
    [
        ("Book a table for 4 people at 7 pm.", [("Restaurants_1", "party_size", "4"),
                                                ("Restaurants_1", "time", "7 pm")]),
        ("Actually, make it 2 people.", [("Restaurants_1", "party_size", "2")]),
        ("And find me a cab to the airport.", [("RideSharing_1", "destination", "airport")]),
    ],
    [
        ("I want to fly to Denver on March 3rd.", [("Flights_1", "destination", "Denver"),
                                                   ("Flights_1", "date", "March 3rd")]),
        ("I will return on March 9th.", [("Flights_1", "return_date", "March 9th")]),
        ("No, change the destination to Austin.", [("Flights_1", "destination", "Austin")]),
    ],
]  # fmt: skip


def smoke_dialogues() -> Path:
    folder = Path(tempfile.mkdtemp()) / "dev"
    folder.mkdir()
    dialogues = [
        {
            "dialogue_id": f"smoke_{n}",
            "turns": [
                {
                    "speaker": "USER",
                    "utterance": text,
                    "frames": [
                        {
                            "service": service,
                            "actions": [{"act": "INFORM", "slot": slot, "values": [value]}],
                        }
                        for service, slot, value in informs
                    ],
                }
                for text, informs in turns
            ],
        }
        for n, turns in enumerate(SMOKE_DIALOGUES)
    ]
    (folder / "dialogues_001.json").write_text(json.dumps(dialogues))
    return folder


def dialogue_table(figures: dict[str, Any]) -> str:
    return "\n".join(
        [
            "| pairs | corrections | applied | applied: precision | applied: recall | "
            "caught (applied or proposed): recall | proposed | proposed: precision |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {figures['pairs']} | {figures['positives']} | {figures['applied']} | "
            f"{figures['applied_precision']:.3f} | {figures['applied_recall']:.3f} | "
            f"{figures['caught_recall']:.3f} | {figures['proposed']} | "
            f"{figures['proposed_precision']:.3f} |",
        ]
    )


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[float, np.ndarray]:
    """Logistic regression by Newton's method, L2 on the weights (not the bias)."""
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    penalty = np.eye(design.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-design @ w))
        gradient = design.T @ (p - y) + penalty @ w
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), w[1:]


def lowest_threshold(scores: np.ndarray, labels: np.ndarray, precision: float) -> float:
    """The lowest score from which the pairs at or above it are right at least ``precision``
    of the time (at least 20 of them); 1.0 when none is. One pass over the scores, highest
    first: each distinct score's flagged count and hits are running sums."""
    order = np.argsort(-scores, kind="stable")
    ranked, hits = scores[order], np.cumsum(labels[order])
    # The last position of each distinct score: everything at or above it is flagged.
    ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    flagged = ends + 1
    good = (flagged >= 20) & (hits[ends] / flagged >= precision)
    return float(ranked[ends][good].min()) if good.any() else 1.0


def write_model(columns, precision: float, dataset: Path) -> dict[str, Any]:
    from memories.temporal.corrections import FEATURES, MODEL_PATH
    from readiness.corrections import PARTS, POSITIVE

    tune = ~columns["held_out"]
    x, y = columns["x"][tune], columns["labels"][tune].astype(float)
    bias, weights = fit(x, y)
    p = 1.0 / (1.0 + np.exp(-(bias + x @ weights)))
    labels = y.astype(bool)
    model = {
        "bias": round(bias, 6),
        "weights": {name: round(float(w), 6) for name, w in zip(FEATURES, weights, strict=True)},
        "confident": lowest_threshold(p, labels, precision),
        "propose": lowest_threshold(p, labels, 0.6),
        "fitted_on": {
            "dataset": dataset.name,
            "dataset_sha256": hashlib.sha256(dataset.read_bytes()).hexdigest(),
            "part": f"tuning: pages whose name's sha256 is not 0 modulo {PARTS}",
            "pairs": int(tune.sum()),
            "positives": int(labels.sum()),
            "positive_label": POSITIVE,
            "tuning_precision_for_confident": precision,
            "command": "python benchmarks/supersede.py --data PATH --fit",
        },
    }
    MODEL_PATH.write_text(json.dumps(model, indent=2) + "\n")
    return model


def table(parts: dict[str, Any]) -> str:
    lines = [
        "| part | pairs | positive | AUC detector | AUC rules | AUC cosine | "
        "confident: P / R (flagged) | propose: P / R (flagged) | applied: P / R (flagged) | "
        "caught: P / R (flagged) |",
        "|---|---:|---:|---:|---:|---:|---|---|---|---|",
    ]
    for name, part in parts.items():

        def pr(point):
            return f"{point['precision']:.3f} / {point['recall']:.3f} ({point['flagged']})"

        lines.append(
            f"| {name.replace('_', '-')} | {part['pairs']} | {part['positives']} | "
            f"{part['detector_auc']:.3f} | {part['rules_auc']:.3f} | "
            f"{part.get('cosine_auc', float('nan')):.3f} | {pr(part['confident'])} | "
            f"{pr(part['propose'])} | {pr(part['applied'])} | {pr(part['caught'])} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="pairs in VitaminC's JSON-lines shape")
    parser.add_argument(
        "--dialogue", type=Path, help="a folder of dialogues, the Schema-Guided Dialogue shape"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--fit", action="store_true", help="fit the model on the tuning part")
    parser.add_argument("--precision", type=float, default=0.92)
    parser.add_argument("--no-cosine", action="store_true", help="skip the embedder baseline")
    parser.add_argument(
        "--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "supersede-db"
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke and args.data is None:
        args.data = smoke_file()
    if args.smoke and args.dialogue is None:
        args.dialogue = smoke_dialogues()
    if args.data is None and args.dialogue is None:
        parser.error("--data PATH or --dialogue PATH is required, except with --smoke")
    if args.data is not None and not args.data.exists():
        parser.error(f"--data: no file {args.data}")
    if args.dialogue is not None and "test" in args.dialogue.resolve().parts:
        parser.error("--dialogue: the test split is kept apart and never read here")
    if args.smoke:
        args.fit, args.data_dir = False, ROOT / "benchmarks" / "out" / "smoke-supersede"
    setup_django(args.data_dir)
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    info = machine()
    print(f"\n`{command}`\n")
    print(describe(info))
    # The commit the run measures: read before it starts (a commit made meanwhile is not it).
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    result: dict[str, Any] = {"command": command, "machine": info}
    if args.data is not None:
        result |= vitaminc(args)
    if args.dialogue is not None:
        from readiness.dialogue import measure, read

        started = time.perf_counter()
        figures = measure(read(args.dialogue))
        seconds = time.perf_counter() - started
        print(f"\nDialogues: {args.dialogue}, read in {seconds:.1f} s.\n")
        print(dialogue_table(figures))
        result["dialogue"] = {"folder": str(args.dialogue.name), **figures, "seconds": seconds}
    result["commit"] = commit
    write_json(args.json, result)


def vitaminc(args) -> dict[str, Any]:
    """The VitaminC-shaped pairs measured (and fitted with ``--fit``); the table printed."""
    from readiness.corrections import POSITIVE, assessed, measured, read

    rows = read(args.data)
    started = time.perf_counter()
    columns = assessed(rows, with_cosine=not args.no_cosine)
    seconds = time.perf_counter() - started
    if args.fit:
        from memories.temporal.corrections import model

        write_model(columns, args.precision, args.data)
        model.cache_clear()
        columns = assessed(rows, with_cosine=not args.no_cosine)
    from memories.temporal.corrections import model

    parts = measured(columns)
    print(
        f"Data: {args.data.name}, {len(rows)} pairs, {int(columns['labels'].sum())} labelled "
        f"{POSITIVE}; assessed{'' if args.no_cosine else ' and embedded'} in {seconds:.1f} s. "
        f"Thresholds: confident {model().confident:.3f}, propose {model().propose:.3f}.\n"
    )
    print(table(parts))
    return {
        "dataset": args.data.name,
        "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
        "parts": parts,
        "model": {"confident": model().confident, "propose": model().propose},
        "seconds": seconds,
    }


if __name__ == "__main__":
    main()
