"""Whether two memories about the same thing disagree: the detectors, cheapest first.

* **Rules** read the two texts: a single-valued attribute given two values (a renewal month,
  a plan, an owner), different numbers, amounts, percentages or dates where the rest of the
  words agree, a negation on one side only, a word on one side whose antonym is on the other.
  Each rule that fires gives a strength (below) and its evidence.
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

#: How strongly each rule says "these disagree" when it fires on two texts about one thing.
STRENGTH = {"attribute": 0.9, "number": 0.7, "antonym": 0.6, "negation": 0.5}
#: The share of content words two texts must have in common (Jaccard) for a rule on the rest
#: of their words (numbers, negation, antonyms) to say they speak of one thing.
SAME_WORDS = 0.3


def _split(text: str) -> list[str]:
    """A list written as one string of words (easier to read than a list of quoted words)."""
    return text.split()


NEGATIONS = frozenset(
    _split(
        "not no never none nobody nothing neither nor cannot without n't isn't aren't wasn't "
        "weren't don't doesn't didn't won't wouldn't can't couldn't shouldn't hasn't haven't "
        "hadn't"
    )
)
#: Pairs of words whose meanings exclude each other, in the forms they are usually written.
ANTONYMS = tuple(
    tuple(pair.split("/"))
    for pair in _split(
        "increase/decrease increased/decreased increasing/decreasing increases/decreases "
        "up/down rise/fall rose/fell rising/falling more/less higher/lower high/low "
        "better/worse best/worst gain/loss gained/lost win/lose won/lost success/failure "
        "succeeded/failed true/false right/wrong yes/no accept/reject accepted/rejected "
        "approve/reject approved/rejected agree/disagree agreed/disagreed support/oppose "
        "supports/opposes supported/opposed for/against allow/forbid allowed/forbidden "
        "include/exclude included/excluded open/closed opened/closed start/stop "
        "started/stopped enable/disable enabled/disabled on/off buy/sell bought/sold "
        "always/never all/none everyone/nobody before/after early/late earlier/later "
        "cheap/expensive cheaper/dearer strong/weak stronger/weaker safe/dangerous "
        "legal/illegal possible/impossible likely/unlikely able/unable fair/unfair "
        "happy/unhappy like/dislike love/hate loves/hates loved/hated good/bad "
        "renew/cancel renewed/cancelled renewed/canceled keep/drop kept/dropped "
        "present/absent pass/fail passed/failed public/private full/empty rich/poor"
    )
)
_ANTONYM_OF: dict[str, set[str]] = {}
for _left, _right in ANTONYMS:
    _ANTONYM_OF.setdefault(_left, set()).add(_right)
    _ANTONYM_OF.setdefault(_right, set()).add(_left)

MONTHS = _split(
    "january february march april may june july august september october november december"
)
_MONTH = "|".join(MONTHS)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+(?:[.,]\d+)*")
_NUMBER = re.compile(
    r"(?P<currency>[$€£¥])?\s?(?P<value>\d+(?:[.,]\d+)*)\s?(?P<unit>%|percent\b|per cent\b|"
    r"k\b|m\b|bn\b|million\b|billion\b|thousand\b|dollars?\b|euros?\b|pounds?\b)?",
    re.IGNORECASE,
)
SCALES = {"k": "e3", "thousand": "e3", "m": "e6", "million": "e6", "bn": "e9", "billion": "e9"}
_YEAR = re.compile(r"^(1[89]\d\d|20\d\d)$")
#: Attributes a thing has one value of at a time: (name, pattern whose group ``value`` is it).
ATTRIBUTES = (
    (
        "month",
        re.compile(
            rf"\b(?:renew\w*|due|deadline|expir\w*|ends?|starts?)\b[^.]*?\b"
            rf"(?:in|on|by|from|until)\s+(?P<value>{_MONTH})\b",
            re.IGNORECASE,
        ),
    ),
    (
        "plan",
        re.compile(
            r"\b(?:on|to|the)\s+(?:the\s+)?(?P<value>[a-z]+)\s+(?:plan|tier)\b", re.IGNORECASE
        ),
    ),
    (
        "owner",
        re.compile(
            r"\b(?:owner\s+is|owned\s+by|run\s+by|managed\s+by|led\s+by)\s+"
            r"(?P<value>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)"
        ),
    ),
)
STOP_WORDS = frozenset(
    _split(
        "a an the and or but if of to in on at by for with from as is are was were be been being "
        "it its this that these those there here i you he she we they me him her us them my your "
        "his our their what which who whom whose when where why how do does did have has had will "
        "would shall should can could may might must so than then too very just also about into "
        "over under again further once"
    )
)


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


def antonyms(word: str) -> set[str]:
    """The words whose meaning excludes ``word``'s (``ANTONYMS``)."""
    return _ANTONYM_OF.get(word, set())


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def content(tokens: list[str]) -> set[str]:
    """The words that say what a text is about: no stop words, negations or numbers."""
    return {t for t in tokens if t not in STOP_WORDS and t not in NEGATIONS and not t[0].isdigit()}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


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


def attributes(text: str) -> dict[str, set[str]]:
    return {
        name: {match.group("value").lower() for match in pattern.finditer(text)}
        for name, pattern in ATTRIBUTES
        if pattern.search(text)
    }


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
    if overlap >= SAME_WORDS:
        fired += _differing("number", "kind", numbers(first), numbers(second))
        a_negated = sum(word in NEGATIONS for word in a_words) % 2
        b_negated = sum(word in NEGATIONS for word in b_words) % 2
        if a_negated != b_negated:
            fired.append({"rule": "negation", "negated": "first" if a_negated else "second"})
        a_set, b_set = set(a_words), set(b_words)
        for word in sorted(a_set - b_set):
            opposite = sorted((_ANTONYM_OF.get(word, set()) & b_set) - a_set)
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
