"""A memory's links both ways (the engine's own ``supersedes`` and ``follows`` among them)
and its entities, as a reader may see them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q

from memories.models import Entity, Link, Memory
from memories.selectors.reader import Reader


@dataclass(frozen=True)
class LinkView:
    """One link of a memory as its reader sees it."""

    link_id: str | None  # None for the engine's own (supersedes, follows)
    kind: str
    direction: str  # "out": this memory → other; "in": other → this memory
    other_memory: Memory | None
    other_entity: Entity | None
    weight: float
    origin: str  # writer, extraction, gazetteer, consolidation, member, engine
    made_by: str  # agent:<name>, user:<name>, the model, or "engine"
    evidence: dict[str, Any]
    created_at: datetime | None


def link_made_by(link: Link) -> str:
    """Who or what made a link: ``agent:<name>``, ``user:<name>``, the model, or its origin."""
    if link.agent_id:
        return f"agent:{link.agent.name}"
    if link.user_id:
        return f"user:{link.user.get_username()}"
    if link.origin == Link.Origin.EXTRACTION:
        return str(link.evidence.get("model", "extraction"))
    return link.origin


#: What a link's other memory shows (not its vectors or the rest of its row).
OTHER_MEMORY_FIELDS = ("mem_id", "text", "scope_id")


def memory_links(reader: Reader, memory: Memory, *, rows: bool = True) -> list[LinkView]:
    """The memory's active links as ``reader`` sees them, out then in, then the engine's own:
    what it supersedes and what superseded it, what it follows in its session and what follows
    it. Two queries; one without ``rows`` (the engine's own only: a memory written in this
    very request, whose enrichment is still to come, has no link rows yet)."""
    views = _link_rows(reader, memory) if rows else []
    engine = Q(superseded_by=memory) | Q(follows=memory)
    engine |= Q(pk__in=[pk for pk in (memory.superseded_by_id, memory.follows_id) if pk])
    others = list(
        reader.sees(Memory.objects.filter(engine))
        .only(*OTHER_MEMORY_FIELDS, "superseded_by_id", "follows_id")
        .order_by("pk")
    )
    for kind, direction, same in (
        ("supersedes", "out", lambda other: other.superseded_by_id == memory.pk),
        ("supersedes", "in", lambda other: other.pk == memory.superseded_by_id),
        ("follows", "out", lambda other: other.pk == memory.follows_id),
        ("follows", "in", lambda other: other.follows_id == memory.pk),
    ):
        views += [
            LinkView(None, kind, direction, other, None, 1.0, "engine", "engine", {}, None)
            for other in others
            if same(other)
        ]
    return views


def _link_rows(reader: Reader, memory: Memory) -> list[LinkView]:
    """The memory's link rows, out then in, as ``reader`` sees them."""
    scope_ids = reader.scope_ids
    outgoing = Q(source=memory)
    incoming = Q(target_memory=memory)
    if scope_ids is not None:
        outgoing &= Q(target_memory__isnull=True) | Q(target_memory__scope_id__in=scope_ids)
        incoming &= Q(source__scope_id__in=scope_ids)
    links = list(
        Link.objects.filter(outgoing | incoming, removed_at__isnull=True)
        .select_related("agent", "user", "target_memory", "target_entity", "source")
        .only(
            *(f.name for f in Link._meta.concrete_fields),
            *(f"target_memory__{name}" for name in OTHER_MEMORY_FIELDS),
            *(f"source__{name}" for name in OTHER_MEMORY_FIELDS),
            "agent__name",
            f"user__{get_user_model().USERNAME_FIELD}",  # what link_made_by shows
            "target_entity__entity_id",
            "target_entity__name",
            "target_entity__kind",
        )
        .order_by("created_at", "id")
    )

    def view(link: Link, direction: str) -> LinkView:
        other = link.target_memory if direction == "out" else link.source
        entity = link.target_entity if direction == "out" else None
        return LinkView(
            link.link_id,
            link.kind,
            direction,
            other,
            entity,
            link.weight,
            link.origin,
            link_made_by(link),
            link.evidence,
            link.created_at,
        )

    # A link from the memory to itself is both one of its own and one to it.
    views = [view(link, "out") for link in links if link.source_id == memory.pk]
    views += [view(link, "in") for link in links if link.target_memory_id == memory.pk]
    return views


def memory_entities(memory: Memory) -> list[Entity]:
    """The entities the memory mentions (merged ones as the entity they were merged into)."""
    ids = Link.objects.filter(
        workspace_id=memory.workspace_id,
        source=memory,
        target_entity__isnull=False,
        target_entity__workspace_id=memory.workspace_id,
        removed_at__isnull=True,
    ).values_list("target_entity__merged_into_id", "target_entity_id")
    wanted = {merged or pk for merged, pk in ids}
    return list(
        Entity.objects.filter(workspace_id=memory.workspace_id, pk__in=wanted).order_by(
            "kind", "name"
        )
    )
