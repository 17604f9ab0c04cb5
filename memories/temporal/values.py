"""The values a text gives, each as an interval of one kind, so two texts' values can be
compared: does a newer statement give a value the older one cannot hold with?

Kinds: ``when`` (a date, a month or a year with its year: an interval of days, yyyymmdd), ``day``
(a month and day with no year, mmdd), ``month`` (a month alone), ``weekday``, ``time`` (minutes
after midnight), ``money``, ``percent``, ``count``; and ``stamp``: a date that says when a figure
was true ("as of March 21", "retrieved July 3"), which is not a value of its own.

A value keeps what bounds it ("more than 70", "about 3 million", "before June 1, 1987", "since
2015") and its precision (73 million holds with 72.6 million). Each value also keeps the content
words around it (``context``): two values are compared only when they are of one thing (they
share such a word: "born", "renewal", "cases") and, for numbers, count the same thing (the words
just after them).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from memories.lexicon import STOP_WORDS

MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
SCALES = {"thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
SCALES |= {"k": 1e3, "m": 1e6, "b": 1e9}
#: Words before a number that bound it, and the interval they make of it.
BOUNDS = (
    (r"(?:more|greater|higher|larger|bigger)\s+than|over|above|exceed\w*|upwards\s+of", "gt"),
    (r"at\s+least|no\s+(?:less|fewer)\s+than|a\s+minimum\s+of", "ge"),
    (r"(?:less|fewer|lower|smaller)\s+than|under|below", "lt"),
    (r"at\s+most|no\s+more\s+than|up\s+to|a\s+maximum\s+of", "le"),
    (r"about|around|approximately|roughly|nearly|almost|some|close\s+to|estimated|circa", "about"),
)
_BOUNDS = tuple((re.compile(rf"(?:^|\s)(?:{words})\s*$"), bound) for words, bound in BOUNDS)
#: Words before a date, and the interval they make of it.
DATE_BOUNDS = {"before": "lt", "until": "lt", "prior to": "lt", "after": "gt", "since": "ge"}
DATE_BOUNDS |= {"from": "ge", "by": "le", "no later than": "le"}
#: Words before a date that make it the instant a figure was true (kind ``stamp``).
_STAMP = re.compile(
    r"(?:as\s+of|retrieved|updated|accessed|at\s+the\s+end\s+of)\s*(?:on\s+)?$", re.IGNORECASE
)
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_DATE = re.compile(
    rf"\b(?P<m1>{_MONTH})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y1>{_YEAR})\b)?"
    rf"|\b(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH})(?:,?\s+(?P<y2>{_YEAR})\b)?"
    rf"|\b(?P<m3>{_MONTH}),?\s+(?:of\s+)?(?P<y3>{_YEAR})\b"
    rf"|\b(?P<m4>{_MONTH})(?![\w])"
)
_WEEKDAY = re.compile(r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b", re.IGNORECASE)
_TIME = re.compile(
    r"\b(?P<hour>[01]?\d|2[0-3])(?::(?P<minute>[0-5]\d))?\s?(?P<half>[ap]\.?m\.?)(?!\w)"
    r"|\b(?P<hour24>[01]?\d|2[0-3]):(?P<minute24>[0-5]\d)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?P<currency>US\$|\$|€|£|¥|\bUSD|\bEUR|\bGBP)?\s?"
    r"(?<![\w.\-–—/])(?P<value>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s?(?P<scale>thousands?|millions?|billions?|trillions?|bn|mn|[kmb])\b)?"
    r"(?:\s?(?P<unit>%|percent\b|per\s?cent\b|dollars?\b|euros?\b|pounds?\b))?"
    r"(?![\w\-–—/]|[.,]\d)",
    re.IGNORECASE,
)
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+(?:[.,]\d+)*", re.UNICODE)
#: Words just before a four-digit number that make it a year.
YEAR_BEFORE = frozenset(
    [
        "in",
        "on",
        "since",
        "before",
        "after",
        "by",
        "until",
        "of",
        "from",
        "during",
        "circa",
        "year",
        "the",
        "early",
        "late",
        "mid",
        "to",
        "and",
        "between",
        "around",
        "through",
    ]
)
#: Content words each side of a value that say what it is of.
CONTEXT = 4
#: Words before "May" that make it the month, not the verb.
_MAY_BEFORE = frozenset(
    [
        "in",
        "on",
        "by",
        "until",
        "from",
        "since",
        "of",
        "early",
        "late",
        "mid",
        "next",
        "last",
        "this",
    ]
)


@dataclass(frozen=True)
class Value:
    """One value a text gives: its kind, the interval ``[low, high]`` it stands for (the same
    number twice when exact), as written, where, and what it is of."""

    kind: str
    low: float
    high: float
    text: str
    start: int = 0
    #: For a number, the content words just after it (what it counts).
    counts: frozenset[str] = frozenset()
    #: The content words around it (``CONTEXT`` each side).
    context: frozenset[str] = frozenset()

    def agrees(self, other: Value) -> bool:
        return self.kind == other.kind and self.low <= other.high and other.low <= self.high

    def aligned(self, other: Value) -> bool:
        """Whether two values are of one thing (module docstring)."""
        if self.kind != other.kind:
            return False
        if self.counts and other.counts and not self.counts & other.counts:
            return False
        return bool(self.context & other.context)


def values(text: str) -> list[Value]:
    """The values ``text`` gives (module docstring), in the order written."""
    found: list[Value] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return not any(start < e and s < end for s, e in taken)

    for match in _TIME.finditer(text):
        hour = int(match.group("hour") or match.group("hour24"))
        minutes = hour * 60 + int(match.group("minute") or match.group("minute24") or 0)
        half = (match.group("half") or "").lower().replace(".", "")
        minutes += 720 if half == "pm" and hour < 12 else -720 if half == "am" and hour == 12 else 0
        found.append(Value("time", minutes, minutes, match.group(), match.start()))
        taken.append(match.span())
    for match in _DATE.finditer(text):
        value = _date(text, match)
        if value is not None and free(*match.span()):
            found.append(value)
            taken.append(match.span())
    for match in _WEEKDAY.finditer(text):
        number = WEEKDAYS.index(match.group().lower())
        found.append(Value("weekday", number, number, match.group(), match.start()))
    for match in _NUMBER.finditer(text):
        if free(match.start("value"), match.end("value")):
            found.append(_number(text, match))
    return [_in_context(value, text) for value in sorted(found, key=lambda v: v.start)]


def _month_number(written: str) -> int:
    name = written.rstrip(".").lower()
    return next(i for i, month in enumerate(MONTHS, 1) if month.startswith(name[:3]))


def _date(text: str, match: re.Match) -> Value | None:
    groups = match.groupdict()
    written = next(groups[m] for m in ("m1", "m2", "m3", "m4") if groups[m])
    if written.rstrip(".") == "May" and groups["m4"]:
        before = text[: match.start()].split()[-1:] or [""]
        if before[0].lower() not in _MAY_BEFORE:
            return None
    month = _month_number(written)
    day = next((int(groups[d]) for d in ("d1", "d2") if groups[d]), None)
    year = next((int(groups[y]) for y in ("y1", "y2", "y3") if groups[y]), None)
    if day is not None and not 1 <= day <= 31:
        return None
    if year is not None:
        kind, low, high = "when", year * 10_000 + month * 100 + (day or 1), 0
        high = year * 10_000 + month * 100 + (day or 31)
    elif day is not None:
        kind, low, high = "day", month * 100 + day, month * 100 + day
    else:
        kind, low, high = "month", month, month
    return _dated(text, match.start(), Value(kind, low, high, match.group(), match.start()))


def _dated(text: str, start: int, value: Value) -> Value:
    """A date's value with what bounds it ("before", "since"...), or a ``stamp``."""
    before = text[:start]
    if _STAMP.search(before):
        return replace(value, kind="stamp")
    tail = " ".join(before.lower().split()[-3:])
    for words, bound in DATE_BOUNDS.items():
        if tail.endswith(words):
            low, high = _interval(value.low, value.high, bound, lenient=False)
            return replace(value, low=low, high=high)
    return value


