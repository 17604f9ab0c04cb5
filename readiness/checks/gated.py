"""The gated checks on contradiction pairs and on LIAR's statements, and ``NotMeasurable``:
data that cannot measure a check, which is not a failure of what it measures."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from readiness.checks.sandbox import Result, _agent, _sandboxed
from readiness.liar import measure as measure_liar
from readiness.liar import read as read_liar
from readiness.metrics import auc
from readiness.pairs import read as read_pairs
from readiness.pairs import score


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
    scored = score(read_data(read_pairs, path, "pairs in ProSeCCo's shape"))
    labels = scored.labels
    if labels.all() or not labels.any():
        raise NotMeasurable(f"{path.name}: an AUC needs pairs of both labels")
    return {
        "r.divergence.pairs_auc": (
            auc(scored.scores, labels),
            {
                "pairs": len(labels),
                "positives": int(labels.sum()),
                "cosine_auc": round(auc(scored.similarities, labels), 4),
            },
        )
    }


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
