"""Fitting the learned ranking's model (``memories.search.learned``) on a search's candidates.

Used by ``benchmarks/locomo.py``: every question's candidates (``memory_search`` with
``every_candidate``) with their features, labelled 1 when the candidate is one of the question's
evidence turns. The model is an L2-regularised logistic regression on the standardised features,
fitted by Newton's method (numpy alone; the problem is small and convex).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from memories.search.learned import FEATURES, Model

#: The L2 penalty (on the standardised weights, not the intercept): fixed before fitting.
L2 = 1.0
ITERATIONS = 25


def fit(
    features: np.ndarray, labels: np.ndarray, names: tuple[str, ...] = FEATURES, l2: float = L2
) -> Model:
    """A logistic model of ``labels`` (0 or 1) on the columns ``names`` of ``features`` (a row
    each, the columns of ``FEATURES``)."""
    features = features[:, [FEATURES.index(name) for name in names]]
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0
    x = np.hstack([(features - mean) / scale, np.ones((len(features), 1))])
    penalty = np.diag(np.r_[np.full(x.shape[1] - 1, l2), 0.0])
    w = np.zeros(x.shape[1])
    for _ in range(ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - labels) + penalty @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    weights = w[:-1]
    digest = hashlib.sha256(" ".join(names).encode() + np.concatenate([mean, scale, w]).tobytes())
    return Model(
        version=digest.hexdigest()[:12],
        names=tuple(names),
        mean=mean,
        scale=scale,
        weights=weights,
        intercept=float(w[-1]),
    )


def write(model: Model, path: Path, fitted_on: dict[str, Any]) -> None:
    """The model as ``memories.search.learned.model_from`` reads it."""
    data = {
        "version": model.version,
        "features": list(model.names),
        "mean": [round(float(v), 10) for v in model.mean],
        "scale": [round(float(v), 10) for v in model.scale],
        "weights": [round(float(v), 10) for v in model.weights],
        "intercept": round(model.intercept, 10),
        "l2": L2,
        "fitted_on": fitted_on,
    }
    # One value to a line, but the turns' prints (thousands) on one.
    text = json.dumps(data, indent=2)
    turns = json.dumps(fitted_on.get("fit_on_turns", []))
    if "fit_on_turns" in fitted_on:
        start = text.index('"fit_on_turns": [')
        end = text.index("]", start) + 1
        text = text[:start] + '"fit_on_turns": ' + turns + text[end:]
    path.write_text(text + "\n")
