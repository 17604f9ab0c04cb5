"""What a text names: the workspace gazetteer's finds, a conversation line's speaker, the names
the workspace already knows, and the offline model's names, cleaned
(``memories.relational.spans``), read for numbers, headlines and datelines
(``memories.relational.layout``) and for people, titles and plans
(``memories.relational.people``; a one-word name is the person whose surname it is when these
texts or the workspace name that person in full), that none before overlaps (the gazetteer
wins, then the speaker, then a known name, unless the model found that very name).

**A known name** is the name or an alias of any entity of the workspace (written, extracted or
made by a member; declared ones are the gazetteer's), found exactly (normalised) and written in
capitals: once "Orion Health" is an entity, every later memory that writes it links to it,
whatever the model makes of that sentence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

from memories import rules
from memories.models import Entity
from memories.relational.extraction import Span, extract
from memories.relational.gazetteer import MAX_NAME_WORDS, WORD, Found, Gazetteer, normalize
from memories.relational.layout import read_layout
from memories.relational.people import read_roles, read_surnames, surname
from memories.relational.spans import clean, speaker


@dataclass
class Recognised:
    """What one text names: the gazetteer's finds, and the model's names that no find
    overlaps."""

    finds: list[Found] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    #: The names of entities the workspace knows already (not declared) found in the text.
    known: list[Found] = field(default_factory=list)
    extracted: bool = False
    #: A conversation line's speaker ("Maria: …"): its name and where it is, or None.
    speaker: tuple[str, int, int] | None = None


def workspace_gazetteer(workspace_id: int) -> Gazetteer:
    rows = Entity.objects.filter(
        workspace_id=workspace_id, declared=True, merged_into__isnull=True
    ).values_list("pk", "keys")
    return Gazetteer(
        ((key, pk) for pk, keys in rows for key in keys), settings.MM_ENTITY_MATCH_SCORE
    )


def _capitalised_keys(text: str) -> set[str]:
    """The normalised word runs of ``text`` (up to ``MAX_NAME_WORDS``) that start with a
    capital: what a known name can be."""
    words = list(WORD.finditer(text))
    keys = set()
    for i, first in enumerate(words):
        if not first.group()[:1].isupper():
            continue
        for size in range(1, MAX_NAME_WORDS + 1):
            if i + size > len(words):
                break
            keys.add(normalize(text[first.start() : words[i + size - 1].end()]))
    keys.discard("")
    return keys


def known_gazetteer(workspace_id: int, texts: Sequence[str]) -> Gazetteer:
    """The workspace's undeclared entities whose name or alias one of ``texts`` may write (one
    statement for all, by the keys' index), to find exactly."""
    keys = set().union(*(_capitalised_keys(t) for t in texts)) if texts else set()
    if not keys:
        return Gazetteer((), 100.0)
    rows = Entity.objects.filter(
        workspace_id=workspace_id,
        declared=False,
        merged_into__isnull=True,
        keys__overlap=sorted(keys),
    ).values_list("pk", "keys")
    return Gazetteer(((key, pk) for pk, ks in rows for key in ks if key in keys), 100.0)


def known_surnames(workspace_id: int, spans: Sequence[Sequence[Span]]) -> set[str]:
    """The surnames of the people ``spans`` name in full and of the workspace's people whose
    surname is one of the one-word names in ``spans`` (one statement, by the tokens' index)."""
    found = {n for ss in spans for s in ss if s.entity_type == "person" and (n := surname(s.text))}
    single = {s.text.lower() for ss in spans for s in ss if " " not in s.text} - found
    if single:
        rows = Entity.objects.filter(
            workspace_id=workspace_id,
            kind="person",
            merged_into__isnull=True,
            tokens__overlap=sorted(normalize(w) for w in single),
        ).values_list("name", flat=True)
        found |= {n for name in rows if (n := surname(name)) in single}
    return found


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in taken)


def recognise(workspace_id: int, texts: Sequence[str]) -> list[Recognised]:
    """The gazetteer's finds, the speaker, the known names and the model's names in each text
    (module docstring; CPU work: call it outside a transaction)."""
    gazetteer = workspace_gazetteer(workspace_id)
    known_names = known_gazetteer(workspace_id, texts) if settings.MM_ENTITY_EXTRACTION else None
    read = [
        read_roles(t, read_layout(t, clean(t, n)))
        for t, n in zip(texts, extract(list(texts)), strict=True)
    ]
    surnames = known_surnames(workspace_id, read) if any(read) else set()
    found = []
    for text, names in zip(texts, read, strict=True):
        finds = gazetteer.find(text)
        taken = [(f.start, f.end) for f in finds]
        said = speaker(text) if settings.MM_ENTITY_EXTRACTION else None
        if said is not None and _overlaps(said[1], said[2], taken):
            said = None  # a declared name: the gazetteer has it
        if said is not None:
            taken.append((said[1], said[2]))
        model = [
            s
            for s in read_surnames(names, surnames)
            if not _overlaps(s.start, s.end, taken)
            and len(s.text) <= rules.ENTITY_NAME_MAX  # a longer "name" is the model's mistake
        ]
        exact = {(s.start, s.end) for s in model}
        known = [
            f
            for f in (known_names.find(text) if known_names else [])
            if f.text[:1].isupper()
            and not _overlaps(f.start, f.end, taken)
            and (f.start, f.end) not in exact  # the model's own find keeps its label
        ]
        places = [(f.start, f.end) for f in known]
        kept = [s for s in model if not _overlaps(s.start, s.end, places)]
        found.append(
            Recognised(finds, kept, known, extracted=settings.MM_ENTITY_EXTRACTION, speaker=said)
        )
    return found
