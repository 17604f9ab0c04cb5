"""Supersession: a newer memory replaces an older one, whose window closes where it begins."""

from __future__ import annotations

from datetime import datetime
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
    old = Memory.objects.select_for_update().get(workspace_id=old.workspace_id, pk=old.pk)
    if old.status != Memory.Status.ACTIVE:  # lost a race with another writer
        raise ValidationFailed.single(
            "supersedes", f"memory {old.mem_id!r} is {old.status}, not active."
        )
    before = {"status": old.status, "valid_until": iso(old.valid_until), "superseded_by": None}
    begins = _successor_begins(old, new)
    old.status = Memory.Status.SUPERSEDED
    old.valid_until = begins if begins is not None else old.valid_until
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


def _successor_begins(old: Memory, new: Memory) -> datetime | None:
    """When ``new`` starts being true, which is when ``old`` stops: its ``valid_from``, or,
    when it gave none (a memory a curator or consolidation found to supersede another, written
    without ``supersedes``), the instant it was written, which then becomes its ``valid_from``
    (as remember's ``supersedes`` sets it). None where no instant fits both windows (``old``
    starting later than ``new``, or ``new`` ending before it was written): ``old`` keeps its
    window, and its status alone says it was superseded."""
    begins = new.valid_from or new.created_at
    if old.valid_from is not None and not old.valid_from < begins:
        return None
    if new.valid_from is None:
        if new.valid_until is not None and not begins < new.valid_until:
            return None
        new.valid_from = begins
        Memory.objects.filter(pk=new.pk).update(valid_from=begins)
    return begins
