"""Merging a duplicate memory into the one that survives it (consolidation's dedupe), never
losing it: the duplicate is marked ``merged`` (kept, with its history), a ``same_as`` link
points from it to the survivor, the survivor keeps the higher significance and any pin, and
both memories' histories say what happened and by which rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memories.errors import ValidationFailed
from memories.models import Link, Memory
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
            for m in Memory.objects.select_for_update().filter(pk__in=[survivor.pk, duplicate.pk])
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
