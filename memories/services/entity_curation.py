"""A curator's corrections to the workspace's entities: merging two that are one (and undoing
it), correcting the type an entity was given, and splitting off mentions of a namesake that is
another thing. Each needs the curator role
(``require_role``), takes a reason, and is kept in the entity's history."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories import rules
from memories.errors import Errors, NotFound, ValidationFailed
from memories.models import Entity, Link
from memories.relational.gazetteer import tokens
from memories.selectors.permissions import require_role
from memories.services.provenance import Action, record
from memories.services.relations import lock_entities, namesakes


def entity_merge(*, user: Any, entity: Entity, into: Entity, reason: str) -> Entity:
    """``entity`` is ``into``: its mentions count as ``into``'s from now on; the entities
    merged into it before are re-pointed to ``into`` (kept in the event, for an undo). Nothing
    moves: the links keep the entity they named, so ``entity_unmerge`` gives everything back."""
    require_role(user, entity.workspace_id, "merge entities")
    reason = (reason or "").strip()
    errors = Errors()
    errors.check("reason", rules.reason_given(reason, "say why these are one entity."))
    if entity.pk == into.pk:
        errors.add("into", "is this entity: merge it into another.")
    if entity.workspace_id != into.workspace_id:
        raise NotFound("no such entity")
    if entity.merged_into_id:
        errors.add("entity", f"is merged into another entity already ({entity.merged_into}).")
    if into.merged_into_id:
        errors.add("into", f"is merged into {into.merged_into} itself: merge into that one.")
    errors.raise_if_any()
    with transaction.atomic():
        lock_entities(entity.workspace_id)
        moved = list(Entity.objects.filter(merged_into=entity).values_list("entity_id", flat=True))
        Entity.objects.filter(merged_into=entity).update(merged_into=into)
        entity.merged_into = into
        entity.save(update_fields=["merged_into", "updated_at"])
        _event(
            entity,
            Action.MERGE,
            user,
            {"merged_into": None},
            {"merged_into": into.entity_id, "name": into.name, "moved": moved},
            reason,
        )
    return entity


def entity_unmerge(*, user: Any, entity: Entity, reason: str) -> Entity:
    """Undo ``entity``'s merge: it stands for itself again, and the entities its merge moved
    come back to it."""
    require_role(user, entity.workspace_id, "merge entities")
    reason = (reason or "").strip()
    if message := rules.reason_given(reason, "say why they are two."):
        raise ValidationFailed.single("reason", message)
    if entity.merged_into_id is None:
        raise ValidationFailed.single("entity", "is not merged into another entity.")
    with transaction.atomic():
        lock_entities(entity.workspace_id)
        # Checked under the lock: one entity per name and kind of thing stands.
        namesake = next(
            (
                n
                for n in Entity.objects.filter(
                    workspace_id=entity.workspace_id,
                    normalized=entity.normalized,
                    merged_into__isnull=True,
                ).exclude(pk=entity.pk)
                if namesakes.thing(n.kind) == namesakes.thing(entity.kind)
            ),
            None,
        )
        if namesake is not None:
            raise ValidationFailed.single(
                "entity",
                f"has the name of {namesake.name!r} ({namesake.entity_id}, {namesake.kind}), "
                "the same kind of thing: a workspace keeps one entity per name and kind of "
                "thing; split off the mentions that are another thing instead.",
            )
        into = entity.merged_into
        last = entity.events.filter(action=Action.MERGE).order_by("-created_at", "-id").first()
        moved = (last.new_values.get("moved") or []) if last else []
        Entity.objects.filter(entity_id__in=moved, merged_into=into).update(merged_into=entity)
        entity.merged_into = None
        entity.save(update_fields=["merged_into", "updated_at"])
        _event(
            entity,
            Action.UNMERGE,
            user,
            {"merged_into": into.entity_id, "name": into.name},
            {"merged_into": None, "moved_back": moved},
            reason,
        )
    return entity


def entity_retype(*, user: Any, entity: Entity, kind: str, reason: str) -> Entity:
    """Correct ``entity``'s type: a model's guess (``organization`` for a customer) or a
    writer's slip. Its names, aliases, links and history stay; names found later still resolve
    to it (the namesake of their type first: ``namesakes``), and no writer, speaker or recount
    of the model's labels changes a type a curator gave (``Entity.TypedBy.CURATOR``)."""
    kind, reason, errors = _correction(user, entity, kind, reason, "say why the type was wrong.")
    if kind == entity.kind:
        errors.add("type", f"is its type already ({kind}).")
    if entity.merged_into_id:
        errors.add("entity", f"is merged into {entity.merged_into}: correct that one.")
    errors.raise_if_any()
    with transaction.atomic():
        lock_entities(entity.workspace_id)
        entity = Entity.objects.select_for_update().get(
            pk=entity.pk, workspace_id=entity.workspace_id
        )
        if namesakes.collisions(entity.workspace_id, {entity.pk: kind}):  # under the lock
            raise ValidationFailed.single(
                "type",
                f"is the kind of thing of its namesake {entity.name!r}: merge the two if they "
                "are one thing.",
            )
        old = entity.kind
        entity.kind, entity.typed_by = kind, Entity.TypedBy.CURATOR
        entity.save(update_fields=["kind", "typed_by", "updated_at"])
        _event(entity, Action.RETYPE, user, {"type": old}, {"type": kind}, reason)
    return entity


