"""Supersession: a newer memory replaces an older one, whose window closes where it begins."""

from __future__ import annotations

from typing import Any

from memories.errors import ValidationFailed
from memories.models import Agent, Memory
from memories.selectors.permissions import require_role
from memories.services.provenance import Action, iso, provenance_event, record_many


def supersede(
    *,
    old: Memory,
    new: Memory,
    agent: Agent | None = None,
    user: Any = None,
    reason: str = "",
) -> None:
    """Close ``old``'s window where ``new``'s begins and mark it superseded by ``new``, inside
    the caller's transaction (ValidationFailed when another writer superseded it first). The
    writer, or the curator (``user``) or rule (``reason``) that decided it, is in both
    histories; a curator needs the role to curate the workspace (``require_role``)."""
    if user is not None:
        require_role(user, old.workspace_id, "curate")
    old = Memory.objects.select_for_update().get(pk=old.pk)
    if old.status != Memory.Status.ACTIVE:  # lost a race with another writer
        raise ValidationFailed.single(
            "supersedes", f"memory {old.mem_id!r} is {old.status}, not active."
        )
    before = {"status": old.status, "valid_until": iso(old.valid_until), "superseded_by": None}
    old.status = Memory.Status.SUPERSEDED
    old.valid_until = new.valid_from
    old.superseded_by = new
    old.save(update_fields=["status", "valid_until", "superseded_by", "updated_at"])
    after = {"status": old.status, "valid_until": iso(old.valid_until), "superseded_by": new.mem_id}
    record_many(
        [
            provenance_event(
                old,
                Action.SUPERSEDE,
                agent=agent,
                user=user,
                old=before,
                new=after,
                reason=f"superseded by {new.mem_id}" + (f": {reason}" if reason else ""),
            ),
            provenance_event(
                new,
                Action.SUPERSEDE,
                agent=agent,
                user=user,
                new={"supersedes": old.mem_id, "valid_from": iso(new.valid_from)},
                reason=f"supersedes {old.mem_id}" + (f": {reason}" if reason else ""),
            ),
        ]
    )
