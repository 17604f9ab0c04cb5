"""Whether a text says when something happened, and whether a question asks when.

A memory written in a conversation rarely carries a full date: it says "yesterday", "last
weekend", "two weeks ago", "in May", "on Friday". Such a phrase is what answers "when did…"
together with the memory's own date. The learned ranking (``memories.search.learned``) uses the
two facts as features; this module only recognises the phrases (in English), it does not
resolve them to dates.
"""

from __future__ import annotations

import re

from memories.temporal.values import MONTHS, WEEKDAYS


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_UNITS = _set(
    "day days night nights week weeks weekend weekends month months year years decade decades "
    "hour hours minute minutes"
)
_COUNTS = _set(
    "a an one two three four five six seven eight nine ten eleven twelve few several couple of many"
)
#: A single word that says when: a relative day, a month (not "may": see ``_MAY``), a weekday.
_WHEN_WORDS = frozenset(
    [*_set("yesterday today tonight tomorrow recently lately weekend since")]
    + [month for month in MONTHS if month != "may"]
    + WEEKDAYS
)
#: "last week", "next Friday", "this summer": a word of position before a unit or a name.
_POSITIONS = _set("last next this that past coming previous following")
_POSITIONED = (
    _UNITS
    | frozenset(MONTHS + WEEKDAYS)
    | _set("morning afternoon evening spring summer fall autumn winter")
)
#: "two weeks ago", "a few days later": a count and a unit before one of these.
_AFTER_COUNT = _set("ago before later earlier back")
#: "in two weeks", "for a few months": one of these before a count and a unit.
_BEFORE_COUNT = _set("in for within after")
_WORDS = re.compile(r"[a-z0-9]+")
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
#: "may" is a month only written as one, with its capital ("in May"), not as the verb.
_MAY = re.compile(r"(?<![\w])May(?![\w])")
_ASKS_WHEN = re.compile(
    r"^\W*(?:when\b|what\s+(?:year|month|date|day|time|week|season)\b|how\s+long\b|"
    r"how\s+many\s+(?:days|weeks|months|years)\b|since\s+when\b|which\s+(?:year|month|day)\b)",
    re.IGNORECASE,
)


def says_when(text: str) -> bool:
    """Whether ``text`` has a phrase of time: a relative one ("last Saturday", "two weeks ago",
    "yesterday"), a month, a weekday or a year."""
    words = _WORDS.findall(text.lower())
    for index, word in enumerate(words):
        if word in _WHEN_WORDS or (len(word) == 4 and _YEAR.fullmatch(word)):
            return True
        if word in _POSITIONS and index + 1 < len(words) and words[index + 1] in _POSITIONED:
            return True
        if word in _UNITS and _counted(words, index):
            after = words[index + 1] if index + 1 < len(words) else ""
            before = words[max(index - 4, 0) : index - 1]
            if after in _AFTER_COUNT or _BEFORE_COUNT.intersection(before):
                return True
    return "May" in text and _MAY.search(text) is not None


def _counted(words: list[str], index: int) -> bool:
    """Whether the word before ``words[index]`` is a count ("two", "3", "few")."""
    return index > 0 and (words[index - 1] in _COUNTS or words[index - 1].isdigit())


def asks_when(question: str) -> bool:
    """Whether ``question`` asks for a time ("When did…", "What year…", "How long…")."""
    return _ASKS_WHEN.search(question) is not None
