"""The gazetteer: the entities a workspace declares, with their aliases (many at once, all or
none), and the advisory lock that serialises its changes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories import rules
from memories.errors import Errors
from memories.models import Agent, Entity
from memories.reading import note_writes
from memories.relational.gazetteer import normalize, tokens
from memories.selectors.permissions import require_role
from memories.selectors.reader import Reader
from memories.selectors.relations import visible_entities
from memories.services.relations import namesakes
from memories.services.relations.resolution import _fitted


@dataclass(frozen=True)
class DeclareResult:
    entity: Entity
    created: bool


def check_declared(
    value: dict[str, Any], errors: Errors, prefix: str = ""
) -> tuple[str, str, list[str]] | None:
    """One declared entity's ``name``, ``type`` and ``aliases``, every broken rule named."""
    name, kind, aliases = value.get("name"), value.get("type"), value.get("aliases") or []
    broken = False
    for field_name, message in (
        ("name", rules.entity_name(name)),
        ("type", rules.entity_type(kind)),
    ):
        errors.check(prefix + field_name, message)
        broken = broken or message is not None
    if not isinstance(aliases, list):
        errors.add(prefix + "aliases", "must be a list of names.")
        return None
    if len(aliases) > settings.MM_MAX_ENTITIES_PER_MEMORY:
        errors.add(
            prefix + "aliases",
            f"must hold at most {settings.MM_MAX_ENTITIES_PER_MEMORY} names (got {len(aliases)}).",
        )
        return None
    for i, alias in enumerate(aliases):
        message = rules.entity_name(alias)
        errors.check(f"{prefix}aliases[{i}]", message)
        broken = broken or message is not None
    if broken:
        return None
    return name.strip(), kind, [a.strip() for a in aliases]


def entity_declare(
    *,
    workspace_id: int,
    name: str,
    kind: str,
    aliases: list[str] | None = None,
    agent: Agent | None = None,
    user: Any = None,
) -> DeclareResult:
    """Put an entity in the workspace's gazetteer: the entity of that type and name (or alias)
    if there is one, now declared and with these aliases too; else a new one. An alias that
    already names another declared entity is refused (a text would not know which it means)."""
    return entities_declare(
        workspace_id=workspace_id,
        items=[{"name": name, "type": kind, "aliases": aliases or []}],
        agent=agent,
        user=user,
        prefix_items=False,
    )[0]


def entities_declare(
    *,
    workspace_id: int,
    items: list[dict[str, Any]],
    agent: Agent | None = None,
    user: Any = None,
    prefix_items: bool = True,
) -> list[DeclareResult]:
    """Declare many entities (an imported file) at once: all checked first, then all stored
    in one transaction, or none. A team member needs the role for it (``require_role``)."""
    if user is not None:
        require_role(user, workspace_id, "declare entities")
    errors = Errors()
    checked = []
    for i, item in enumerate(items):
        prefix = f"entities[{i}]." if prefix_items else ""
        if not isinstance(item, dict):
            errors.add(prefix.rstrip(".") or "body", "must be an object with name and type.")
            continue
        unknown = sorted(set(item) - {"name", "type", "aliases"})
        for name in unknown:
            errors.add(prefix + name, "is not a known field.")
        found = check_declared(item, errors, prefix)
        if found is not None:
            checked.append((prefix, *found))
    errors.raise_if_any()
    results = []
    with transaction.atomic():
        lock_entities(workspace_id)
        note_writes([agent.pk if agent else None])
        for prefix, name, kind, aliases in checked:
            results.append(
                _declare_one(workspace_id, prefix, name, kind, aliases, agent, user, errors)
            )
        errors.raise_if_any()  # rolls the whole file back
    return [r for r in results if r is not None]


def _declare_one(workspace_id, prefix, name, kind, aliases, agent, user, errors):
    key = _fitted(normalize(name))
    alias_keys = [_fitted(normalize(a)) for a in aliases]
    # The entity of that name or alias (the team's declared type wins over the model's; a
    # curator's stays); among namesakes the one of that type, and a new one when every entity
    # of the name is surely another thing ("Jordan" the country beside Jordan the person).
    same_name = list(
        Entity.objects.select_for_update()
        .filter(workspace_id=workspace_id, keys__contains=[key], merged_into__isnull=True)
        .order_by("-declared", "pk")
    )
    candidates = [namesakes.Namesake(e.pk, e.kind, e.typed_by, e.declared) for e in same_name]
    named = [n for n, e in zip(candidates, same_name, strict=True) if e.normalized == key]
    chosen = namesakes.pick(named or candidates, kind, Entity.TypedBy.DECLARED)
    if chosen is not None:
        entity = next(e for e in same_name if e.pk == chosen.pk)
    else:  # another thing than every entity of the name; of an alias only: a conflict below
        entity = None if named else (same_name[0] if same_name else None)
    if entity is not None and entity.declared and entity.kind != kind and entity.normalized != key:
        entity = None  # an alias of another declared entity: a conflict (below)
    if entity is not None and entity.typed_by != Entity.TypedBy.CURATOR:
        if not namesakes.collisions(workspace_id, {entity.pk: kind}):
            entity.kind = kind
        entity.typed_by = Entity.TypedBy.DECLARED
    taken = (
        Entity.objects.filter(
            workspace_id=workspace_id, declared=True, keys__overlap=[key, *alias_keys]
        )
        .exclude(pk=entity.pk if entity else None)
        .values_list("name", "keys", "kind", "normalized")
    )
    for other_name, other_keys, other_kind, other_normalized in taken:
        for i, alias_key in enumerate([key, *alias_keys]):
            if (
                i == 0
                and other_normalized == key
                and namesakes.thing(other_kind) != namesakes.thing(kind)
            ):
                continue  # a namesake that is another thing: both stand
            if alias_key in other_keys:
                field_name = "name" if i == 0 else f"aliases[{i - 1}]"
                errors.conflict(
                    prefix + field_name,
                    f"already names the declared entity {other_name!r}.",
                )
    if errors.errors:
        return None
    created = entity is None or not _known_to(agent, entity)
    if entity is not None and created:
        entity.name = name  # the row another scope's mention made: this declaration names it
    if entity is None:
        entity = Entity(
            workspace_id=workspace_id,
            kind=kind,
            name=name,
            normalized=key,
            origin=Entity.Origin.GAZETTEER if agent is not None else Entity.Origin.MEMBER,
            typed_by=Entity.TypedBy.DECLARED,
            created_by_agent=agent,
            created_by_user=user,
        )
    if not entity.declared:
        entity.declared, entity.declared_at = True, timezone.now()
    entity.aliases = list(
        dict.fromkeys([*entity.aliases, *(a for a in aliases if a != entity.name)])
    )
    entity.keys = list(dict.fromkeys([entity.normalized, *entity.keys, key, *alias_keys]))
    entity.tokens = tokens(entity.keys)
    entity.save()
    return DeclareResult(entity, created)


def _known_to(agent: Agent | None, entity: Entity) -> bool:
    """Whether the declaring agent may know of ``entity`` (a team member knows every one): a
    declaration's answer (201 new, 200 known) says only what the caller could have seen."""
    if agent is None:
        return True
    return visible_entities(Reader.of_agent(agent)).filter(pk=entity.pk).exists()


#: First key of the advisory lock that serialises the gazetteer's changes in a workspace.
ENTITY_LOCK_NAMESPACE = 0x6D65  # "me"


def lock_entities(workspace_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)", [ENTITY_LOCK_NAMESPACE, workspace_id]
        )
