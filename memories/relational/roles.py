"""A person's role as the team's notes say it, for the pages that list a customer's people.

The recogniser drops job titles from what it stores (``memories.relational.people``: a title is
not an entity), so a person's role is read back from the text of the memories that name them,
beside the name, in the ways notes say it:

* after the name: "Dana Reyes, CTO of Orion Health", "Dana Reyes (VP of Clinical Operations)";
* before it: "their CTO Dana Reyes", "Orion's Head of IT, Priya Nair";
* said of them: "Dana is our main contact", "Marcus became the new Procurement Lead".

A role is a title of ``TITLE_WORDS`` (with the words before it that make it one: "Procurement
Lead", "Senior Director") and what it is of ("of Clinical Operations"), but not where: "of
Orion Health" is the company (a name ending in an organisation's word, or one of ``places``),
not the role. A text that says none of these gives no role: nothing is guessed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from memories.relational.people import ORGANISATION_WORDS, TITLE_WORDS

_CAPITAL = r"[A-Z][\w&'’-]*"
#: A title: qualifiers, a word that says of what ("Procurement", "Security"), the title's word,
#: and what it is of or for ("of Clinical Operations").
_ROLE = (
    rf"(?:(?:Senior|Junior|Interim|Acting|Deputy|Associate|Assistant|Executive|Principal|"
    rf"Global|Regional)\s+)*(?:(?!(?:The|Our|Their|Its|An?|This|That)\s)[A-Z][\w-]*\s+)?"
    rf"(?:{TITLE_WORDS})"
    rf"(?:\s+(?:of|for)\s+(?:the\s+)?{_CAPITAL}(?:\s+(?:&\s+|and\s+)?{_CAPITAL})*)?"
)
#: What notes call a person in an account without a title.
_PART = (
    r"(?:main\s+|primary\s+|key\s+|technical\s+|executive\s+)?(?:point\s+of\s+contact|contact|"
    r"champion|sponsor|buyer|decision[- ]maker|signatory|admin)"
)
_OWNER = r"(?:the|our|their|its|his|her|a|an)"


@functools.lru_cache(maxsize=1024)
def _patterns(name: str) -> tuple[re.Pattern[str], ...]:
    person = rf"(?<![\w]){re.escape(name)}(?![\w])"
    return (
        re.compile(rf"{person}\s*,\s*(?:{_OWNER}\s+)?(?P<role>{_ROLE})"),
        re.compile(rf"{person}\s*\(\s*(?P<role>{_ROLE})\s*\)"),
        re.compile(rf"(?P<role>{_ROLE})\s*,?\s+{person}"),
        re.compile(
            rf"{person}\s+(?:is|was|became|is\s+now|has\s+become)\s+{_OWNER}\s+(?:new\s+)?"
            rf"(?P<role>{_ROLE}|{_PART})",
        ),
    )


def _without_place(role: str, places: Iterable[str]) -> str:
    """``role`` without an "of …" or "for …" that names a company (``places``, or a name
    ending in an organisation's word): "CTO of Orion Health" is a CTO."""
    parts = re.split(r"\s+(?:of|for)\s+(?:the\s+)?", role, maxsplit=1)
    if len(parts) == 1:
        return role
    title, where = parts
    places = {p.lower() for p in places}
    if where.lower() in places or where.split()[-1].lower() in ORGANISATION_WORDS:
        return title
    return role


def role_in(text: str, names: Iterable[str], places: Iterable[str] = ()) -> str | None:
    """The role ``text`` gives the person called any of ``names`` (module docstring), or None."""
    for name in names:
        if not name or len(name) < 2:
            continue
        for pattern in _patterns(name):
            if found := pattern.search(text):
                role = " ".join(found.group("role").split())
                return _without_place(role, places)
    return None


def person_names(name: str, aliases: Iterable[str]) -> list[str]:
    """The names a note may call a person by: the full name, the aliases, and the first name
    of a full name ("Dana" for "Dana Reyes"), longest first."""
    names = {name, *aliases}
    if len(name.split()) >= 2:
        names.add(name.split()[0])
    return sorted((n for n in names if n), key=len, reverse=True)
