"""People, roles and plans in what the recogniser finds, read from what the text says around a
name, not from the model's label alone.

The small model labels names by their look: it calls "Marcus Bell" an organisation, "Starter"
(a plan) a person, and "the VP of Clinical Operations at Orion Health" one organisation. So,
after its spans are cleaned (``memories.relational.spans``):

* **a job title is not an entity** ("VP of Clinical Operations", "CTO", "Head of IT"); where a
  title says where ("… at Orion Health", "… of Kestrel Analytics"), that place is the name kept;
  where a person's name follows the title the model ran into it ("CTO Marcus Bell",
  "Spokesman Ali Reza", "Colonel Jean Dupont"), the person is kept without the title;
* **a plan, tier or edition is not an entity** ("the Starter plan", "the Pro tier");
* **a common word is not an entity**: one word the same text also writes in lower case;
* **a person** is a name the text says acts as one ("Marcus Bell said", "asked", "told"), that
  a job title sits beside ("Marcus Bell, CTO of …", "their CTO Marcus Bell"), or of two or three
  capitalised words starting with a first name of the 1990 US Census lists (the ``names``
  package, MIT) with no word of an organisation's ("Bank", "Health", "&", "Inc"), or one
  such first name alone that the model took for an organisation ("Wendy");
* **a person written in lower case** ("amy schumer", "dana"), as chat and comments often are,
  is kept when the model took it for a person and it is a first name, alone or with a surname
  (``lower_case_person``; ``memories.relational.spans`` keeps it);
* **a surname alone** is the person it names once a person of that surname is named in full
  (``read_surnames``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from pathlib import Path

from memories.relational.extraction import Span

#: Words of a job title.
TITLE_WORDS = (
    r"CEO|CTO|CFO|COO|CIO|CISO|CMO|CPO|CRO|VP|SVP|EVP|Vice\s+President|President|Director|"
    r"Head|Chief|Officer|Manager|Lead|Engineer|Counsel|Administrator|Architect|Analyst|"
    r"Coordinator|Consultant|Specialist|Owner|Founder|Co-founder|Chair|Chairman|Partner|"
    r"Spokesman|Spokeswoman|Spokesperson|Colonel|Senator|Governor|Minister"
)
_TITLE = re.compile(rf"^(?:the\s+|The\s+|our\s+|their\s+)?(?:\w+\s+)?(?:{TITLE_WORDS})\b")
_TITLE_AT = re.compile(
    r"\s(?:at|of|from|for)\s+(?P<where>(?:the\s+)?[A-Z][\w&'’.-]*(?:\s+[A-Z&][\w&'’.-]*)*)$"
)
_ANY_TITLE = re.compile(rf"\b(?:{TITLE_WORDS})\b")
#: After a title: a person's name of two to four capitalised words, to the span's end.
_NAME_AFTER_TITLE = re.compile(r"\s+(?P<name>[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){1,3})$")
#: After a name: it is a plan, a tier, an edition.
_PLAN_AFTER = re.compile(
    r"^\s+(?:plan|plans|tier|tiers|edition|package|subscription|licen[cs]e|bundle|add-on)\b",
    re.IGNORECASE,
)
#: After a name: it acts as a person.
_SAYS_AFTER = re.compile(
    rf"^(?:\s*,\s*(?:the\s+|our\s+|their\s+)?(?:\w+\s+)?(?:{TITLE_WORDS})\b|\s+(?:said|"
    r"says|told|asked|"
    r"asks|wrote|writes|mentioned|confirmed|explained|noted|replied|agreed|emailed|called|"
    r"thinks|believes|wants|prefers|joined|left|is\s+(?:our|their|the)\s+(?:main\s+)?"
    r"(?:contact|champion|sponsor|buyer)))\b"
)
#: Before a name: a title ("their CTO Marcus Bell", "VP Priya Nair", "Dr. Ann Ray").
_TITLE_BEFORE = re.compile(rf"(?:\b(?:{TITLE_WORDS})|\b(?:Dr|Mr|Mrs|Ms|Mx)\.?)\s+$")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Words of an organisation's or a place's name.
ORGANISATION_WORDS = _words(
    "bank health analytics logistics labs systems group holdings partners capital inc ltd llc "
    "gmbh corp corporation company co university college school hospital clinic foundation "
    "institute council agency ministry department savings insurance finance financial "
    "technologies technology software solutions services consulting media energy foods "
    "airlines motors pharma networks ventures street avenue road city county river lake "
    "mountain island park",
)


@functools.cache
def first_names() -> frozenset[str]:
    """The first names of the 1990 US Census lists (``names`` package), lower case."""
    import names

    folder = Path(names.__file__).parent
    found: set[str] = set()
    for file in ("dist.male.first", "dist.female.first"):
        for line in (folder / file).read_text().splitlines():
            if line.strip():
                found.add(line.split()[0].lower())
    return frozenset(found)


@functools.cache
def last_names() -> frozenset[str]:
    """The surnames of the 1990 US Census lists (``names`` package), lower case."""
    import names

    text = (Path(names.__file__).parent / "dist.all.last").read_text()
    return frozenset(line.split()[0].lower() for line in text.splitlines() if line.strip())


def lower_case_person(span: Span, name: str) -> bool:
    """A person's name written all in lower case, as people write in chat and comments ("amy
    schumer", "dana"): the model took it for a person, and it is a first name, alone or with a
    surname (census lists), not a first name and a word that is no name ("martin lmao")."""
    words = name.split()
    if span.entity_type != "person" or not 1 <= len(words) <= 2 or not name.islower():
        return False
    if not all(w.isalpha() for w in words) or words[0] not in first_names():
        return False
    return len(words) == 1 or words[1] in last_names() or words[1] in first_names()


def _looks_like_a_person(name: str) -> bool:
    words = name.split()
    if not 2 <= len(words) <= 3 or "&" in name:
        return False
    if not all(w[:1].isupper() and w.replace("'", "").replace("-", "").isalpha() for w in words):
        return False
    if any(w.lower().strip(".") in ORGANISATION_WORDS for w in words):
        return False
    return words[0].lower() in first_names()


def _first_name_alone(span: Span, name: str) -> bool:
    """One word, written as a name is (a capital, then lower case), that is a first name the
    model took for an organisation ("Wendy", "Brett"): an organisation is rarely named by a
    first name alone, a person often is."""
    return (
        span.entity_type == "organization"
        and " " not in name
        and name[:1].isupper()
        and name[1:].islower()
        and name.lower() in first_names()
    )


def _common_word(text: str, name: str) -> bool:
    """One word the same text also writes in lower case ("Cough cough", "the ipad and the
    Ipad pro"): a common word, capitalised where a sentence starts or for emphasis."""
    if " " in name or not name[1:].islower() or name.islower():
        return False
    return re.search(rf"(?<![\w'’-]){re.escape(name.lower())}(?![\w'’-])", text) is not None


def read_roles(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` of ``text`` with titles and plans dropped, a title's place kept, and people
    typed as people (module docstring)."""
    kept: list[Span] = []
    for span in spans:
        name = text[span.start : span.end]
        if title := _TITLE.match(name):
            where = _TITLE_AT.search(name)
            person = _NAME_AFTER_TITLE.match(name, title.end())
            if person and (
                _ANY_TITLE.search(person["name"])
                or any(w.lower() in ORGANISATION_WORDS for w in person["name"].split())
            ):
                person = None  # more of the title ("Chief Revenue Officer"), or a company
            if where is None and person is not None:
                start = span.start + person.start("name")
                name = person.group("name")
                kept.append(
                    replace(span, start=start, text=name, label="PERSON", entity_type="person")
                )
                continue
            if where is None:
                continue
            start = span.start + where.start("where")
            if name[where.start("where") :].startswith("the "):
                start += 4
            span = replace(span, start=start, text=text[start : span.end])
            name = span.text
        if _PLAN_AFTER.match(text[span.end :]):
            continue
        if _common_word(text, name):
            continue
        if span.entity_type != "person" and (
            _SAYS_AFTER.match(text[span.end :])
            and not any(w.lower() in ORGANISATION_WORDS for w in name.split())
            or _TITLE_BEFORE.search(text[: span.start])
            or _looks_like_a_person(name)
            or _first_name_alone(span, name)
        ):
            span = replace(span, label="PERSON", entity_type="person")
        kept.append(span)
    return kept


def surname(name: str) -> str | None:
    """The last word of a person's name of two to four words ("Jeff Tarango": "tarango"), lower
    case, or None."""
    words = name.split()
    if not 2 <= len(words) <= 4 or not words[-1][:1].isupper():
        return None
    last = words[-1].strip(".,'’").lower()
    return last if len(last) > 2 and last.replace("-", "").isalpha() else None


def read_surnames(spans: list[Span], surnames: set[str]) -> list[Span]:
    """``spans`` with a one-word name that is the surname of a person named in the same
    writing or known to the workspace ("Tarango said", after "Jeff Tarango") typed a person:
    news and notes name a person in full once, then by surname, and the model, seeing one
    capitalised word, often calls it an organisation or a place."""
    return [
        replace(s, label="PERSON", entity_type="person")
        if s.entity_type != "person" and " " not in s.text and s.text.lower() in surnames
        else s
        for s in spans
    ]
