"""Names compared as people mean them: normalised, and alike within a threshold.

``normalize`` is what entity resolution compares (case, accents' forms, punctuation and spacing
do not count); ``tokens`` is what a fuzzy match needs in common with a name before it is
compared at all; ``Gazetteer`` finds the names and aliases of a workspace's declared entities in
a text: exactly, or alike (rapidfuzz's ratio at least the threshold) for names of at least
``FUZZY_MIN_CHARS`` characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz, process

#: Names shorter than this (normalised) match exactly or not at all: "Bo" is not "Bob".
FUZZY_MIN_CHARS = 5
#: A word's first letters kept as a token (``tokens``): a misspelling after them still shares it.
PREFIX_CHARS = 3
#: Most words of a name found in a text (longer aliases are matched on their first words only
#: when exact).
MAX_NAME_WORDS = 6
WORD = re.compile(r"\w+(?:['’.&-]\w+)*", re.UNICODE)


def normalize(name: str) -> str:
    """Lower case (``casefold``), Unicode compatibility forms, words only, single spaces:
    ``"  Zephyr   Logistics, Inc."`` → ``"zephyr logistics inc"``."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(_word_key(w) for w in WORD.findall(text))


def _word_key(word: str) -> str:
    return re.sub(r"['’.&-]", "", word)


def tokens(keys: Iterable[str]) -> list[str]:
    """The words of normalised names and each word's first ``PREFIX_CHARS`` letters (marked
    with ``^``): two names a fuzzy match may join share at least one."""
    found: set[str] = set()
    for key in keys:
        for word in key.split():
            found.add(word)
            if len(word) > PREFIX_CHARS:
                found.add("^" + word[:PREFIX_CHARS])
    return sorted(found)


def similarity(a: str, b: str) -> float:
    """How alike two normalised names are, 0 to 100 (rapidfuzz's ratio)."""
    return float(fuzz.ratio(a, b))


def best_match(key: str, candidates: dict[str, object], threshold: float) -> tuple[object, float]:
    """The candidate (by normalised name) most like ``key``, with its score; exact first;
    (None, 0) below ``threshold`` or for a short name that is not exact."""
    if key in candidates:
        return candidates[key], 100.0
    if len(key) < FUZZY_MIN_CHARS or not candidates:
        return None, 0.0
    found = process.extractOne(key, list(candidates), scorer=fuzz.ratio, score_cutoff=threshold)
    if found is None:
        return None, 0.0
    name, score, _ = found
    return candidates[name], float(score)


@dataclass(frozen=True)
class Found:
    """A declared entity's name or alias found in a text."""

    entity: object
    start: int
    end: int
    text: str  # as written in the text
    alias: str  # the normalised name or alias it matched
    score: float


class Gazetteer:
    """The names and aliases of a workspace's declared entities, to find in texts.

    ``entries``: (normalised name or alias, entity). A span of the text (whole words, at most
    ``MAX_NAME_WORDS``) is a mention when its normalised form is an alias, or is alike one
    (``threshold``, names of ``FUZZY_MIN_CHARS`` or more). Overlapping finds: the longest wins,
    then the best score, then the first."""

    def __init__(self, entries: Iterable[tuple[str, object]], threshold: float) -> None:
        self.aliases: dict[str, object] = {}
        for key, entity in entries:
            if key:
                self.aliases.setdefault(key, entity)
        self.threshold = threshold
        self.lengths = sorted(
            {min(len(key.split()), MAX_NAME_WORDS) for key in self.aliases}, reverse=True
        )
        self._keys = list(self.aliases)

    def __bool__(self) -> bool:
        return bool(self.aliases)

    def find(self, text: str) -> list[Found]:
        if not self.aliases:
            return []
        words = [(m.start(), m.end(), normalize(m.group())) for m in WORD.finditer(text)]
        spans: list[tuple[int, int, str]] = []  # (first word, last word + 1, normalised)
        for size in self.lengths:
            for i in range(len(words) - size + 1):
                spans.append((i, i + size, " ".join(w for _, _, w in words[i : i + size])))
        found: list[tuple[int, int, Found]] = []
        fuzzy: list[tuple[int, int, str]] = []
        for first, last, key in spans:
            entity = self.aliases.get(key)
            if entity is not None:
                found.append((first, last, self._found(text, words, first, last, key, entity, 100)))
            elif len(key) >= FUZZY_MIN_CHARS:
                fuzzy.append((first, last, key))
        if fuzzy:
            scores = process.cdist(
                [key for _, _, key in fuzzy],
                self._keys,
                scorer=fuzz.ratio,
                score_cutoff=self.threshold,
                dtype="uint8" if self.threshold == int(self.threshold) else "float32",
            )
            for (first, last, _), row in zip(fuzzy, scores, strict=True):
                best = int(row.argmax())
                if row[best] >= self.threshold and row[best] > 0:
                    alias = self._keys[best]
                    found.append(
                        (
                            first,
                            last,
                            self._found(
                                text, words, first, last, alias, self.aliases[alias], row[best]
                            ),
                        )
                    )
        return _without_overlaps(found)

    @staticmethod
    def _found(text, words, first, last, alias, entity, score) -> Found:
        start, end = words[first][0], words[last - 1][1]
        return Found(entity, start, end, text[start:end], alias, float(score))


def _without_overlaps(found: list[tuple[int, int, Found]]) -> list[Found]:
    taken: set[int] = set()
    kept: list[Found] = []
    for first, last, item in sorted(found, key=lambda f: (f[0] - f[1], -f[2].score, f[0])):
        span = set(range(first, last))
        if span & taken:
            continue
        taken |= span
        kept.append(item)
    return sorted(kept, key=lambda f: f.start)
