"""The words the divergence rules and the temporal readers share: stop words, negations,
antonyms, months, a text's words and content words, and the attributes a thing has one value
of at a time (a renewal month, a plan, an owner). Nothing here imports the rest of the engine,
so the readers of ``memories.temporal`` and the detectors of ``memories.divergence`` can both
build on it."""

from __future__ import annotations

import re


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


def attributes(text: str) -> dict[str, set[str]]:
    return {
        name: {match.group("value").lower() for match in pattern.finditer(text)}
        for name, pattern in ATTRIBUTES
        if pattern.search(text)
    }
