"""What a writer gives with a memory: its ``entities`` and ``links``, checked, each rule
broken named by its field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from memories import rules
from memories.errors import Errors
from memories.models import Agent, Memory
from memories.selectors.visibility import visible_scope_ids


@dataclass(frozen=True)
class EntityRef:
    name: str
    kind: str


@dataclass(frozen=True)
class LinkRef:
    target: Memory
    kind: str
    weight: float


def check_entities(value: Any, errors: Errors, field_name: str = "entities") -> list[EntityRef]:
    """The writer's ``entities`` (a list of ``{"name", "type"}``), each rule broken named as
    ``entities[<i>].<field>``."""
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(field_name, 'must be a list of {"name": ..., "type": ...}.')
        return []
    if len(value) > settings.MM_MAX_ENTITIES_PER_MEMORY:
        errors.add(
            field_name,
            f"must hold at most {settings.MM_MAX_ENTITIES_PER_MEMORY} entities "
            f"(got {len(value)}; MM_MAX_ENTITIES_PER_MEMORY).",
        )
        return []
    found = []
    for i, item in enumerate(value):
        name, kind = (
            (item.get("name"), item.get("type")) if isinstance(item, dict) else (None, None)
        )
        message = rules.entity_name(name)
        errors.check(f"{field_name}[{i}].name", message)
        errors.check(f"{field_name}[{i}].type", rules.entity_type(kind))
        if message is None and rules.entity_type(kind) is None:
            found.append(EntityRef(name.strip(), kind))
    return found


def check_links(
    agent: Agent, value: Any, errors: Errors, field_name: str = "links"
) -> list[LinkRef]:
    """The writer's ``links`` (a list of ``{"to": mem_id, "type", "weight"?}``). A target the
    agent cannot see is named exactly as one that does not exist."""
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(field_name, 'must be a list of {"to": mem_id, "type": ...}.')
        return []
    if len(value) > settings.MM_MAX_LINKS_PER_MEMORY:
        errors.add(
            field_name,
            f"must hold at most {settings.MM_MAX_LINKS_PER_MEMORY} links "
            f"(got {len(value)}; MM_MAX_LINKS_PER_MEMORY).",
        )
        return []
    wanted: list[tuple[int, str, str, float]] = []
    for i, item in enumerate(value):
        item = item if isinstance(item, dict) else {}
        to, kind, weight = item.get("to"), item.get("type"), item.get("weight", 1.0)
        broken = False
        for name, message in (
            ("to", rules.mem_id(to)),
            ("type", rules.link_type(kind)),
            ("weight", rules.unit_interval(weight) if weight is not None else "must be a number."),
        ):
            errors.check(f"{field_name}[{i}].{name}", message)
            broken = broken or message is not None
        if not broken:
            wanted.append((i, to, kind, float(weight)))
    visible = {
        m.mem_id: m
        for m in Memory.objects.filter(
            workspace_id=agent.workspace_id,
            scope_id__in=visible_scope_ids(agent),
            mem_id__in={to for _, to, _, _ in wanted},
        )
    }
    found = []
    for i, to, kind, weight in wanted:
        if to not in visible:
            errors.missing(f"{field_name}[{i}].to", f"no memory {to!r} is visible to this agent.")
        else:
            found.append(LinkRef(visible[to], kind, weight))
    return found
