"""Fit and measure the bundled STARE scorer on LoCoMo: the calibration table.

    python benchmarks/scorer.py [--data PATH] [--write]

Labels, none made by this project (LoCoMo's question annotations, ``../shared/data``):

* S: the turn is the evidence of at least one question (any category): worth remembering.
* T: the turn is the evidence of a temporal question (category 2): time-bound.
* R: the turn is the evidence of a multi-hop question (category 1): connects to other turns.
* A and E: nothing in the data labels them, so they are not fitted.

Each turn is a memory text as the engine stores it (``"<speaker>: <turn>"``, as in
``benchmarks/locomo.py``). The first ``--train`` conversations fit one logistic regression per
dimension (features: ``memories.scorer.features``; L2 strength chosen by leave-one-conversation-
out AUC among those conversations only); the others are held out and give the AUC, the Brier
score and a reliability table. A dimension is calibrated when its held-out AUC is at least
``memories.scorer.CALIBRATED_AUC``. ``--write`` stores the model and this measurement in
``memories/data/`` (the engine reads both: the model to score, the measurement for its default
skip lists and, later, the readiness report).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, setup_django
from locomo import read

from readiness.locomo import turn_prints
from readiness.metrics import auc

LABELS = {
    "s": ("evidence of any question", None),
    "t": ("evidence of a temporal question (category 2)", 2),
    "r": ("evidence of a multi-hop question (category 1)", 1),
}
UNLABELLED = {
    "a": "no label: LoCoMo annotates no perspective or attribution",
    "e": "no label: LoCoMo annotates no ongoing stories",
}
PENALTIES = (1.0, 10.0, 100.0, 1000.0, 10000.0)
BINS = (0.0, 0.1, 0.2, 0.4, 0.6, 1.0)
#: The category the engine stores LoCoMo turns as (the remember default), the only one the
#: calibration covers.
CATEGORIES = ["fact"]


def fit(
    x: np.ndarray, y: np.ndarray, penalty: float, iterations: int = 25
) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression by Newton's method (the bias is not penalised)."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    beta = np.zeros(d + 1)
    ridge = np.full(d + 1, penalty)
    ridge[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (p - y) + ridge * beta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(ridge)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def predict(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ w + b)))


def reliability(p: np.ndarray, y: np.ndarray) -> list[dict[str, float]]:
    rows = []
    for low, high in zip(BINS, BINS[1:], strict=False):
        inside = (p >= low) & ((p < high) if high < 1.0 else (p <= high))
        if inside.any():
            rows.append(
                {
                    "bin": f"{low:.1f}–{high:.1f}",
                    "memories": int(inside.sum()),
                    "mean_score": round(float(p[inside].mean()), 3),
                    "observed_rate": round(float(y[inside].mean()), 3),
                }
            )
    return rows


def embed(texts: list[str], cache: Path) -> np.ndarray:
    from memories.embeddings import get_embedder

    model = get_embedder().model_name
    key = hashlib.sha256((model + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    path = cache / f"scorer-embeddings-{key}.npy"
    if path.exists():
        return np.load(path)
    print(f"  embedding {len(texts):,} turns", file=sys.stderr, flush=True)
    vectors = get_embedder().embed(texts)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared/data/locomo/locomo_dev7.json"
    )
    parser.add_argument("--train", type=int, default=4, help="conversations to fit on")
    parser.add_argument("--write", action="store_true", help="store model and measurement")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke and args.write:
        parser.error("--smoke measures three conversations' first turns: it writes nothing")
    if args.smoke:
        args.train = 2

    setup_django(ROOT / "benchmarks/out/" / ("smoke-scorer-db" if args.smoke else "scorer-db"))
    from memories import scorer

    conversations = read(args.data)[: 3 if args.smoke else None]
    if args.smoke:  # the first 200 turns of each: every step runs, on a tenth of the embedding
        for conversation in conversations:
            conversation.turns = conversation.turns[:200]
    texts, groups, labels = [], [], {dim: [] for dim in LABELS}
    for number, conversation in enumerate(conversations):
        evidence: dict[int | None, set[str]] = {None: set(), 1: set(), 2: set()}
        for question in conversation.questions:
            evidence[None] |= question.evidence
            if question.category in evidence:
                evidence[question.category] |= question.evidence
        for turn in conversation.turns:
            text = f"{turn.speaker}: {turn.text}"
            texts.append(text + (f" [shares a photo: {turn.caption}]" if turn.caption else ""))
            groups.append(number)
            for dim, (_, category) in LABELS.items():
                labels[dim].append(turn.dia_id in evidence[category])
    groups_a = np.array(groups)
    x_raw = scorer.features(texts, embed(texts, ROOT / "benchmarks/out"))
    train = groups_a < args.train
    mean = x_raw[train].mean(axis=0)
    scale = x_raw[train].std(axis=0)
    # Dimensions that (nearly) never vary in the fit set are left unscaled: dividing by a
    # vanishing spread would blow up any new value in them.
    scale[scale < 1e-6] = 1.0
    x = (x_raw - mean) / scale

    results: dict[str, Any] = {}
    weights = {}
    for dim, (label, _) in LABELS.items():
        y = np.array(labels[dim], dtype=float)
        cv = {}
        for penalty in PENALTIES:
            folds = []
            for held in range(args.train):
                inner = train & (groups_a != held)
                w, b = fit(x[inner], y[inner], penalty)
                part = groups_a == held
                folds.append(auc(predict(x[part], w, b), y[part]))
            cv[penalty] = float(np.nanmean(folds))
        penalty = max(cv, key=lambda k: (cv[k], k))
        w, b = fit(x[train], y[train], penalty)
        weights[dim] = (w, b)
        p = predict(x[~train], w, b)
        held_auc = auc(p, y[~train])
        results[dim] = {
            "label": label,
            "penalty": penalty,
            "cv_auc": round(cv[penalty], 4),
            "held_out_memories": int((~train).sum()),
            "held_out_positives": int(y[~train].sum()),
            "auc": round(held_auc, 4),
            "brier": round(float(np.mean((p - y[~train]) ** 2)), 4),
            "base_rate": round(float(y[~train].mean()), 4),
            "reliability": reliability(p, y[~train]),
            "calibrated": held_auc >= scorer.CALIBRATED_AUC,
        }
    for dim, reason in UNLABELLED.items():
        results[dim] = {"label": None, "auc": None, "calibrated": False, "reason": reason}

    names = [c.sample_id for c in conversations]
    from memories.embeddings import get_embedder

    fitted = scorer.Scorer(
        embedding_model=get_embedder().model_name, mean=mean, scale=scale, weights=weights
    )
    model = fitted.to_json()
    example = texts[int(np.flatnonzero(~train)[0])]
    example_vector = get_embedder().embed([example])
    model_text = json.dumps(model, separators=(",", ":")) + "\n"
    measurement = {
        "dataset": args.data.name,
        "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
        "fit_on": names[: args.train],
        # What the fit conversations say, turn by turn: the readiness checks measure the
        # scorer on every conversation that is none of these, whatever its name or file.
        "fit_on_turns": sorted({p for c in conversations[: args.train] for p in turn_prints(c)}),
        "held_out": names[args.train :],
        "calibrated_auc": scorer.CALIBRATED_AUC,
        "categories": CATEGORIES,
        "model_sha256": hashlib.sha256(model_text.encode()).hexdigest(),
        "dimensions": {dim: results[dim] for dim in "stare"},
        # One held-out memory and what the model gives it: a test checks the shipped model,
        # the feature code and the embedder still agree.
        "example": {
            "text": example,
            "scores": {
                dim: round(float(p[0]), 6)
                for dim, p in fitted.predict([example], example_vector).items()
            },
        },
    }

    print(f"Fit on {', '.join(names[: args.train])}; held out {', '.join(names[args.train :])}.")
    print(f"Calibrated: held-out AUC ≥ {scorer.CALIBRATED_AUC}. Categories covered: fact.\n")
    print(table(results))
    for dim in LABELS:
        print(f"\nReliability of {dim.upper()} on the held-out conversations:\n")
        print("| score bin | memories | mean score | observed rate |")
        print("|---|---:|---:|---:|")
        for row in results[dim]["reliability"]:
            print(
                f"| {row['bin']} | {row['memories']} | {row['mean_score']:.3f} "
                f"| {row['observed_rate']:.3f} |"
            )
    skipped = [d for d in "stare" if not results[d]["calibrated"]]
    print(f"\nDefault MM_STARE_AUTO_SKIP_DIMS: {','.join(skipped) or 'none'}")
    shipped = scorer.MODEL_PATH.read_text() if scorer.MODEL_PATH.exists() else ""
    print(f"Shipped model {'is' if shipped == model_text else 'is NOT'} this fit.")
    if args.write:
        scorer.DATA.mkdir(exist_ok=True)
        scorer.MODEL_PATH.write_text(model_text)
        scorer.CALIBRATION_PATH.write_text(json.dumps(measurement, indent=2) + "\n")
        written = [
            str(path.relative_to(ROOT)) for path in (scorer.MODEL_PATH, scorer.CALIBRATION_PATH)
        ]
        print(f"Wrote {' and '.join(written)}.")


def table(results: dict[str, Any]) -> str:
    lines = [
        "| dim | label (LoCoMo) | held-out memories (positives) | AUC held-out | CV AUC (fit set) "
        "| L2 | Brier (base rate) | calibrated |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for dim in "stare":
        r = results[dim]
        if r["label"] is None:
            lines.append(f"| {dim.upper()} | {r['reason']} | – | – | – | – | – | no |")
            continue
        lines.append(
            f"| {dim.upper()} | {r['label']} | {r['held_out_memories']:,} "
            f"({r['held_out_positives']:,}) | {r['auc']:.3f} | {r['cv_auc']:.3f} "
            f"| {r['penalty']:g} | {r['brier']:.3f} ({r['base_rate']:.3f}) "
            f"| {'yes' if r['calibrated'] else 'no'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