#: What a split writes in the evidence of a mention it sets aside (the memory names the
#: namesake too), so that splitting back restores it.
SET_ASIDE = "a curator's split: the memory names its namesake too"


def entity_split(
    *, user: Any, entity: Entity, kind: str, memories: list[str], reason: str
) -> Entity:
    """Some of ``entity``'s mentions are of another thing of the same name ("Jordan" the
    country among the mentions of Jordan the person): the mentions of ``memories`` (their
    ids) go to its namesake of type ``kind``, made if there is none (typed by the curator).
    Both entities' histories keep what moved and why; a split back moves them again (and
    restores a mention it set aside because the memory named both)."""
    kind, reason, errors = _correction(
        user, entity, kind, reason, "say why these mentions are another thing."
    )
    if kind and namesakes.thing(kind) == namesakes.thing(entity.kind):
        errors.add(
            "type",
            f"is the kind of thing it is already ({entity.kind}): a namesake is another thing; "
            "correct its type instead.",
        )
    if entity.merged_into_id:
        errors.add("entity", f"is merged into {entity.merged_into}: split that one.")
    ids = [m.strip() for m in memories or [] if isinstance(m, str) and m.strip()]
    if not ids:
        errors.add("memories", "name at least one memory whose mention moves.")
    errors.raise_if_any()
    with transaction.atomic():
        lock_entities(entity.workspace_id)
        links = {
            link.source.mem_id: link
            for link in Link.objects.select_related("source").filter(
                Q(target_entity=entity) | Q(target_entity__merged_into=entity),
                workspace_id=entity.workspace_id,
                kind="mentions",
                removed_at__isnull=True,
                source__mem_id__in=ids,
            )
        }
        for i, mem_id in enumerate(ids):
            if mem_id not in links:
                errors.add(
                    f"memories[{i}]", f"{mem_id!r} is no memory that mentions {entity.name}."
                )
        errors.raise_if_any()
        namesake, made = _namesake(user, entity, kind)
        already = set(
            Link.objects.filter(
                workspace_id=entity.workspace_id,
                target_entity=namesake,
                kind="mentions",
                removed_at__isnull=True,
                source__in=[link.source for link in links.values()],
            ).values_list("source_id", flat=True)
        )
        # A mention an earlier split set aside because the memory named the namesake too
        # comes back when the split is undone: the memory named both, and names both again.
        set_aside = {
            link.source_id: link
            for link in Link.objects.filter(
                workspace_id=entity.workspace_id,
                target_entity=namesake,
                kind="mentions",
                removed_at__isnull=False,
                evidence__set_aside=SET_ASIDE,
                source__in=[link.source for link in links.values()],
            )
        }
        for link in links.values():
            if link.source_id in set_aside:
                back = set_aside[link.source_id]
                back.removed_at = None
                back.evidence = {k: v for k, v in back.evidence.items() if k != "set_aside"}
                back.save(update_fields=["removed_at", "evidence"])
            elif link.source_id in already:  # it names the namesake too: one mention
                link.removed_at = timezone.now()
                link.evidence = {**link.evidence, "set_aside": SET_ASIDE}
                link.save(update_fields=["removed_at", "evidence"])
            else:
                link.target_entity = namesake
                link.evidence = {**link.evidence, "namesake": "a curator's split"}
                link.save(update_fields=["target_entity", "evidence"])
        moved = sorted(links)
        _event(
            entity, Action.SPLIT, user, {}, {"to": namesake.entity_id, "memories": moved}, reason
        )
        _event(
            namesake,
            Action.SPLIT,
            user,
            {},
            {"from": entity.entity_id, "memories": moved, "made": made},
            reason,
        )
    return namesake


def _correction(
    user: Any, entity: Entity, kind: str, reason: str, why: str
) -> tuple[str, str, Errors]:
    """A curator's type correction or split, checked alike: the role, the type given (trimmed)
    and a reason (``why`` asks for it); the errors so far, for the caller's own checks."""
    require_role(user, entity.workspace_id, "correct entities")
    kind = kind.strip() if isinstance(kind, str) else kind
    reason = (reason or "").strip()
    errors = Errors()
    errors.check("type", rules.entity_type(kind))
    errors.check("reason", rules.reason_given(reason, why))
    return kind, reason, errors


def _namesake(user: Any, entity: Entity, kind: str) -> tuple[Entity, bool]:
    """``entity``'s namesake of type ``kind``, made (typed by the curator) if there is none."""
    standing = Entity.objects.filter(
        workspace_id=entity.workspace_id, normalized=entity.normalized, merged_into__isnull=True
    ).order_by("pk")
    found = next((n for n in standing if n.kind == kind), None) or next(
        (n for n in standing if namesakes.thing(n.kind) == namesakes.thing(kind)), None
    )
    if found is not None:
        return found, False
    made = Entity.objects.create(
        workspace_id=entity.workspace_id,
        kind=kind,
        name=entity.name,
        normalized=entity.normalized,
        keys=[entity.normalized],
        tokens=tokens([entity.normalized]),
        origin=Entity.Origin.MEMBER,
        typed_by=Entity.TypedBy.CURATOR,
        created_by_user=user,
    )
    return made, True


def _event(entity: Entity, action: str, user: Any, old: dict, new: dict, reason: str) -> None:
    """The entity's history: what a curator changed, and why."""
    record(
        None,
        action,
        workspace_id=entity.workspace_id,
        user=user,
        subject_entity=entity,
        old=old,
        new=new,
        reason=reason,
    )
