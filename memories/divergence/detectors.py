"""Whether two memories about the same thing disagree: the detectors, cheapest first.

* **Rules** read the two texts: a single-valued attribute given two values (a renewal month,
  a plan, an owner), different values of one slot of one subject by the reading supersession
  uses, with no order between the two (``slot``: ``memories.divergence.slots``), different
  numbers, amounts, percentages or dates where the rest of the words agree, a negation on one
  side only, a word on one side whose antonym is on the other. Each rule that fires gives a
  strength (below) and its evidence.
* **Geometry**: the embedder's cosine similarity of the two vectors. Two statements that
  contradict each other are about the same thing, so similarity ranks them up; alone it cannot
  tell agreement from disagreement.
* **A model** behind an OpenAI-compatible endpoint, only when ``MM_DIVERGENCE_MODEL_URL`` is
  set (``memories.divergence.model``).

The score of a pair, in [0, 1]: ``(similarity + strongest rule) / 2`` without a model; with one,
the mean of that and the model's probability. Set before any measurement; measured on outside
data by ``benchmarks/divergence.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from memories.divergence.slots import differ
from memories.lexicon import (
    MONTHS,
    NEGATIONS,
    STOP_WORDS,
    antonyms,
    attributes,
    content,
    jaccard,
    words,
)

#: Also the words the rest of the engine reads through this module (``memories.lexicon``).
__all__ = [
    "NEGATIONS",
    "STOP_WORDS",
    "Assessment",
    "antonyms",
    "assess",
    "attributes",
    "cosine",
    "numbers",
    "rules",
    "words",
]

#: How strongly each rule says "these disagree" when it fires on two texts about one thing.
#: ``slot`` (set before it was measured): below a named single-valued attribute, whose words
#: say what the slot is, above a number that differs where the words merely overlap, since its
#: values are checked to be of one thing and asserted on both sides.
STRENGTH = {"attribute": 0.9, "slot": 0.8, "number": 0.7, "antonym": 0.6, "negation": 0.5}
#: The share of content words two texts must have in common (Jaccard) for a rule on the rest
#: of their words (numbers, negation, antonyms) to say they speak of one thing.
SAME_WORDS = 0.3


_NUMBER = re.compile(
    r"(?P<currency>[$€£¥])?\s?(?P<value>\d+(?:[.,]\d+)*)\s?(?P<unit>%|percent\b|per cent\b|"
    r"k\b|m\b|bn\b|million\b|billion\b|thousand\b|dollars?\b|euros?\b|pounds?\b)?",
    re.IGNORECASE,
)
SCALES = {"k": "e3", "thousand": "e3", "m": "e6", "million": "e6", "bn": "e9", "billion": "e9"}
_YEAR = re.compile(r"^(1[89]\d\d|20\d\d)$")


@dataclass(frozen=True)
class Assessment:
    """One pair's score and why."""

    score: float
    similarity: float
    rules: list[dict] = field(default_factory=list)
    model: float | None = None

    @property
    def detector(self) -> str:
        """The detector that decided: the model when one answered, else the rules when one
        fired, else the geometry."""
        if self.model is not None:
            return "model"
        return "rules" if self.rules else "geometry"

    def evidence(self) -> dict:
        return {
            "similarity": round(self.similarity, 6),
            "rules": self.rules,
            **({"model": round(self.model, 6)} if self.model is not None else {}),
        }


def numbers(text: str) -> dict[str, set[str]]:
    """The numeric values of a text by kind: money, percent, year, month, count."""
    found: dict[str, set[str]] = {}
    for match in _NUMBER.finditer(text):
        value = match.group("value").replace(",", "")
        unit = (match.group("unit") or "").lower()
        if match.group("currency") or unit.startswith(("dollar", "euro", "pound")):
            kind = "money"
        elif unit in {"%", "percent", "per cent"}:
            kind = "percent"
        elif _YEAR.match(value) and not unit:
            kind = "year"
        else:
            kind = "count"
        scale = SCALES.get(unit, "")
        found.setdefault(kind, set()).add(value + scale)
    months = {word for word in words(text) if word in MONTHS and word != "may"}
    if months:
        found["month"] = months
    return found


def _differing(
    rule: str, key: str, first: dict[str, set[str]], second: dict[str, set[str]]
) -> list[dict]:
    """One firing of ``rule`` for each slot both texts fill with no value in common."""
    return [
        {"rule": rule, key: slot, "values": [sorted(first[slot]), sorted(second[slot])]}
        for slot in sorted(first.keys() & second.keys())
        if first[slot].isdisjoint(second[slot])
    ]


def rules(first: str, second: str) -> list[dict]:
    """The rules that fire on two texts, strongest first, each with its evidence."""
    a_words, b_words = words(first), words(second)
    overlap = jaccard(content(a_words), content(b_words))
    fired = _differing("attribute", "attribute", attributes(first), attributes(second))
    if (slot := differ(first, second)) is not None:
        fired.append({"rule": "slot", **slot})
    if overlap >= SAME_WORDS:
        fired += _differing("number", "kind", numbers(first), numbers(second))
        a_negated = sum(word in NEGATIONS for word in a_words) % 2
        b_negated = sum(word in NEGATIONS for word in b_words) % 2
        if a_negated != b_negated:
            fired.append({"rule": "negation", "negated": "first" if a_negated else "second"})
        a_set, b_set = set(a_words), set(b_words)
        for word in sorted(a_set - b_set):
            opposite = sorted((antonyms(word) & b_set) - a_set)
            if opposite:
                fired.append({"rule": "antonym", "words": [word, opposite[0]]})
                break
    for rule in fired:
        rule["strength"] = STRENGTH[rule["rule"]]
        rule["overlap"] = round(overlap, 4)
    return sorted(fired, key=lambda rule: -rule["strength"])


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norms) if norms > 0 else 0.0


def assess(first: str, second: str, similarity: float, model: float | None = None) -> Assessment:
    """The score of a pair (module docstring) with its evidence: ``similarity`` is the cosine
    of their vectors, ``model`` the model's probability that they disagree, when one was asked."""
    similarity = min(max(float(similarity), 0.0), 1.0)
    fired = rules(first, second)
    score = (similarity + (fired[0]["strength"] if fired else 0.0)) / 2
    if model is not None:
        score = (score + model) / 2
    return Assessment(score=score, similarity=similarity, rules=fired, model=model)
