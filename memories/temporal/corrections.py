"""Whether a newer statement corrects an older one about the same subject, read from the two
texts alone (no model): the values each gives for one thing, and the words that say a value
changed.

* **Values** (``memories.temporal.values``): two statements **disagree on a value** when a value
  the older gives holds with none of the newer's values of the same thing, and the newer gives
  one that holds with none of the older's (so a newer text that repeats the old figure beside a
  new figure of something else is not a change).
* **Denials**: a value the newer names only to deny it ("in June, not March", "instead of
  March", "rather than 40") that the older gives: the surest sign there is.
* **Cues** of a change in the newer ("moved to", "no longer", "postponed", "corrected", "changed
  to", "now"...): they make a disagreement surer, never make one.
* **Negation**: one side says "not" where the other does not.

Every finding needs the two texts to speak of one thing: the share of content words they have in
common (``overlap``, Jaccard, values left out). ``assess`` gives a score in [0, 1]; the model's
``confident`` threshold (set on the tuning part of a public set of labelled claim pairs and
measured on a part kept apart: ``benchmarks/supersede.py``, BENCHMARKS.md) is one of the ways
``memories.temporal.judgment`` lets consolidation apply a change without a curator.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from memories.lexicon import NEGATIONS, STOP_WORDS, jaccard
from memories.temporal.values import MONTHS, WORD, Value, values

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"T/corrections": "beta"}
#: Words in the newer text that say a value changed.
CUES = re.compile(
    r"\b(?:moved|moves|changed|changes|switched|rescheduled|postponed|delayed|pushed\s+back|"
    r"brought\s+forward|no\s+longer|not\s+any\s*more|anymore|instead|rather\s+than|corrected|"
    r"correction|actually|updated|revised|now|replaced|became|becomes)\b",
    re.IGNORECASE,
)
#: A value the newer text names to deny it: "not March", "instead of 40", "rather than June".
_DENIAL = re.compile(
    r"\b(?:not|never|instead\s+of|rather\s+than|no\s+longer)\s+"
    r"(?:in\s+|on\s+|at\s+|the\s+|by\s+)?(?P<what>[^\s,.;:()]+(?:\s+[^\s,.;:()]+){0,2})",
    re.IGNORECASE,
)
#: The order findings are listed in, strongest sign first.
STRENGTH = {"denial": 1.0, "value": 0.85, "negation": 0.6, "cue": 0.4}


@dataclass(frozen=True)
class Correction:
    """How surely ``newer`` corrects ``older``, and why (strongest finding first)."""

    score: float
    overlap: float
    findings: list[dict] = field(default_factory=list)


def _content(text: str, given: list[Value]) -> set[str]:
    named = {w.lower() for v in given for w in WORD.findall(v.text)}
    return {
        w
        for w in (w.lower() for w in WORD.findall(text.replace("’", "'")))
        if w not in named
        and w not in STOP_WORDS
        and w not in NEGATIONS
        and w not in MONTHS
        and not w[0].isdigit()
        and len(w) > 1
    }


def _negated(text: str) -> bool:
    words = [w.lower() for w in WORD.findall(text.replace("’", "'"))]
    return sum(w in NEGATIONS or w.endswith("n't") for w in words) % 2 == 1


def _denied(text: str) -> list[Value]:
    return [v for match in _DENIAL.finditer(text) for v in values(match.group("what"))]


def _instants(given: list[Value]) -> set[tuple[float, float]]:
    """The dates that say when a figure held: stamps, and dates bounded by "before", "after",
    "by"..."""
    return {
        (v.low, v.high)
        for v in given
        if v.kind == "stamp"
        or (v.kind in ("when", "day") and (math.isinf(v.low) or math.isinf(v.high)))
    }


def _changed(older: list[Value], newer: list[Value], kind: str) -> dict | None:
    """The values of ``kind`` the newer changes: old ones no aligned newer value holds with,
    and new ones no aligned older value holds with; None when either side has none."""
    before = [v for v in older if v.kind == kind]
    after = [w for w in newer if w.kind == kind]
    # A value is gone when one of the newer's is of the same thing and none of them, of that
    # thing or not, holds with it (the newer may say it of words the older did not use).
    gone = [
        v
        for v in before
        if any(v.aligned(w) for w in after) and not any(v.agrees(w) for w in after)
    ]
    new = [
        w
        for w in after
        if any(w.aligned(v) for v in before) and not any(w.agrees(v) for v in before)
    ]
    if not (gone and new):
        return None
    pairs = [(v, w) for v in gone for w in new if v.aligned(w)]
    return {
        "rule": "value",
        "kind": kind,
        "old": [v.text for v in gone],
        "new": [w.text for w in new],
        # How surely the values are of one thing: their contexts' best overlap.
        "context": round(
            max((jaccard(set(v.context), set(w.context)) for v, w in pairs), default=0.0), 4
        ),
        "bounded": any(math.isinf(x.low) or math.isinf(x.high) for p in pairs for x in p),
        "crowded": len(before) + len(after),
        "agreeing": sum(1 for v in before for w in after if v.aligned(w) and v.agrees(w)),
    }


def findings(older: str, newer: str) -> tuple[float, list[dict]]:
    """The overlap of the two texts and what says the newer corrects the older, strongest
    first."""
    old_values, new_values = values(older), values(newer)
    overlap = jaccard(_content(older, old_values), _content(newer, new_values))
    found: list[dict] = []
    denied = _denied(newer)
    for value in old_values:
        if any(value.kind == d.kind and value.agrees(d) for d in denied):
            found.append({"rule": "denial", "kind": value.kind, "denied": value.text})
            break
    # What the newer denies is not what it gives.
    given = [v for v in new_values if not any(v.agrees(d) and d.text in v.text for d in denied)]
    # Each side's instants said as when its figures held ("as of March 21", "before April 13"):
    # two figures of different instants may both be true.
    instants = [_instants(side) for side in (old_values, given)]
    later = bool(instants[0] and instants[1] and instants[0] != instants[1])
    for kind in sorted({v.kind for v in old_values} & {v.kind for v in given} - {"stamp"}):
        if (change := _changed(old_values, given, kind)) is not None:
            found.append({**change, "other_instant": later})
    if _negated(older) != _negated(newer):
        found.append({"rule": "negation", "negated": "older" if _negated(older) else "newer"})
    cue = CUES.search(newer)
    if cue and not CUES.search(older):
        found.append({"rule": "cue", "words": cue.group().lower()})
    for item in found:
        item["strength"] = STRENGTH[item["rule"]]
    return overlap, sorted(found, key=lambda item: -item["strength"])


#: What the model reads of a pair (``features``), in its weights' order.
FEATURES = (
    "denial",
    "number_change",
    "date_change",
    "other_change",
    "context",
    "overlap",
    "changed_overlap",
    "negation",
    "cue",
    "other_instant",
    "bounded",
    "crowded",
    "agreeing",
)
MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "correction_model.json"


def features(overlap: float, found: list[dict]) -> list[float]:
    """The model's features of a pair from its overlap and findings (``FEATURES``)."""
    rules = {item["rule"] for item in found}
    changes = [item for item in found if item["rule"] == "value"]
    kinds = {item["kind"] for item in changes}
    return [
        float("denial" in rules),
        float(bool(kinds & {"count", "money", "percent"})),
        float(bool(kinds & {"when", "day", "month"})),
        float(bool(kinds & {"time", "weekday"})),
        max((item["context"] for item in changes), default=0.0),
        overlap,
        overlap if changes else 0.0,
        float("negation" in rules),
        float("cue" in rules),
        float(any(item["other_instant"] for item in changes)),
        float(any(item["bounded"] for item in changes)),
        math.log1p(max((item["crowded"] for item in changes), default=0)),
        math.log1p(max((item["agreeing"] for item in changes), default=0)),
    ]


