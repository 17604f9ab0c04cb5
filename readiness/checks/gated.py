"""The gated checks on contradiction pairs, LIAR's statements, correction pairs and labelled
named entities, and ``NotMeasurable``:
data that cannot measure a check, which is not a failure of what it measures."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from readiness.checks.sandbox import Result, _agent, _sandboxed
from readiness.corrections import assessed, measured
from readiness.corrections import read as read_corrections
from readiness.dialogue import measure as measure_dialogue
from readiness.dialogue import read as read_dialogue
from readiness.liar import measure as measure_liar
from readiness.liar import read as read_liar
from readiness.metrics import auc
from readiness.ner import engine_spans, model_spans, read_conll
from readiness.ner import scores as ner_scores
from readiness.pairs import from_claims, from_dialogues, score
from readiness.pairs import read as read_pairs


class NotMeasurable(ValueError):
    """The data given cannot measure a check (a file of another shape, one label only): the
    check is not run, which is not a failure of what it measures."""


def read_data(reader: Callable[[Path], Any], path: Path, shape: str) -> Any:
    """``reader(path)``, or NotMeasurable naming the file and what is wrong with it."""
    try:
        return reader(path)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        problem = f"no field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise NotMeasurable(f"{path.name} is not {shape}: {problem}") from exc


def pairs_checks(path: Path) -> dict[str, Result]:
    """The divergence detector's AUC on labelled statement pairs (ProSeCCo's shape)."""
    pairs = read_data(read_pairs, path, "pairs in ProSeCCo's shape")
    found = _divergence_auc(pairs)
    if found is None:
        raise NotMeasurable(f"{path.name}: an AUC needs pairs of both labels")
    return {"r.divergence.pairs_auc": found}


def _divergence_auc(pairs: list) -> Result | None:
    """The divergence detector's AUC on two writers' pairs, with the embedder's cosine and the
    slot rule alone beside it; None without both labels."""
    scored = score(pairs)
    labels = scored.labels
    if labels.all() or not labels.any():
        return None
    slot = [max((r["strength"] for r in a.rules if r["rule"] == "slot"), default=0.0)
            for a in scored.assessments]  # fmt: skip
    return (
        auc(scored.scores, labels),
        {
            "pairs": len(labels),
            "positives": int(labels.sum()),
            "cosine_auc": round(auc(scored.similarities, labels), 4),
            "slot_rule_auc": round(auc(np.array(slot), labels), 4),
        },
    )


def liar_checks(train: Path, measured: Path) -> dict[str, Result]:
    """The A score's AUC on LIAR-shaped statements (``readiness.liar``), with the kept model:
    the training statements loaded and their verdicts replayed, the measured ones written;
    all rolled back."""

    def run() -> Result:
        agent = _agent()
        shape = "LIAR-shaped"
        result = measure_liar(
            agent, read_data(read_liar, train, shape), read_data(read_liar, measured, shape)
        )
        return result.auc, {
            "statements": result.statements,
            "positives": result.positives,
            "negatives": result.negatives,
            "baselines": {k: round(v, 4) for k, v in result.baselines.items()},
            "train": train.name,
            "train_sha256": hashlib.sha256(train.read_bytes()).hexdigest(),
        }

    return {"a.encoding.liar_auc": _sandboxed(run)}


def corrections_checks(path: Path) -> dict[str, Result]:
    """The precision of what consolidation would apply without a curator
    (``memories.temporal.judgment``, the two writers unknown) on the held-out part of
    VitaminC-shaped pairs (``readiness.corrections``: the part nothing was fitted on), with its
    recall and the detector's AUC beside the embedder's cosine."""
    rows = read_data(read_corrections, path, "pairs in VitaminC's shape")
    held = [row for row in rows if row["held_out"]]
    labels = [row["positive"] for row in held]
    if all(labels) or not any(labels):
        raise NotMeasurable(f"{path.name}: the held-out part needs pairs of both labels")
    part = measured(assessed(held, with_cosine=True))["held_out"]
    point = part["applied"]
    precision = point["precision"] if point["flagged"] else 0.0
    # The same claims as two writers' memories with no order: a divergence detector's pairs.
    divergence = _divergence_auc(from_claims(path))
    return {
        **({"r.divergence.claims_auc": divergence} if divergence else {}),
        "t.corrections.heldout_precision": (
            precision,
            {
                "pairs": part["pairs"],
                "positives": part["positives"],
                "flagged": point["flagged"],
                "recall": round(point["recall"], 4),
                "threshold": part["confident"]["threshold"],
                "auc": round(part["detector_auc"], 4),
                "cosine_auc": round(part["cosine_auc"], 4),
                "propose": {k: round(v, 4) for k, v in part["propose"].items()},
            },
        ),
    }


def dialogue_checks(path: Path) -> dict[str, Result]:
    """Corrections in conversation (``readiness.dialogue``): the precision of what
    consolidation would apply, and the recall of what it catches (applied or proposed), on
    dialogues in the Schema-Guided Dialogue shape."""
    pairs = read_data(read_dialogue, path, "dialogues in the Schema-Guided Dialogue shape")
    figures = measure_dialogue(pairs)
    if not figures["positives"] or figures["positives"] == figures["pairs"]:
        raise NotMeasurable(f"{path.name}: the pairs need both labels")
    detail = {k: round(v, 4) if isinstance(v, float) else v for k, v in figures.items()}
    precision = figures["applied_precision"] if figures["applied"] else 0.0
    divergence = _divergence_auc(from_dialogues(path))
    return {
        **({"r.divergence.dialogue_auc": divergence} if divergence else {}),
        "t.corrections.dialogue_precision": (precision, detail),
        "t.corrections.dialogue_recall": (figures["caught_recall"], detail),
    }


def ner_checks(path: Path) -> dict[str, Result]:
    """What the engine stores of CoNLL-shaped sentences against the plain model
    (``readiness.ner``), over PER, ORG and LOC: its precision's gain, and its recall's change;
    every document written in a workspace of its own, all rolled back."""
    documents = read_data(read_conll, path, "CoNLL-2003-shaped sentences")
    if not any(s.gold for d in documents for s in d):
        raise NotMeasurable(f"{path.name}: no labelled entities")

    def run() -> dict[str, Result]:
        sentences = [s for d in documents for s in d]
        gold = [s.gold for s in sentences]
        model = ner_scores(gold, model_spans(sentences)[0])["micro_per_org_loc"]
        engine = ner_scores(gold, engine_spans(documents, lambda n: _agent())[0])
        engine = engine["micro_per_org_loc"]
        detail = {
            "documents": len(documents),
            "sentences": len(sentences),
            "gold": model["gold"],
            **{f"model_{k}": round(model[k], 4) for k in ("precision", "recall", "f1")},
            **{f"engine_{k}": round(engine[k], 4) for k in ("precision", "recall", "f1")},
        }
        return {
            "r.links.ner_precision_gain": (engine["precision"] - model["precision"], detail),
            "r.links.ner_recall_kept": (engine["recall"] - model["recall"], detail),
        }

    return _sandboxed(run)
