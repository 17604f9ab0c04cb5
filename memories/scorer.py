"""The bundled STARE scorer: proposes s, t, a, r, e scores for memories written in bulk.

The model is a logistic regression per dimension over the memory's own embedding (the vector
the engine stores anyway) and a few lexical features (``LEXICAL_FEATURES``). Its weights are
``data/scorer_model.json``, fitted by ``benchmarks/scorer.py --write`` on LoCoMo conversations
and measured on others; the measurement is ``data/scorer_calibration.json``. Nothing is
downloaded.

It fills only what it is calibrated for: a dimension whose held-out AUC reached
``CALIBRATED_AUC`` and the categories its calibration data covered. ``MM_STARE_AUTO_SKIP_DIMS``
and ``MM_STARE_AUTO_SKIP_CATEGORIES`` replace those defaults. A dimension the scorer does not
fill stays empty, and a score the writer gave is never replaced.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memories.embeddings import current_model_name
from memories.models import STARE_DIMENSIONS, Memory

#: How mature the bundled scorer is per dimension, read by the readiness registry.
READINESS = {"S/scorer": "beta", "T/scorer": "beta", "R/scorer": "beta"}
DATA = Path(__file__).resolve().parent / "data"
MODEL_PATH = DATA / "scorer_model.json"
CALIBRATION_PATH = DATA / "scorer_calibration.json"
#: A dimension counts as calibrated when its AUC on held-out conversations is at least this.
CALIBRATED_AUC = 0.70

_MONTHS = "january february march april may june july august september october november december"
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
_TIME_WORDS = (
    "yesterday today tonight tomorrow ago last next week weeks weekend month months year years "
    "morning evening afternoon night since until recently soon later earlier before after "
    "day days ago when then"
)
TEMPORAL = re.compile(
    r"\b(?:" + "|".join((_MONTHS + " " + _DAYS + " " + _TIME_WORDS).split()) + r"|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|us|our|ours)\b", re.IGNORECASE)
WORD = re.compile(r"\w+")
#: A capitalised word that does not start a sentence: names of people, places, things.
NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+")
LEXICAL_FEATURES = (
    "log_words",
    "has_digit",
    "temporal_words",
    "first_person_share",
    "question",
    "exclamation",
    "names",
)


def lexical(text: str) -> list[float]:
    words = WORD.findall(text)
    count = max(len(words), 1)
    return [
        math.log1p(len(words)),
        float(any(c.isdigit() for c in text)),
        float(len(TEMPORAL.findall(text))),
        len(FIRST_PERSON.findall(text)) / count,
        float("?" in text),
        float("!" in text),
        float(len(NAME.findall(text))),
    ]


def features(texts: list[str], vectors: np.ndarray) -> np.ndarray:
    """One row per memory: its embedding, then ``LEXICAL_FEATURES``."""
    lexical_rows = np.array([lexical(text) for text in texts], dtype=float).reshape(
        len(texts), len(LEXICAL_FEATURES)
    )
    return np.hstack([np.asarray(vectors, dtype=float).reshape(len(texts), -1), lexical_rows])


@dataclass(frozen=True)
class Scorer:
    embedding_model: str  # the embedder whose vectors it was fitted on
    mean: np.ndarray
    scale: np.ndarray
    weights: dict[str, tuple[np.ndarray, float]]  # dimension → (weights, bias)

    def predict(self, texts: list[str], vectors: np.ndarray) -> dict[str, np.ndarray]:
        """Each fitted dimension's probability for each memory."""
        x = (features(texts, vectors) - self.mean) / self.scale
        return {dim: 1.0 / (1.0 + np.exp(-(x @ w + b))) for dim, (w, b) in self.weights.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "embedding_model": self.embedding_model,
            "features": f"embedding ({len(self.mean) - len(LEXICAL_FEATURES)}), "
            + ", ".join(LEXICAL_FEATURES),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "dimensions": {
                dim: {"weights": w.tolist(), "bias": b} for dim, (w, b) in self.weights.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scorer:
        return cls(
            embedding_model=data["embedding_model"],
            mean=np.array(data["mean"]),
            scale=np.array(data["scale"]),
            weights={
                dim: (np.array(item["weights"]), float(item["bias"]))
                for dim, item in data["dimensions"].items()
            },
        )


@functools.cache
def bundled_scorer() -> Scorer:
    return Scorer.from_json(json.loads(MODEL_PATH.read_text()))


@functools.cache
def calibration() -> dict[str, Any]:
    """The recorded measurement of the bundled model (see ``benchmarks/scorer.py``)."""
    return json.loads(CALIBRATION_PATH.read_text())


def parse_letters(text: str, name: str) -> frozenset[str]:
    """``s,t`` → {"s", "t"}; ``none`` → nothing. Raises ImproperlyConfigured naming ``name``."""
    if text.strip().lower() == "none":
        return frozenset()
    letters = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [letter for letter in letters if letter not in STARE_DIMENSIONS]
    if unknown:
        raise ImproperlyConfigured(
            f"{name}: {', '.join(map(repr, unknown))} is not a STARE dimension (s, t, a, r, e)"
        )
    return frozenset(letters)


def parse_categories(text: str, name: str) -> frozenset[str]:
    if text.strip().lower() == "none":
        return frozenset()
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in Memory.Category.values]
    if unknown:
        raise ImproperlyConfigured(
            f"{name}: {', '.join(map(repr, unknown))} is not a category "
            f"(one of: {', '.join(Memory.Category.values)})"
        )
    return frozenset(names)


def skipped_dimensions() -> frozenset[str]:
    """``MM_STARE_AUTO_SKIP_DIMS``, by default the dimensions not calibrated."""
    configured = settings.MM_STARE_AUTO_SKIP_DIMS
    if configured is None:
        calibrated = calibration()["dimensions"]
        return frozenset(d for d in STARE_DIMENSIONS if not calibrated.get(d, {}).get("calibrated"))
    skipped = parse_letters(configured, "MM_STARE_AUTO_SKIP_DIMS")
    unfitted = sorted(set(STARE_DIMENSIONS) - skipped - set(bundled_scorer().weights))
    if unfitted:
        raise ImproperlyConfigured(
            f"MM_STARE_AUTO_SKIP_DIMS: the bundled scorer has no model for {', '.join(unfitted)} "
            "(no outside labels to fit it on); keep it in the list"
        )
    return skipped


def skipped_categories() -> frozenset[str]:
    """``MM_STARE_AUTO_SKIP_CATEGORIES``, by default the categories the calibration did not
    cover."""
    configured = settings.MM_STARE_AUTO_SKIP_CATEGORIES
    if configured is None:
        covered = set(calibration()["categories"])
        return frozenset(c for c in Memory.Category.values if c not in covered)
    return parse_categories(configured, "MM_STARE_AUTO_SKIP_CATEGORIES")


def auto_scores(
    texts: list[str],
    vectors: np.ndarray,
    categories: list[str],
    given: list[set[str]],
) -> list[dict[str, float]]:
    """The scores the scorer adds to each memory: the dimensions it fills, for categories it
        fills, that the writer did not give (``given``), rounded to 4 places. Nothing when the
    vectors come from another embedder than the one the scorer was fitted on."""
    dims = [d for d in STARE_DIMENSIONS if d not in skipped_dimensions()]
    skip_categories = skipped_categories()
    wanted = [
        i for i, category in enumerate(categories) if category not in skip_categories and dims
    ]
    result: list[dict[str, float]] = [{} for _ in texts]
    scorer = bundled_scorer()
    if not wanted or current_model_name() != scorer.embedding_model:
        return result
    predicted = scorer.predict([texts[i] for i in wanted], vectors[wanted])
    for row, i in enumerate(wanted):
        result[i] = {d: round(float(predicted[d][row]), 4) for d in dims if d not in given[i]}
    return result