@dataclass(frozen=True)
class Model:
    """A logistic model over ``FEATURES``, fitted by ``benchmarks/supersede.py --fit``, with the
    thresholds chosen on the same tuning part: ``confident`` (apply) and ``propose``."""

    bias: float
    weights: dict[str, float]
    confident: float
    propose: float
    fitted_on: dict

    def probability(self, x: list[float]) -> float:
        z = self.bias + sum(self.weights[name] * v for name, v in zip(FEATURES, x, strict=True))
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))


@functools.cache
def model() -> Model:
    data = json.loads(MODEL_PATH.read_text())
    return Model(
        bias=float(data["bias"]),
        weights={name: float(data["weights"][name]) for name in FEATURES},
        confident=float(data["confident"]),
        propose=float(data["propose"]),
        fitted_on=data["fitted_on"],
    )


def assess(older: str, newer: str) -> Correction:
    """How surely ``newer`` corrects ``older``: the model's probability over the pair's
    findings (none found: 0)."""
    overlap, found = findings(older, newer)
    if not any(item["rule"] in ("denial", "value", "negation") for item in found):
        return Correction(0.0, round(overlap, 6), found)
    score = model().probability(features(overlap, found))
    return Correction(round(score, 6), round(overlap, 6), found)


#: The overlap from which one side negating the other's words is proposed to a curator.
NEGATION_OVERLAP = 0.5


def worth_reading(text: str) -> bool:
    """Whether a newer text can correct anything: it gives a value, a cue of change or a
    negation (cheap; the phase reads only these)."""
    return bool(values(text) or CUES.search(text) or _negated(text))
