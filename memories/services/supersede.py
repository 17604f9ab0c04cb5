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
    old = Memory.objects.select_for_update(no_key=True).get(
        workspace_id=old.workspace_id, pk=old.pk
    )
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


def supersession_undo(*, memory: Memory, reason: str, user: Any = None) -> Memory:
    """Undo a supersession: ``memory`` (superseded) is active again, its window as it was
    before (``valid_until`` from the history's last supersede event) and no longer superseded
    by anything; both histories record who undid it and why. A curator needs the role to curate
    (``require_role``); a memory that is not superseded, or no reason, is a ValidationFailed,
    and nothing is written."""
    from datetime import datetime

    from memories import rules
    from memories.models import ProvenanceEvent

    if user is not None:
        require_role(user, memory.workspace_id, "curate")
    reason = (reason or "").strip()
    if message := rules.reason_given(reason, "say why the supersession is undone."):
        raise ValidationFailed.single("reason", message)
    memory = Memory.objects.select_for_update(no_key=True).get(
        workspace_id=memory.workspace_id, pk=memory.pk
    )
    if memory.status != Memory.Status.SUPERSEDED:
        raise ValidationFailed.single(
            "mem_id", f"memory {memory.mem_id!r} is {memory.status}, not superseded."
        )
    event = (
        ProvenanceEvent.objects.filter(
            workspace_id=memory.workspace_id, memory=memory, action=Action.SUPERSEDE
        )
        .order_by("-created_at", "-id")
        .first()
    )
    was = (event.old_values or {}).get("valid_until") if event is not None else None
    newer = memory.superseded_by
    before = {
        "status": memory.status,
        "valid_until": iso(memory.valid_until),
        "superseded_by": newer.mem_id if newer is not None else None,
    }
    memory.status = Memory.Status.ACTIVE
    memory.valid_until = datetime.fromisoformat(was) if was else None
    memory.superseded_by = None
    memory.save(update_fields=["status", "valid_until", "superseded_by", "updated_at"])
    after = {"status": memory.status, "valid_until": iso(memory.valid_until), "superseded_by": None}
    events = [
        provenance_event(
            memory,
            Action.RESTORE,
            user=user,
            old=before,
            new=after,
            reason=f"supersession undone: {reason}",
        )
    ]
    if newer is not None:
        events.append(
            provenance_event(
                newer,
                Action.RESTORE,
                user=user,
                old={"supersedes": memory.mem_id},
                new={"supersedes": None},
                reason=f"no longer supersedes {memory.mem_id}: {reason}",
            )
        )
    record_many(events)
    return memory
