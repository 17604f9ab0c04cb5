"""The A score: how far a memory's claim can be trusted, from how clearly it says where it came
from and how often its source has been right.

A source's record counts its memories that were found right (marked ``important``, a
divergence resolved in their favour) and wrong (demoted, superseded by another source's
memory, a divergence resolved against them); each memory counts once, by the sign of its
events. Forgotten and merged memories do not count. Its estimate is shrunk toward a prior so a
source with two memories is not judged on them (``shrunk``)::

    estimate = (right + K × prior) / (right + wrong + K)        K = MM_SOURCE_PRIOR_STRENGTH

with the workspace's prior ``(R + 1) / (R + W + 2)`` over all its judged memories for a source,
and the source's own estimate as the prior of its record on one topic (an entity its memories
mention). A memory's claim comes from the entity it is attributed to, else from its writer.

The reliability of one memory's claim is a small logistic model over four features::

    x1 = logit(source) − logit(prior)                   the source's record
    x2 = mean over its topics of logit(source on topic) − logit(source)
    x3 = mean over its topics of logit(topic) − logit(prior)   (the topic's record, any source)
    x4 = 1 if the claim is checkable (it holds a number), else 0
    reliability = σ(logit(prior) + b + w · x)

and ``A = reliability × (0.5 + 0.5 × clarity)`` (``memories.asymmetry.cues.clarity``). The weights
are ``memories/data/asymmetry_model.json``, fitted by ``benchmarks/asymmetry.py --fit`` on LIAR's
training statements with each statement's own verdict left out of its records, and measured on
statements it was not fitted on (the readiness check ``a.encoding.liar_auc``). A does not change
ranking unless ``MM_ASYMMETRY_RANKING`` is on, which the engine refuses while that check fails.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memories.asymmetry.cues import clarity

#: How mature A is, read by the readiness registry.
READINESS = {"A/encoding": "beta"}
MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "asymmetry_model.json"
FEATURES = ("source", "source_on_topic", "topic", "checkable")
CHECKABLE = re.compile(r"\d")
#: Estimates are kept inside (EPSILON, 1 − EPSILON) so that their logits are finite.
EPSILON = 1e-3


def logit(p: float) -> float:
    p = min(max(p, EPSILON), 1 - EPSILON)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def shrunk(right: float, wrong: float, prior: float, strength: float) -> float:
    """A record's estimate, shrunk toward ``prior`` as if it had ``strength`` more memories
    judged at that rate."""
    return (right + strength * prior) / (right + wrong + strength)


def workspace_prior(right: float, wrong: float) -> float:
    """The prior of a workspace's sources: its judged memories' share of right, add-one."""
    return (right + 1.0) / (right + wrong + 2.0)


@dataclass(frozen=True)
class Model:
    bias: float
    weights: dict[str, float]
    fitted_on: dict

    def reliability(self, features: Sequence[float], prior: float) -> float:
        z = logit(prior) + self.bias
        z += sum(self.weights[name] * x for name, x in zip(FEATURES, features, strict=True))
        return sigmoid(z)


@functools.cache
def model() -> Model:
    data = json.loads(MODEL_PATH.read_text())
    return Model(float(data["bias"]), {k: float(data["weights"][k]) for k in FEATURES}, data)


def features(
    *,
    prior: float,
    source: float | None,
    on_topics: Sequence[float],
    topics: Sequence[float],
    text: str,
) -> list[float]:
    """The model's features of one claim: its source's estimate (None: a source with no
    record, which is the prior), its source's estimates on the claim's topics (those it has a
    record on), the topics' estimates (any source), and its text."""
    source = prior if source is None else source
    x1 = logit(source) - logit(prior)
    x2 = sum(logit(e) - logit(source) for e in on_topics) / len(on_topics) if on_topics else 0.0
    x3 = sum(logit(e) - logit(prior) for e in topics) / len(topics) if topics else 0.0
    x4 = 1.0 if CHECKABLE.search(text) else 0.0
    return [x1, x2, x3, x4]


def a_score(reliability: float, source_kind: str, attributed: bool) -> float:
    """The A score of a claim whose reliability is ``reliability``."""
    return round(reliability * (0.5 + 0.5 * clarity(source_kind, attributed)), 6)