def _number(text: str, match: re.Match) -> Value:
    raw = match.group("value")
    number = float(raw.replace(",", ""))
    currency, scale = match.group("currency"), (match.group("scale") or "").lower().rstrip("s")
    unit = (match.group("unit") or "").lower()
    if scale in ("m", "b", "k") and not currency:
        scale = ""  # "5 m" is more often metres than millions without a currency
    if currency or unit.startswith(("dollar", "euro", "pound")):
        kind = "money"
    elif unit.startswith(("%", "per")):
        kind = "percent"
    elif re.fullmatch(_YEAR, raw) and not scale and _is_year(text, match):
        year = int(raw)
        value = Value("when", year * 10_000 + 101, year * 10_000 + 1231, raw, match.start())
        return _dated(text, match.start(), value)
    else:
        kind = "count"
    multiplier = SCALES.get(scale, 1.0)
    slack = _precision(raw) * multiplier
    tail = text[: match.start()].lower()
    bound = next((b for pattern, b in _BOUNDS if pattern.search(tail)), "eq")
    low, high = _interval(number * multiplier - slack, number * multiplier + slack, bound)
    counts = frozenset(
        w.lower()
        for w in WORD.findall(text[match.end() :])[:3]
        if w.lower() not in STOP_WORDS and not w[0].isdigit()
    )
    return Value(kind, low, high, match.group().strip(), match.start(), counts)


def _precision(number: str) -> float:
    """Half a unit of the last digit written: "72.6" → 0.05, "73" → 0.5, "1,480" → 0.5."""
    digits = number.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return 0.5 * 10.0**-decimals


def _interval(low: float, high: float, bound: str, lenient: bool = True) -> tuple[float, float]:
    """The interval a value from ``low`` to ``high`` stands for under ``bound``: for a number
    (``lenient``), "more than 73" holds with a figure written 73 that may have been 73.2; for a
    date, "after 2015" starts after its last day."""
    middle = (low + high) / 2
    past = (abs(middle) * 1e-12 + 1e-9) if lenient else 0.5  # dates are whole days
    return {
        "gt": ((low if lenient else high) + past, math.inf),
        "ge": (low, math.inf),
        "lt": (-math.inf, (high if lenient else low) - past),
        "le": (-math.inf, high),
        "about": (low - 0.1 * abs(middle), high + 0.1 * abs(middle)),
    }.get(bound, (low, high))


def _is_year(text: str, match: re.Match) -> bool:
    """A four-digit number is a year after a month, a day or a word like "in" or "since", or
    with no word after it: "2026 persons" is a count."""
    before = re.findall(r"[\w']+", text[: match.start()])[-1:] or [""]
    after = re.match(r"\s*([A-Za-z]+)", text[match.end() :])
    word = before[0].lower()
    return (
        word in YEAR_BEFORE
        or word in MONTHS
        or word.isdigit()
        or after is None
        or after.group(1).lower() in STOP_WORDS
    )


def _in_context(value: Value, text: str) -> Value:
    before = WORD.findall(text[: value.start])[-CONTEXT:]
    after = WORD.findall(text[value.start + len(value.text) :])[:CONTEXT]
    words = {
        w.lower()
        for w in before + after
        if w.lower() not in STOP_WORDS and not w[0].isdigit() and w.lower() not in MONTHS
    }
    return replace(value, context=frozenset(words))
