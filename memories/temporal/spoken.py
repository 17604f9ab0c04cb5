"""The values a turn of a conversation gives, as people say them, each with its role, so that a
later turn of the same session that gives another value of the same thing can be read as a
correction of the earlier one ("Yes, but make it at afternoon 1:30.").

``memories.temporal.values`` reads written statements (dates with a month, figures); a
conversation says "the 12th", "next Monday", "half past 6 in the evening", "for three people",
"from Long Beach". Each value here has a ``kind`` (``date``, ``time``, ``count``, ``place``), a
normalised ``key`` (two values with the same key are the same), and a ``role`` read from the
words just before it: a date a stay or a trip starts on (``start``: "check in", "from",
"leaving", "pick up") or ends on (``end``: "check out", "until", "return", "drop off"); a place
one leaves from (``origin``) or goes to (``destination``); a count of people, of rooms or of
days (its unit). Two values of one kind are of one thing unless their roles differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.temporal.values import MONTHS, WEEKDAYS

NUMBER_WORDS = {
    w: n
    for n, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}
NUMBER_WORDS |= {"a couple": 2, "single": 1, "just me": 1, "alone": 1}
_ORDINAL = r"(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth)"
_MONTH = "|".join(MONTHS + [m[:3] for m in MONTHS])
_DAY = "|".join(WEEKDAYS)
_DATE = re.compile(
    rf"\b(?:(?P<rel>today|tonight|tomorrow|day\s+after\s+tomorrow|later\s+today)"
    rf"|(?:(?P<which>this|next)\s+)?(?P<wd>{_DAY})(?:\s+(?P<which2>this|next)\s+week)?"
    rf"|(?:the\s+)?(?P<d1>{_ORDINAL})(?:\s+(?:of\s+)?(?:(?P<m1>{_MONTH})|this\s+month))?"
    rf"|(?P<m2>{_MONTH})\.?\s+(?:the\s+)?(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?)\b",
    re.IGNORECASE,
)
_HOUR = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_TIME = re.compile(
    rf"\b(?:(?P<hh>\d{{1,2}}):(?P<mm>\d\d)\s*(?P<ap>[ap]\.?m\.?)?"
    rf"|(?P<h2>{_HOUR})\s*(?P<ap2>[ap]\.?m\.?)"
    rf"|(?P<part>half|quarter)\s+(?P<dir>past|to)\s+(?P<h3>{_HOUR})"
    rf"|(?P<h4>{_HOUR})\s+o['\"’]?\s*clock"
    rf"|(?P<h5>{_HOUR})\s+in\s+the\s+(?P<day>morning|afternoon|evening|night)"
    rf"|(?P<day2>morning|afternoon|evening)\s+(?P<h6>\d{{1,2}}(?::\d\d)?))\b",
    re.IGNORECASE,
)
_UNITS = {
    "people": "people", "person": "people", "persons": "people", "tickets": "people",
    "ticket": "people", "seats": "people", "seat": "people", "guests": "people",
    "travelers": "people", "travellers": "people", "passengers": "people", "riders": "people",
    "adults": "people", "of us": "people", "rooms": "rooms", "room": "rooms", "days": "days",
    "day": "days", "nights": "days", "night": "days", "stars": "stars", "star": "stars",
    "bedrooms": "bedrooms", "bedroom": "bedrooms", "baths": "baths", "bathrooms": "baths",
}  # fmt: skip
_COUNT = re.compile(
    r"\b(?P<n>\d{1,2}|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"(?:\s+|-)(?P<unit>people|persons?|tickets?|seats?|guests|travell?ers|passengers|riders|"
    r"adults|of\s+us|rooms?|days?|nights?|stars?|bedrooms?|baths|bathrooms)\b"
    r"|\bfor\s+(?P<n2>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)\b"
    r"(?!\s*(?::|[ap]\.?m|o['’]?clock|in\s+the|-|people|persons?|tickets?|seats?|guests|"
    r"travell?ers|passengers|riders|adults|of\s+us|rooms?|days?|nights?|stars?|bed|bath))",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\b(?P<prep>(?i:from|to|in|at|near|around|into|make\s+it(?:\s+for)?))\s+"
    r"(?P<name>(?:[A-Z][\w'’.-]*|\d+)"
    r"(?:\s+(?:[A-Z][\w'’.-]*|&|de|of|\d+))*(?:,\s*[A-Z]{2}\b|,\s*[A-Z][a-z]+)?)"
)
_START = re.compile(
    r"(?:check(?:ing)?[\s-]*(?:me\s+|us\s+)?in|from|start\w*|leav\w*|depart\w*|pick(?:ing)?[\s-]*(?:it\s+)?up|"
    r"pickup|go(?:ing)?\s+out|outbound|fly(?:ing)?\s+out|get\s+there)\W*(?:\w+\W+){0,3}$",
    re.IGNORECASE,
)
_END = re.compile(
    r"(?:check(?:ing)?[\s-]*(?:me\s+|us\s+)?out|checkout|until|till|through|up\s+to|return\w*|back|"
    r"drop(?:ping)?[\s-]*(?:it\s+)?off|drop-?off\s+date|go\s+to|to|"
    r"end\w*|come\s+back|coming\s+back)\W*(?:\w+\W+){0,3}$",
    re.IGNORECASE,
)
_CHANGED_TO = re.compile(r"\b(?:change|switch)\w*\s+(?:\w+\s+){0,2}to\s*$", re.IGNORECASE)
_ORIGIN = re.compile(r"(?:from|leav\w*|depart\w*|out\s+of)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Said:
    """One value a turn gives: its kind, its normalised key, its role, as said, where."""

    kind: str
    key: str
    role: str
    text: str
    start: int


def _hour(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word.lower(), 0)


def _time_key(m: re.Match) -> str:
    g = m.groupdict()
    if g["hh"]:
        hour, minute, half = int(g["hh"]), int(g["mm"]), (g["ap"] or "").lower()[:1]
    elif g["h2"]:
        hour, minute, half = _hour(g["h2"]), 0, g["ap2"].lower()[:1]
    elif g["part"]:
        hour = _hour(g["h3"])
        minute = {"half": 30, "quarter": 15}[g["part"].lower()]
        if g["dir"].lower() == "to":
            hour, minute = hour - 1, 60 - minute
        half = ""
    elif g["h4"]:
        hour, minute, half = _hour(g["h4"]), 0, ""
    elif g["h5"]:
        hour, minute = _hour(g["h5"]), 0
        half = "a" if g["day"].lower() == "morning" else "p"
    else:
        parts = g["h6"].split(":")
        hour, minute = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
        half = "a" if g["day2"].lower() == "morning" else "p"
    after = m.string[m.end() : m.end() + 24].lower()
    if not half and re.match(r"\s*in\s+the\s+(?:afternoon|evening|night)", after):
        half = "p"
    if not half and re.match(r"\s*in\s+the\s+morning", after):
        half = "a"
    hour = hour % 12 + (12 if half == "p" else 0) if half else hour
    # Without a half of the day, 1 to 6 o'clock is meant in the afternoon.
    if not half and 1 <= hour <= 6:
        hour += 12
    return f"{hour:02d}:{minute:02d}"


def _date_key(m: re.Match) -> str:
    g = m.groupdict()
    if g["rel"]:
        rel = " ".join(g["rel"].lower().split())
        return "today" if rel in ("tonight", "later today") else rel
    if g["wd"]:
        which = (g["which"] or g["which2"] or "this").lower()
        return f"{which} {g['wd'].lower()}"
    day = g["d1"] or g["d2"]
    digits = re.match(r"\d+", day)
    number = (
        int(digits.group())
        if digits
        else ["first", "second", "third", "fourth", "fifth"].index(day.lower()) + 1
    )
    month = (g["m1"] or g["m2"] or "").lower()[:3]
    return f"{month or 'this month'} {number}"


def _role(text: str, start: int, kind: str) -> str:
    before = text[max(0, start - 40) : start]
    if kind in ("date", "time"):
        if _END.search(before):
            return "end"
        if _START.search(before):
            return "start"
        return ""
    return ""


def said(text: str) -> list[Said]:
    """The values ``text`` gives (module docstring), in the order said."""
    found: list[Said] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return not any(span[0] < e and s < span[1] for s, e in taken)

    for m in _TIME.finditer(text):
        found.append(
            Said("time", _time_key(m), _role(text, m.start(), "time"), m.group(), m.start())
        )
        taken.append(m.span())
    for m in _DATE.finditer(text):
        ordinal_word = (m.group("d1") or "1")[0].isalpha()
        if ordinal_word and not m.group().lower().startswith("the "):
            continue  # "on second thought"
        if free(m.span()) and (m.group("rel") or m.group("wd") or m.group("d1") or m.group("d2")):
            found.append(
                Said("date", _date_key(m), _role(text, m.start(), "date"), m.group(), m.start())
            )
            taken.append(m.span())
    for m in _COUNT.finditer(text):
        if not free(m.span()):
            continue
        number = m.group("n") or m.group("n2")
        value = int(number) if number.isdigit() else NUMBER_WORDS[number.lower()]
        unit = _UNITS.get((m.group("unit") or "people").lower(), "people")
        found.append(Said("count", str(value), unit, m.group(), m.start()))
        taken.append(m.span())
    for m in _PLACE.finditer(text):
        if not free(m.span("name")):
            continue
        name = m.group("name")
        if name.split()[0].lower() in MONTHS + WEEKDAYS or name in ("I",):
            continue
        prep = m.group("prep").lower()
        if _ORIGIN.search(text[: m.start("name")]):
            role = "origin"
        elif _CHANGED_TO.search(text[: m.start("name")]):
            role = "changed to"  # "change it to Premium Economy": of what, unsaid
        elif prep.startswith("make"):
            role = "changed to"  # "make it Kirin"
        else:
            role = {"to": "destination", "into": "destination", "at": "at"}.get(prep, "in")
        key = " ".join(re.findall(r"\w+", name.lower()))
        found.append(Said("place", key, role, name, m.start("name")))
    return sorted(found, key=lambda s: s.start)


#: "my checking account" / "my savings account", "Italian restaurants" / "Mexican restaurants":
#: a word before the same noun, another in each turn.
_CHOICE = re.compile(
    r"\b(?P<mod>[A-Za-z][a-z-]{2,})\s+(?P<head>account|accounts|movies?|films?|food|cuisine|"
    r"restaurants?|events?|shows?|concerts?|games?|ride|car|cars|songs?|music|album|"
    r"hotels?|rooms?|flights?|tickets?|seats?|class|plan|tier|genre|type|category|show)\b",
    re.IGNORECASE,
)
_NOT_CHOICES = frozenset(
    [
        "the",
        "and",
        "any",
        "some",
        "other",
        "another",
        "more",
        "few",
        "nice",
        "good",
        "great",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "for",
        "any",
        "all",
        "most",
        "best",
        "new",
        "old",
        "same",
        "different",
        "another",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "few",
        "many",
        "much",
        "such",
        "your",
        "their",
        "our",
        "her",
        "his",
        "its",
    ]
)


def choices(text: str) -> list[Said]:
    """The choices a turn makes: a word before a noun of what one books or looks for
    ("checking account", "Italian restaurants"), kind ``choice``, its role the noun."""
    found = []
    for m in _CHOICE.finditer(text):
        mod = m.group("mod").lower()
        if mod in _NOT_CHOICES:
            continue
        head = m.group("head").lower().rstrip("s")
        found.append(Said("choice", mod, head, m.group(), m.start()))
    return found


def _same_thing(old: Said, new: Said) -> bool:
    if old.kind != new.kind:
        return False
    if old.role == new.role:
        return True
    if new.kind in ("date", "time"):
        return "" in (old.role, new.role)
    # "change it to X", "make it X": of the thing the earlier turn named.
    return new.kind == "place" and new.role == "changed to"


def changes(earlier: list[str], newer: str) -> dict[int, list[tuple[Said, Said]]]:
    """For each of ``earlier`` (turns of the session before ``newer``, nearest first), the
    values it gave that ``newer`` gives another value of: each of the newer's values is
    compared with the nearest earlier turn that gave a value of one thing (the same kind, roles
    that do not differ, a count's unit the same), the value that holds until then; the same
    key there is no change."""
    read = [said(text) + choices(text) for text in earlier]
    found: dict[int, list[tuple[Said, Said]]] = {}
    for new in said(newer) + choices(newer):
        for index, before in enumerate(read):
            same = [old for old in before if _same_thing(old, new)]
            if not same:
                continue
            if all(old.key != new.key for old in same):
                found.setdefault(index, []).append((same[-1], new))
            break
    return found


def changed(older: str, newer: str) -> list[tuple[Said, Said]]:
    """The values of ``newer`` that give another value of one thing ``older`` gave
    (``changes`` of one earlier turn)."""
    return changes([older], newer).get(0, [])
