"""Merging a duplicate memory into the one that survives it (consolidation's dedupe), never
losing it: the duplicate is marked ``merged`` (kept, with its history), a ``same_as`` link
points from it to the survivor, the survivor keeps the higher significance and any pin, and
both memories' histories say what happened and by which rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from memories import rules
from memories.errors import ValidationFailed
from memories.models import Link, Memory
from memories.selectors.permissions import require_role
from memories.services.provenance import Action, record


@dataclass(frozen=True)
class MergeResult:
    survivor: Memory
    merged: Memory
    link: Link


def memory_merge(
    *, survivor: Memory, duplicate: Memory, rule: str, evidence: dict[str, Any] | None = None
) -> MergeResult:
    """Merge ``duplicate`` into ``survivor`` in one transaction (ValidationFailed when either
    is no longer active, or they are one memory or of different scopes)."""
    if survivor.pk == duplicate.pk:
        raise ValidationFailed.single("duplicate", "a memory cannot be merged into itself.")
    with transaction.atomic():
        rows = {
            m.pk: m
            for m in Memory.objects.select_for_update().filter(
                pk__in=[survivor.pk, duplicate.pk],
                workspace_id__in={survivor.workspace_id, duplicate.workspace_id},
            )
        }
        survivor, duplicate = rows[survivor.pk], rows[duplicate.pk]
        for name, memory in (("survivor", survivor), ("duplicate", duplicate)):
            if memory.status != Memory.Status.ACTIVE:
                raise ValidationFailed.single(
                    name, f"memory {memory.mem_id!r} is {memory.status}, not active."
                )
        if survivor.scope_id != duplicate.scope_id:
            raise ValidationFailed.single("duplicate", "memories of two scopes are never merged.")
        survivor_before = {"significance": survivor.significance, "pinned": survivor.pinned}
        survivor.significance = max(survivor.significance, duplicate.significance)
        survivor.pinned = survivor.pinned or duplicate.pinned
        survivor.save(update_fields=["significance", "pinned", "updated_at"])
        duplicate.status = Memory.Status.MERGED
        duplicate.save(update_fields=["status", "updated_at"])
        link = Link.objects.create(
            workspace_id=survivor.workspace_id,
            source=duplicate,
            target_memory=survivor,
            kind="same_as",
            origin=Link.Origin.CONSOLIDATION,
            evidence={"rule": rule, **(evidence or {})},
        )
        reason = f"consolidation: {rule}"
        record(
            duplicate,
            Action.MERGE,
            old={"status": Memory.Status.ACTIVE.value},
            new={"status": Memory.Status.MERGED.value, "into": survivor.mem_id},
            reason=reason,
        )
        record(
            survivor,
            Action.MERGE,
            old=survivor_before,
            new={
                "significance": survivor.significance,
                "pinned": survivor.pinned,
                "absorbed": duplicate.mem_id,
            },
            reason=reason,
        )
    return MergeResult(survivor=survivor, merged=duplicate, link=link)


def memory_restore(*, merged: Memory, reason: str, user: Any = None, agent: Any = None) -> Memory:
    """Undo a merge: ``merged`` is active again, its ``same_as`` link removed (its row kept),
    and the survivor gets back the significance and pin it had before, unless they changed
    since; both histories record it with ``reason`` (ValidationFailed when it is not merged or
    no reason is given). A team member (``user``) needs the role to curate (``require_role``)."""
    if user is not None:
        require_role(user, merged.workspace_id, "curate")
    reason = (reason or "").strip()
    if message := rules.reason_given(reason, "say why the merge is undone."):
        raise ValidationFailed.single("reason", message)
    with transaction.atomic():
        merged = Memory.objects.select_for_update().get(
            pk=merged.pk, workspace_id=merged.workspace_id
        )
        if merged.status != Memory.Status.MERGED:
            raise ValidationFailed.single(
                "mem_id", f"memory {merged.mem_id!r} is {merged.status}, not merged."
            )
        link = (
            Link.objects.select_for_update()
            .filter(
                source=merged,
                workspace_id=merged.workspace_id,
                kind="same_as",
                removed_at__isnull=True,
            )
            .order_by("-created_at", "-id")
            .first()
        )
        merged.status = Memory.Status.ACTIVE
        merged.save(update_fields=["status", "updated_at"])
        record(
            merged,
            Action.RESTORE,
            user=user,
            agent=agent,
            old={"status": Memory.Status.MERGED.value},
            new={"status": Memory.Status.ACTIVE.value},
            reason=reason,
        )
        if link is None:
            return merged
        link.removed_at = timezone.now()
        link.save(update_fields=["removed_at"])
        survivor = Memory.objects.select_for_update().get(
            pk=link.target_memory_id, workspace_id=merged.workspace_id
        )
        event = (
            survivor.provenance.filter(action=Action.MERGE, new_values__absorbed=merged.mem_id)
            .order_by("-created_at", "-id")
            .first()
        )
        if event is not None:
            now = {"significance": survivor.significance, "pinned": survivor.pinned}
            after_merge = {k: event.new_values.get(k) for k in now}
            if now == after_merge:  # untouched since: back to what it was
                survivor.significance = event.old_values["significance"]
                survivor.pinned = event.old_values["pinned"]
                survivor.save(update_fields=["significance", "pinned", "updated_at"])
            record(
                survivor,
                Action.RESTORE,
                user=user,
                agent=agent,
                old=now,
                new={
                    "significance": survivor.significance,
                    "pinned": survivor.pinned,
                    "released": merged.mem_id,
                },
                reason=reason,
            )
    return merged
