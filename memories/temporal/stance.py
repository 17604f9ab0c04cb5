"""How a statement holds what it says: as a present fact, or as something less.

A memory that hedges ("may", "might", "is considering"), plans ("will", "plans to", "next
quarter"), sets a condition ("if", "unless", "once"), asks ("asked whether", a question mark) or
reports the past ("last year", "used to", "was … until") does not say that a value holds now, so
it never supersedes a memory that does (``memories.temporal.judgment``): at most a curator is
asked. ``stance`` reads the words alone, no model; a statement with none of these marks is
``asserted``.

The marks are read in the clause that gives the value, not the whole text: "Orion renews in June
now; they may add seats" asserts the renewal. A text with no value (a plain restatement) is read
whole.
"""

from __future__ import annotations

import re

#: Each stance and the words that mark it, first match wins in this order.
MARKS = (
    (
        "question",
        r"\?|\b(?:asked|asks|asking|wondered|wonders|wondering)\s+(?:whether|if|about|when)\b"
        r"|\b(?:not\s+sure|unsure|unclear)\s+(?:whether|if)\b|\bwhether\b",
    ),
    (
        "conditional",
        r"\b(?:if|unless|once|provided\s+that|assuming|in\s+case|depending\s+on|contingent\s+on)\b",
    ),
    (
        "hedged",
        r"\b(?-i:may|might|could|would)\b|\b(?:possibly|perhaps|maybe|probably|likely|unlikely|"
        r"considering|considers|consider|thinking\s+(?:of|about)|exploring|evaluating|"
        r"hopes?\s+to|hoping\s+to|wants?\s+to|would\s+like|interested\s+in|open\s+to|"
        r"rumou?red|reportedly|apparently|seems?|appears?\s+to|tentative(?:ly)?|"
        r"proposed|suggested|discussing|discussed|talking\s+about|in\s+talks)\b",
    ),
    (
        "planned",
        r"\b(?-i:will|shall)\b|\b(?:going\s+to|plans?\s+to|planning\s+to|intends?\s+to|aims?\s+to|"
        r"expects?\s+to|expected\s+to|about\s+to|set\s+to|scheduled\s+to|to\s+pilot|"
        r"next\s+(?:year|quarter|month|week)|pilot(?:s|ing)?\b)",
    ),
    (
        "past",
        r"\b(?:last\s+(?:year|quarter|month|week|spring|summer|autumn|fall|winter)|"
        r"used\s+to|previously|formerly|originally|back\s+in|in\s+the\s+past|ago|"
        r"at\s+the\s+time|(?:was|were|had\s+been)\b[^.;]*\buntil)\b",
    ),
)
_MARKS = tuple((name, re.compile(words, re.IGNORECASE)) for name, words in MARKS)
#: Where a clause ends: a sentence's end, a semicolon, a dash, or a comma before "and"/"but".
_CLAUSE = re.compile(r"(?<=[.!?;])\s+|\s+[-–—]+\s+|,?\s+\b(?:but|and\s+then|whereas|while)\b\s+")
#: Words that keep a statement a present fact though a mark follows ("no longer", "now").
ASSERTED = "asserted"


def clauses(text: str) -> list[tuple[int, int]]:
    """Where each clause of ``text`` starts and ends."""
    spans, start = [], 0
    for cut in _CLAUSE.finditer(text):
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def stance(text: str, at: int | None = None) -> str:
    """The stance of ``text`` (module docstring), read in the clause holding position ``at``
    when given, else in the whole text: ``asserted``, ``question``, ``conditional``,
    ``hedged``, ``planned`` or ``past``."""
    if at is not None:
        for start, end in clauses(text):
            if start <= at < end or at == end:
                text = text[start:end]
                break
    for name, pattern in _MARKS:
        if pattern.search(text):
            return name
    return ASSERTED
