"""The learned ranking (``MM_SEARCH_LEARNED``): a search's candidates re-ordered by a logistic
model over the signals the ranking statement computes and a few it cannot.

1. The ranking statement reads its candidates as usual and returns all of them, with their
   signals (up to ``2 × MM_SEARCH_CANDIDATES``).
2. Each candidate gets the features of ``FEATURES``: the statement's own figures (similarity,
   keyword rank, episode similarity, their z-scores, the neighbour term, the relevance), who
   said it (a conversation line's speaker, ``memories.relational.spans.speaker``) against the
   names the query gives, how many candidates its session holds and the best relevance among
   them, its length, and whether it says when something happened while the query asks when
   (``memories.temporal.expressions``).
3. The model's score is a weighted sum of the standardised features (the weights, means and
   scales ship in ``memories/data/search_model.json``, with the data and the procedure that
   fitted them). Relevance becomes the score mapped to [0, 1] over the candidates, and the gate
   and the score of ``memories.search`` are applied to it.

Each hit's explanation shows its ``learned`` figures: the model's score, the relevance before,
and each feature's share of the score. The re-ordering adds no memory the search did not read.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from memories.relational.spans import speaker
from memories.search.gate import gated, scored
from memories.search.hydration import SearchHit
from memories.search.recipe import Recipe
from memories.temporal.expressions import asks_when, says_when

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"S/learned": "beta"}
MODEL_PATH = Path(__file__).resolve().parent.parent / "data" / "search_model.json"

#: The features, in the model's order.
FEATURES = (
    "similarity_z",
    "keyword_z",
    "episode_z",
    "neighbour",
    "relevance",
    "similarity",
    "keyword_rank_log",
    "episode_similarity",
    "speaker_named",
    "other_speaker_named",
    "named_in_text",
    "session_candidates_log",
    "session_best_relevance",
    "length_log",
    "says_when_asked",
    "says_when",
)


@dataclass(frozen=True)
class Model:
    version: str
    #: The features it weighs, a subset of ``FEATURES`` in their order.
    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    intercept: float
    #: What it was fitted on: the data, its conversations (``fit_on``) and their turns' prints
    #: (``fit_on_turns``, ``readiness.locomo.turn_prints``), the command.
    fitted_on: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def columns(self) -> list[int]:
        return [FEATURES.index(name) for name in self.names]


@functools.cache
def shipped_model() -> Model:
    """The model in ``memories/data/search_model.json``."""
    return model_from(json.loads(MODEL_PATH.read_text()))


def model_from(data: dict) -> Model:
    names = tuple(data["features"])
    if not set(names) <= set(FEATURES) or list(names) != [f for f in FEATURES if f in names]:
        raise ValueError(f"a model's features are some of {FEATURES}, in that order")
    sizes = {len(data[key]) for key in ("mean", "scale", "weights")}
    if sizes != {len(names)}:
        raise ValueError("a model has one mean, scale and weight for each of its features")
    model = Model(
        version=str(data["version"]),
        names=names,
        mean=np.array(data["mean"], dtype=np.float64),
        scale=np.array(data["scale"], dtype=np.float64),
        weights=np.array(data["weights"], dtype=np.float64),
        intercept=float(data["intercept"]),
        fitted_on=dict(data.get("fitted_on", {})),
    )
    figures = np.concatenate([model.mean, model.scale, model.weights, [model.intercept]])
    if not np.isfinite(figures).all() or (model.scale <= 0).any():
        raise ValueError("a model's figures are finite numbers and its scales above 0")
    return model


def _name_pattern(name: str) -> re.Pattern:
    """The whole name or its first word, as words, in any case."""
    forms = sorted({name, name.split()[0]}, key=len, reverse=True)
    return re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, forms))})(?!\w)", re.IGNORECASE)


def features(hits: list[SearchHit], query: str) -> np.ndarray:
    """The features (``FEATURES``) of every candidate of one search, a row each."""
    said = [speaker(hit.memory.text) for hit in hits]
    speakers = {found[0] for found in said if found is not None}
    patterns = {name: _name_pattern(name) for name in speakers}
    named = {name for name in speakers if patterns[name].search(query)}
    # A memory without a session is a session of its own.
    sessions = [
        (True, hit.memory.session) if hit.memory.session else (False, hit.memory.pk) for hit in hits
    ]
    held: dict[tuple, int] = defaultdict(int)
    best: dict[tuple, float] = defaultdict(float)
    for session, hit in zip(sessions, hits, strict=True):
        held[session] += 1
        best[session] = max(best[session], hit.relevance)
    asked = asks_when(query)
    rows = []
    for hit, found, session in zip(hits, said, sessions, strict=True):
        text = hit.memory.text
        body = text[found[2] + 1 :] if found is not None else text
        own = found[0] if found is not None else None
        when = says_when(body)
        rows.append(
            (
                hit.similarity_z,
                hit.keyword_z,
                hit.episode_z,
                hit.neighbour,
                hit.relevance,
                hit.similarity,
                math.log1p(max(hit.keyword_rank, 0.0)),
                hit.episode_similarity,
                float(own in named),
                float(bool(named) and own not in named),
                float(any(patterns[name].search(body) for name in named if name != own)),
                math.log(held[session]),
                best[session],
                math.log1p(len(body.split())),
                float(asked and when),
                float(when),
            )
        )
    return np.array(rows, dtype=np.float64).reshape(len(hits), len(FEATURES))


def reranked(
    hits: list[SearchHit],
    *,
    query: str,
    limit: int,
    keep: int | None = None,
    model: Model | None = None,
    recipe: Recipe | None = None,
) -> list[SearchHit]:
    """``hits`` (every candidate of one search) re-ordered by the model's relevance, gated and
    scored as ``memories.search`` does for a search of ``limit``; the first ``keep`` (``limit``
    unless given)."""
    if not hits:
        return []
    model = model or shipped_model()
    recipe = recipe or Recipe.default()
    values = features(hits, query)[:, model.columns]
    standardised = (values - model.mean) / model.scale
    logits = standardised @ model.weights + model.intercept
    low, high = logits.min(), logits.max()
    relevant = (logits - low) / (high - low) if high > low else np.ones_like(logits)
    # The gate passes only candidates among the max(limit, gate_k) most relevant, and the first
    # ``limit`` of the order are among them: the others are shown only if more are kept.
    shown = sorted(range(len(hits)), key=lambda i: (-relevant[i], hits[i].memory.pk))
    shown = shown[: max(keep or limit, recipe.gate_k)]
    rescored = []
    for index in shown:
        hit = hits[index]
        shares = standardised[index] * model.weights
        rescored.append(
            replace(
                hit,
                relevance=float(relevant[index]),
                score=scored(hit, float(relevant[index])),
                learned={
                    "model": model.version,
                    "score": round(float(logits[index]), 6),
                    "relevance_before": round(hit.relevance, 6),
                    "features": {
                        name: round(float(share), 6)
                        for name, share in zip(model.names, shares, strict=True)
                    },
                },
            )
        )
    return gated(rescored, limit, keep=keep, recipe=recipe)
