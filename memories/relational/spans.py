"""The model's names cleaned before they become entities, and a conversation line's speaker.

The recogniser (``memories.relational.extraction``) reads words, not meaning, and its spans
carry what is around a name. Each span is cleaned (``clean``), in this order:

* cut where a line's structure starts: a colon, a line break, a spaced dash ("Maria: Yep" is
  "Maria");
* without quote marks, emoji or other symbols at either end ("Jason ' s" is "Jason",
  "Alan Watts 💖" is "Alan Watts");
* without a leading "the" or numbers and times ("09:00 Berlin" is "Berlin"), a trailing "'s",
  or trailing words in lower case ("Helios Bank yesterday" is "Helios Bank");
* dropped when nothing of it is capitalised (a name is; a person's name in lower case that
  ``memories.relational.people.lower_case_person`` reads is the exception), or when it is an
  acronym of two to five capitals (API, CSV, SSO, EUR, MCP) the model called an organisation
  or a place: units, currencies, formats and protocols are written that way far more often
  than the names of organisations are; a team declares the ones it means (the gazetteer finds
  them first). In a text mostly in capitals (a headline) every word looks like an acronym, so
  there the rule does not apply.

A line that starts with a name and a colon ("Maria: I went…", ``speaker``) is a conversation's
line: the name is its speaker, a person, and no model span may take it.

``benchmarks/entities.py`` measures the cleaned spans against the plain model on CoNLL-2003.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from memories.relational.extraction import Span
from memories.relational.people import lower_case_person

#: Where a line's structure starts inside a span.
_CUT = re.compile(r"\s*(?::(?=\s|$)|\n|\s[-–—]+\s)")
_LEADING = re.compile(r"^(?:(?:the|The|THE)\s+|[\d:.,/]+(?:\s*[ap]\.?m\.?)?\s+)+")
_POSSESSIVE = re.compile(r"\s*['’]s$")
_LOWER_TAIL = re.compile(r"\s+[a-z][\w'’-]*$")
#: Quote marks a name does not start or end with ("Jason ' s", "' Ray Bradbury").
_QUOTES = "'’‘\"“”`´"
_ACRONYM = re.compile(r"[A-Z]{2,5}")
#: Types an acronym is not, unless declared.
NOT_FOR_ACRONYMS = frozenset({"organization", "place"})
#: A conversation line's speaker: one to four capitalised words, a colon right after them (a
#: results line such as "Kent : 250" has no speaker).
_SPEAKER = re.compile(r"^\s*(?P<name>[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3}):\s+\S")


def speaker(text: str) -> tuple[str, int, int] | None:
    """The speaker of a conversation's line and where its name is, or None."""
    match = _SPEAKER.match(text)
    if match is None:
        return None
    return match.group("name"), match.start("name"), match.end("name")


def _mostly_capitals(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 12 and sum(c.isupper() for c in letters) > 0.8 * len(letters)


def _edge(c: str) -> bool:
    """A character a name does not start or end with: a space, a quote mark, a symbol such as
    an emoji or a heart, or an invisible format character."""
    return c.isspace() or c in _QUOTES or unicodedata.category(c) in ("So", "Sk", "Cf", "Mn")


def clean(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` of ``text`` cleaned (module docstring); a span left empty or not a name is
    dropped."""
    headline = _mostly_capitals(text)
    kept = []
    for span in spans:
        start, end = span.start, span.end
        cut = _CUT.search(text, start, end)
        if cut is not None:
            end = cut.start()
        while start < end and _edge(text[start]):
            start += 1
        while end > start and _edge(text[end - 1]):
            end -= 1
        if lower_case_person(span, text[start:end]):  # "amy schumer": kept as it is written
            kept.append(replace(span, start=start, end=end, text=text[start:end]))
            continue
        while True:
            before = (start, end)
            if lead := _LEADING.match(text[start:end]):
                start += lead.end()
            if tail := _POSSESSIVE.search(text[start:end]) or _LOWER_TAIL.search(text[start:end]):
                end = start + tail.start()
            while start < end and _edge(text[start]):
                start += 1
            while end > start and _edge(text[end - 1]):
                end -= 1
            if (start, end) == before:
                break
        name = text[start:end].strip()
        if not name or not any(c.isupper() for c in name):
            continue
        if span.entity_type in NOT_FOR_ACRONYMS and _ACRONYM.fullmatch(name) and not headline:
            continue
        kept.append(replace(span, start=start, end=end, text=name))
    return kept
