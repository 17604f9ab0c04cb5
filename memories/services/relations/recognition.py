"""What a text names: the workspace gazetteer's finds, a conversation line's speaker, and the
offline model's names, cleaned (``memories.relational.spans``), that neither overlaps (the
gazetteer wins, then the speaker)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

from memories import rules
from memories.models import Entity
from memories.relational.extraction import Span, extract
from memories.relational.gazetteer import Found, Gazetteer
from memories.relational.spans import clean, speaker


@dataclass
class Recognised:
    """What one text names: the gazetteer's finds, and the model's names that no find
    overlaps."""

    finds: list[Found] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
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


def recognise(workspace_id: int, texts: Sequence[str]) -> list[Recognised]:
    """The gazetteer's finds and the model's names in each text (CPU work: call it outside a
    transaction)."""
    gazetteer = workspace_gazetteer(workspace_id)
    spans = extract(list(texts))
    found = []
    for text, names in zip(texts, spans, strict=True):
        finds = gazetteer.find(text)
        taken = [(f.start, f.end) for f in finds]
        said = speaker(text) if settings.MM_ENTITY_EXTRACTION else None
        if said is not None and any(said[1] < end and start < said[2] for start, end in taken):
            said = None  # a declared name: the gazetteer has it
        if said is not None:
            taken.append((said[1], said[2]))
        kept = [
            s
            for s in clean(text, names)
            if not any(s.start < end and start < s.end for start, end in taken)
            and len(s.text) <= rules.ENTITY_NAME_MAX  # a longer "name" is the model's mistake
        ]
        found.append(Recognised(finds, kept, extracted=settings.MM_ENTITY_EXTRACTION, speaker=said))
    return found
