"""Names in lines that are not sentences: scores, tables, datelines and headlines.

The recogniser (``memories.relational.extraction``) reads a line of results the way it reads
prose, and its spans there carry the numbers beside a name ("Leicestershire 296", "Lithuania
3-0", "SEOUL 1996-08-31"), or run two names together across a score ("Millwall 2 Burnley 1").
So, after a span is cleaned (``memories.relational.spans``), ``read_layout``:

* **cuts numbers off a name**: a person's name has none, so every trailing number goes; an
  organisation's or a place's loses a trailing score, date, time or figure ("3-0",
  "1996-08-31", "4-43", "296") and any run of numbers ("2 1 1"), keeping one small number
  of its own in a line of no other figure ("Channel 4 said"); a span whose words are split by
  a number is the names on either side of it ("Millwall 2 Burnley 1" is "Millwall" and
  "Burnley"); stray brackets or dashes at either end go too ("Giovanni Lombardi (");
* **splits a span at a comma or a bracket inside it**: the model runs a list or an aside into
  one name ("Scott Draper ( Australia", "The Oval , London"); the names either side of it are
  kept, a piece of fewer than two letters is not ("Rad ( B");
* **reads a headline as unreliable**: in a line mostly in capitals every word looks like a
  name to the model, which there is wrong more often than right ("PUT ENGLAND", "CLUB FINED",
  "SOCCER"), so its names are not kept there; a known name still is
  (``memories.services.relations.recognition``);
* **reads a dateline's names as places**: a line that is only a place (and its country or
  state) and a date ("AMSTERDAM 1996-08-31", "TOFTIR , Faroe Islands 1996-08-31") says where
  a story was filed.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memories.relational.extraction import Span
from memories.relational.people import lower_case_person

#: A token that is a number, a score, a date, a time or a figure ("3-0", "1996-08-31", ".560").
_NUMBER = r"[(\[]?[+-]?\d[\d.,:/-]*%?[)\]]?|\.\d+"
_NUMBER_TOKEN = re.compile(rf"(?:{_NUMBER})$")
#: A number a name may end with: one plain number of one or two digits ("Channel 4").
_OWN_NUMBER = re.compile(r"\d{1,2}$")
#: Punctuation a name does not start or end with.
_STRAY = "([{-–—,;/"
_STRAY_END = "([{-–—,;/:"
#: A dateline: a place (and its country or state) then a date, nothing else.
_DATELINE = re.compile(
    r"^\s*[A-Z][A-Za-z.'’ -]*?(?:\s*,\s*[A-Z][A-Za-z.'’ -]*?)?\s+\d{4}-\d{2}-\d{2}\s*$"
)


def mostly_capitals(text: str) -> bool:
    """A headline's look: at least 12 letters, more than four in five of them capitals."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 12 and sum(c.isupper() for c in letters) > 0.8 * len(letters)


def _tokens(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", text[start:end])]


def _is_number(text: str, token: tuple[int, int]) -> bool:
    return _NUMBER_TOKEN.match(text[token[0] : token[1]]) is not None


def _trim(text: str, span: Span, tokens: list[tuple[int, int]]) -> Span | None:
    """``span`` over ``tokens`` without stray punctuation or the numbers it may not end with."""
    if not tokens:
        return None
    start, end = tokens[0][0], tokens[-1][1]
    while start < end and (text[start] in _STRAY or text[start].isspace()):
        start += 1
    while end > start and (text[end - 1] in _STRAY_END or text[end - 1].isspace()):
        end -= 1
    name = text[start:end].strip()
    if not name or not (any(c.isupper() for c in name) or lower_case_person(span, name)):
        return None
    return replace(span, start=start, end=end, text=name)


def _without_numbers(text: str, span: Span) -> list[Span]:
    tokens = _tokens(text, span.start, span.end)
    tail = len(tokens)
    while tail and _is_number(text, tokens[tail - 1]):
        tail -= 1
    if tail < len(tokens) and span.entity_type != "person":
        own = text[tokens[tail][0] : tokens[tail][1]]
        others = sum(_is_number(text, t) for t in _tokens(text, 0, len(text)))
        alone = tail == len(tokens) - 1 and others == 1
        if alone and _OWN_NUMBER.fullmatch(own) and tail > 0:
            tail += 1  # "Channel 4": a small number of its own, in a line of no other figure
    # The names either side of a number inside the span ("Millwall 2 Burnley").
    pieces: list[list[tuple[int, int]]] = [[]]
    for token in tokens[:tail]:
        if _is_number(text, token) and token is not tokens[tail - 1]:
            pieces.append([])
        else:
            pieces[-1].append(token)
    kept = [_trim(text, span, piece) for piece in pieces]
    return [s for s in kept if s is not None]


#: Inside a span, where one name ends and another starts: a comma or a bracket.
_BETWEEN_NAMES = re.compile(r"\s*[,()\[\]]\s*")


def _between_punctuation(text: str, span: Span) -> list[Span]:
    """The names either side of a comma or a bracket inside ``span`` ("Scott Draper (
    Australia", "Oval, London"): a list or an aside the model ran together."""
    pieces, start = [], span.start
    for cut in _BETWEEN_NAMES.finditer(text, span.start, span.end):
        pieces.append((start, cut.start()))
        start = cut.end()
    pieces.append((start, span.end))
    if len(pieces) == 1:
        return [span]
    named = [(a, b) for a, b in pieces if sum(c.isalpha() for c in text[a:b]) >= 2]
    return [replace(span, start=a, end=b, text=text[a:b]) for a, b in named]


def read_layout(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` of ``text`` without numbers, stray punctuation or a headline's names, a
    dateline's place kept (module docstring)."""
    dateline = _DATELINE.match(text) is not None
    headline = mostly_capitals(text) and not dateline
    kept: list[Span] = []
    for span in spans:
        if headline:
            continue
        if span.entity_type == "product":
            pieces = [span]
        else:
            pieces = [
                p for s in _between_punctuation(text, span) for p in _without_numbers(text, s)
            ]
        for piece in pieces:
            kept.append(replace(piece, label="GPE", entity_type="place") if dateline else piece)
    return kept
