"""Links by hand: a memory linked to another memory or to an entity, and a link removed with
its reason kept in the memory's history."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories import rules
from memories.errors import Errors, NotFound, ValidationFailed
from memories.models import Agent, Link
from memories.selectors.memories import memory_get
from memories.selectors.reader import Reader
from memories.selectors.relations import entity_get
from memories.services.provenance import Action, record


@dataclass(frozen=True)
class LinkResult:
    link: Link
    created: bool


def link_add(
    *,
    agent: Agent,
    mem_id: str,
    to: str | None = None,
    entity: str | None = None,
    kind: str,
    weight: float | None = None,
    note: str = "",
) -> LinkResult:
    """Link one memory the agent sees to another it sees (``to``) or to an entity of the
    workspace (``entity``: its id). A memory or entity it cannot see is NotFound, as one that
    does not exist. The same active link again is that link (``created`` false)."""
    errors = Errors()
    errors.check("type", rules.link_type(kind))
    weight = 1.0 if weight is None else weight
    errors.check("weight", rules.unit_interval(weight))
    if (to is None) == (entity is None):
        errors.add("to", "give either to (a mem_id) or entity (an entity id), not both.")
    elif to is not None:
        errors.check("to", rules.mem_id(to))
    else:
        errors.check("entity", rules.public_id(entity, "entity id"))
    if to is not None and to == mem_id:
        errors.add("to", "a memory cannot be linked to itself.")
    errors.check("note", rules.storable_text(note))
    errors.raise_if_any()
    reader = Reader.of_agent(agent)
    source = memory_get(reader, mem_id)
    target_memory = memory_get(reader, to) if to is not None else None
    target_entity = entity_get(reader, entity) if entity is not None else None
    with transaction.atomic():
        existing = Link.objects.filter(
            workspace_id=agent.workspace_id,
            source=source,
            target_memory=target_memory,
            target_entity=target_entity,
            kind=kind,
            removed_at__isnull=True,
        ).first()
        if existing is not None:
            return LinkResult(existing, created=False)
        link = Link.objects.create(
            workspace_id=agent.workspace_id,
            source=source,
            target_memory=target_memory,
            target_entity=target_entity,
            kind=kind,
            weight=weight,
            origin=Link.Origin.WRITER,
            agent=agent,
            evidence={"given": True, **({"note": note} if note else {})},
        )
        record(source, Action.LINK, agent=agent, new=_link_values(link))
    return LinkResult(link, created=True)


def link_remove(*, agent: Agent, mem_id: str, link_id: str, reason: str) -> Link:
    """Remove one of a memory's links (either end the memory) that the agent sees whole; the
    reason is kept in the memory's history. Another's link, or one it cannot see, is NotFound."""
    reason = (reason or "").strip()
    if message := rules.reason_given(reason, "say why the link goes."):
        raise ValidationFailed.single("reason", message)
    reader = Reader.of_agent(agent)
    source = memory_get(reader, mem_id)
    scope_ids = reader.scope_ids
    with transaction.atomic():
        link = (
            Link.objects.select_for_update(of=("self",))
            .select_related("source", "target_memory", "target_entity")
            .filter(
                workspace_id=agent.workspace_id,
                link_id=link_id if rules.mem_id(link_id) is None else "",
                removed_at__isnull=True,
            )
            .filter(Q(source_id=source.pk) | Q(target_memory_id=source.pk))
            .first()
        )
        if link is None or not _sees_both_ends(link, scope_ids):
            raise NotFound(f"no link {link_id!r} on memory {mem_id!r}")
        link.removed_at = timezone.now()
        link.save(update_fields=["removed_at"])
        record(link.source, Action.UNLINK, agent=agent, old=_link_values(link), reason=reason)
    return link


def _sees_both_ends(link: Link, scope_ids: Iterable[int]) -> bool:
    scope_ids = set(scope_ids)
    if link.source.scope_id not in scope_ids:
        return False
    return link.target_memory is None or link.target_memory.scope_id in scope_ids


def _link_values(link: Link) -> dict[str, Any]:
    return {
        "link_id": link.link_id,
        "type": link.kind,
        "to": link.target_memory.mem_id if link.target_memory else None,
        "entity": link.target_entity.entity_id if link.target_entity else None,
        "weight": link.weight,
    }
