"""Whether two memories say the same thing in other words (a near-duplicate), read from the
two texts and their vectors' similarity.

Two gates must both open: the embedder's cosine similarity is at least
``MM_DEDUPE_MIN_SIMILARITY`` and the Jaccard overlap of the two texts' word shingles (single
words and pairs of neighbouring words, lower case) is at least ``MM_DEDUPE_MIN_OVERLAP``. Then
guards refuse the pair when the texts differ in what a merge would lose, however close they are:

* **numbers**: amounts, percentages, counts, years, months
  (``memories.divergence.detectors.numbers``);
* **dates**: a weekday or a relative day (today, tomorrow, next week) on one side only;
* **names**: a word written with a capital inside a sentence (a person, a place, a product) on
  one side that the other does not have, in any case; or entities found in one memory and not
  the other (the relational issue's extraction: "Priya approved it" names Priya);
* **negation**: a negation on one side and not the other (an odd count of them), or a word on
  one side whose antonym is on the other (``memories.divergence.detectors.ANTONYMS``).

The thresholds were measured on outside data (``benchmarks/dedupe.py``; BENCHMARKS.md): the
pairs of distinct turns nearest to each other in LoCoMo, against the same turns written again
with small edits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memories.divergence.detectors import NEGATIONS, STOP_WORDS, antonyms, numbers, words

_DAYS = frozenset(
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    + ("today", "tonight", "tomorrow", "yesterday", "weekend", "week", "month", "year")
)
#: A word written with a capital that does not begin a sentence (nor the text).
_NAME = re.compile(r"(?<![.!?:;\]\)\"]\s)(?<=\s)[A-Z][\w'-]*")


@dataclass(frozen=True)
class Verdict:
    """The gates and guards for one pair, and the decision."""

    similarity: float
    overlap: float
    refused: list[str] = field(default_factory=list)  # the guards that refused the pair
    duplicate: bool = False

    def evidence(self) -> dict:
        return {
            "similarity": round(self.similarity, 6),
            "overlap": round(self.overlap, 6),
            **({"refused": self.refused} if self.refused else {}),
        }


def shingles(text: str) -> set[str]:
    """A text's words and pairs of neighbouring words, lower case."""
    tokens = words(text)
    return set(tokens) | {f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)}


def overlap(first: str, second: str) -> float:
    a, b = shingles(first), shingles(second)
    return len(a & b) / len(a | b) if a | b else 1.0


def names(text: str) -> set[str]:
    """Words written with a capital inside a sentence, lower case (not I, I'm, …). A sentence's
    first word may be a name or not; the entities the engine found in each memory (``guards``'
    ``entities``) say which."""
    found = {word.lower() for word in _NAME.findall(". " + text.replace("’", "'"))}
    return {word for word in found if word.split("'")[0] not in STOP_WORDS}


def guards(
    first: str, second: str, entities: tuple[set[str], set[str]] = (set(), set())
) -> list[str]:
    """The guards that refuse merging ``first`` and ``second`` (empty: none does); ``entities``
    are the names of the entities each mentions (links from the relational issue's extraction):
    one whose words the other text lacks, in any case, refuses the pair."""
    refused = []
    if numbers(first) != numbers(second):
        refused.append("numbers")
    a_words, b_words = words(first), words(second)
    a_set, b_set = set(a_words), set(b_words)
    if (a_set & _DAYS) != (b_set & _DAYS):
        refused.append("dates")
    missing = any(not set(words(name)) <= b_set for name in entities[0]) or any(
        not set(words(name)) <= a_set for name in entities[1]
    )
    if (names(first) - b_set) or (names(second) - a_set) or missing:
        refused.append("names")
    negated = [sum(word in NEGATIONS for word in text) % 2 for text in (a_words, b_words)]
    antonym = any(antonyms(word) & (b_set - a_set) for word in a_set - b_set)
    if negated[0] != negated[1] or antonym:
        refused.append("negation")
    return refused


def judge(
    first: str,
    second: str,
    similarity: float,
    *,
    min_similarity: float,
    min_overlap: float,
    entities: tuple[set[str], set[str]] = (set(), set()),
) -> Verdict:
    """The verdict on two texts whose vectors' cosine similarity is ``similarity``."""
    shared = overlap(first, second)
    if similarity < min_similarity or shared < min_overlap:
        return Verdict(similarity=similarity, overlap=shared)
    refused = guards(first, second, entities)
    return Verdict(similarity=similarity, overlap=shared, refused=refused, duplicate=not refused)
