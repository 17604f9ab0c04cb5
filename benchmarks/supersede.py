"""Correction detection measured on outside data: does a newer statement update or contradict an
older one, beside a cosine baseline.

    python benchmarks/supersede.py --data PATH/vitaminc_real/test.jsonl --json OUT
    python benchmarks/supersede.py --data PATH --fit     # fit the model on the tuning part

Pairs (``--data``, VitaminC's JSON-lines shape: ``claim``, ``evidence``, ``label`` ``REFUTES`` /
``SUPPORTS`` / ``NOT ENOUGH INFO``, ``page``; Schuster et al., NAACL 2021, claims checked
against sentences of Wikipedia revisions): the claim is the older statement, the evidence the
newer, and a pair is positive when the evidence refutes the claim. Nothing of the data is in
the project. Its pairs are split by page: a page whose name's sha256 is 0 modulo 5 is in the
**held-out** part, which nothing is fitted or tuned on; the rest is the **tuning** part.

Printed for each part: AUC of the detector (``memories.temporal.corrections.assess``), of its
rules without the model (the strongest finding's order), and of the embedder's cosine
similarity of the two texts (the baseline: two statements that contradict each other are about
the same thing, so alike; alone it cannot tell agreement from disagreement); then precision and
recall at the two operating points the model file holds (``confident``: consolidation applies
a supersession; ``propose``: it proposes one to a curator).

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

POSITIVE = "REFUTES"
#: The held-out part: pages whose name's sha256 is 0 modulo ``PARTS``.
PARTS = 5
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


def held_out(page: str) -> bool:
    return int(hashlib.sha256(page.encode()).hexdigest(), 16) % PARTS == 0


def detokenised(text: str) -> str:
    """VitaminC's texts are tokenised ("$ 73 million ." and `` quotes ''): written back."""
    for before, after in ((" ,", ","), (" .", "."), ("`` ", '"'), (" ''", '"'), (" 's", "'s")):
        text = text.replace(before, after)
    return text.replace("$ ", "$").replace(" %", "%").replace("( ", "(").replace(" )", ")")


def read(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"claim", "evidence", "label"} - set(row)
        if missing:
            raise SystemExit(f"{path}:{number}: no {', '.join(sorted(missing))}")
        rows.append(
            {
                "older": detokenised(row["claim"]),
                "newer": detokenised(row["evidence"]),
                "positive": row["label"] == POSITIVE,
                "held_out": held_out(str(row.get("page", row.get("case_id", number)))),
            }
        )
    return rows


def smoke_file() -> Path:
    path = Path(tempfile.mkdtemp()) / "smoke-pairs.jsonl"
    rows = [
        {"claim": a, "evidence": b, "label": label, "page": f"smoke {n}"}
        for n, (a, b, label) in enumerate(SMOKE_PAIRS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def assessed(rows: list[dict[str, Any]], with_cosine: bool) -> dict[str, np.ndarray]:
    from memories.temporal.corrections import STRENGTH, assess, features, findings

    found = [findings(r["older"], r["newer"]) for r in rows]
    scores = np.array([assess(r["older"], r["newer"]).score for r in rows])
    order = {rule: rank for rank, rule in enumerate(reversed(list(STRENGTH)), 1)}
    rules = np.array([order[f[0]["rule"]] if f else 0 for _, f in found], dtype=float)
    columns = {
        "labels": np.array([r["positive"] for r in rows]),
        "held_out": np.array([r["held_out"] for r in rows]),
        "x": np.array([features(overlap, f) for overlap, f in found]),
        "detector": scores,
        "rules": rules,
    }
    if with_cosine:
        from memories.embeddings import get_embedder

        vectors = np.asarray(
            get_embedder().embed([t for r in rows for t in (r["older"], r["newer"])])
        )
        a, b = vectors[0::2], vectors[1::2]
        columns["cosine"] = np.sum(a * b, axis=1) / (
            np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-12
        )
    return columns


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
    of the time (at least 20 of them); 1.0 when none is."""
    best = 1.0
    for threshold in np.unique(scores)[::-1]:
        flagged = scores >= threshold
        if flagged.sum() >= 20 and labels[flagged].mean() >= precision:
            best = float(threshold)
    return best


def at(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    flagged = scores >= threshold
    hits = int((flagged & labels).sum())
    return {
        "threshold": round(threshold, 4),
        "flagged": int(flagged.sum()),
        "precision": hits / int(flagged.sum()) if flagged.sum() else float("nan"),
        "recall": hits / int(labels.sum()) if labels.sum() else float("nan"),
    }


def write_model(columns, precision: float, dataset: Path) -> dict[str, Any]:
    from memories.temporal.corrections import FEATURES, MODEL_PATH

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


def measured(columns) -> dict[str, Any]:
    from memories.temporal.corrections import model
    from readiness.metrics import auc

    chosen = model()
    parts = {}
    for name, mask in (("tuning", ~columns["held_out"]), ("held_out", columns["held_out"])):
        labels = columns["labels"][mask]
        if not mask.any():
            continue
        part = {"pairs": int(mask.sum()), "positives": int(labels.sum())}
        for method in ("detector", "rules", "cosine"):
            if method in columns:
                part[f"{method}_auc"] = auc(columns[method][mask], labels)
        part["confident"] = at(columns["detector"][mask], labels, chosen.confident)
        part["propose"] = at(columns["detector"][mask], labels, chosen.propose)
        parts[name] = part
    return parts


def table(parts: dict[str, Any]) -> str:
    lines = [
        "| part | pairs | positive | AUC detector | AUC rules | AUC cosine | "
        "confident: P / R (flagged) | propose: P / R (flagged) |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for name, part in parts.items():

        def pr(point):
            return f"{point['precision']:.3f} / {point['recall']:.3f} ({point['flagged']})"

        lines.append(
            f"| {name.replace('_', '-')} | {part['pairs']} | {part['positives']} | "
            f"{part['detector_auc']:.3f} | {part['rules_auc']:.3f} | "
            f"{part.get('cosine_auc', float('nan')):.3f} | {pr(part['confident'])} | "
            f"{pr(part['propose'])} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="pairs in VitaminC's JSON-lines shape")
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
    if args.data is None or not args.data.exists():
        parser.error("--data PATH (a file of VitaminC's shape) is required, except with --smoke")
    if args.smoke:
        args.fit, args.data_dir = False, ROOT / "benchmarks" / "out" / "smoke-supersede"
    setup_django(args.data_dir)

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
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    info = machine()
    print(f"\n`{command}`\n")
    print(describe(info))
    print(
        f"Data: {args.data.name}, {len(rows)} pairs, {int(columns['labels'].sum())} labelled "
        f"{POSITIVE}; assessed{'' if args.no_cosine else ' and embedded'} in {seconds:.1f} s. "
        f"Thresholds: confident {model().confident:.3f}, propose {model().propose:.3f}.\n"
    )
    print(table(parts))
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    write_json(
        args.json,
        {
            "dataset": args.data.name,
            "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "parts": parts,
            "model": {"confident": model().confident, "propose": model().propose},
            "seconds": seconds,
            "commit": commit,
            "command": command,
            "machine": info,
        },
    )


if __name__ == "__main__":
    main()
