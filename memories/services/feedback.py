"""Feedback and forgetting, by agents and by team members; every change recorded."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from memories.errors import ConflictingInput, Errors, NotFound, ValidationFailed
from memories.models import Agent, Memory
from memories.selectors.memories import memory_get
from memories.selectors.permissions import require_role, user_may
from memories.selectors.reader import Reader
from memories.services.provenance import Action, record

#: The feedback actions, and exactly what each does (also in docs/api.md):
#: important  significance ← significance + (1 − significance) × 0.5  (halfway to 1)
#: demote     significance ← significance × 0.5                      (halfway to 0)
#: pin/unpin  pinned ← true / false; significance unchanged
FEEDBACK_ACTIONS = (
    Action.IMPORTANT.value,
    Action.DEMOTE.value,
    Action.PIN.value,
    Action.UNPIN.value,
)
FEEDBACK_STEP = 0.5


def _require_reason(reason: str | None) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed.single("reason", "is required: say why.")
    return reason


def _feedback_errors(action: str, reason: str | None) -> None:
    errors = Errors()
    if action not in FEEDBACK_ACTIONS:
        errors.add("action", f"{action!r} is not one of: {', '.join(FEEDBACK_ACTIONS)}.")
    if not (reason or "").strip():
        errors.add("reason", "is required: say why.")
    errors.raise_if_any()


def _apply_feedback(
    memory: Memory, action: str, reason: str, *, agent: Agent | None = None, user: Any = None
) -> Memory:
    if action in (Action.IMPORTANT, Action.DEMOTE):
        old_value = memory.significance
        if action == Action.IMPORTANT:
            new_value = old_value + (1.0 - old_value) * FEEDBACK_STEP
        else:
            new_value = old_value * FEEDBACK_STEP
        memory.significance = round(new_value, 6)
        changed = {"significance": (old_value, memory.significance)}
    else:
        old_pinned = memory.pinned
        memory.pinned = action == Action.PIN
        changed = {"pinned": (old_pinned, memory.pinned)}
    memory.save(update_fields=[*changed, "updated_at"])
    record(
        memory,
        action,
        agent=agent,
        user=user,
        old={k: v[0] for k, v in changed.items()},
        new={k: v[1] for k, v in changed.items()},
        reason=reason.strip(),
    )
    return memory


def _apply_forget(
    memory: Memory, reason: str, *, agent: Agent | None = None, user: Any = None
) -> Memory:
    if memory.status == Memory.Status.FORGOTTEN:
        raise ConflictingInput.single("mem_id", f"memory {memory.mem_id!r} is already forgotten.")
    old_status = memory.status
    memory.status = Memory.Status.FORGOTTEN
    memory.save(update_fields=["status", "updated_at"])
    record(
        memory,
        Action.FORGET,
        agent=agent,
        user=user,
        old={"status": old_status},
        new={"status": memory.status},
        reason=reason,
    )
    return memory


@transaction.atomic
def memory_feedback(*, agent: Agent, mem_id: str, action: str, reason: str) -> Memory:
    """Apply one feedback action (see FEEDBACK_ACTIONS) and record it with old → new values;
    ``forget`` here is ``memory_forget`` (one of ``CURATE_ACTIONS``, as for team members)."""
    if action == Action.FORGET:
        return memory_forget(agent=agent, mem_id=mem_id, reason=reason)
    _feedback_errors(action, reason)
    memory = memory_get(Reader.of_agent(agent), mem_id, for_update=True)
    return _apply_feedback(memory, action, reason, agent=agent)


@transaction.atomic
def memory_forget(*, agent: Agent, mem_id: str, reason: str) -> Memory:
    """Soft delete: the memory stays in the database, with its history, but is never returned
    by search or compiled again."""
    reason = _require_reason(reason)
    memory = memory_get(Reader.of_agent(agent), mem_id, for_update=True)
    return _apply_forget(memory, reason, agent=agent)


def _curated(user: Any, memory_pk: int) -> Memory:
    # The row is locked where its workspace keeps it (a lock by id alone is refused when the
    # memories are spread over several machines by workspace).
    workspace_id = Memory.objects.filter(pk=memory_pk).values_list("workspace_id", flat=True)
    memory = (
        Memory.objects.select_for_update(of=("self",))
        .filter(workspace_id=workspace_id.first(), pk=memory_pk)
        .first()
    )
    if memory is None or not user_may(user, memory.workspace_id, "read"):
        raise NotFound(f"no memory with id {memory_pk}")
    require_role(user, memory.workspace_id, "curate")
    return memory


@transaction.atomic
def memory_feedback_by_user(*, user: Any, memory_pk: int, action: str, reason: str) -> Memory:
    """Feedback from a team member who may curate the memory's workspace (NotFound
    otherwise, as for a memory that does not exist)."""
    _feedback_errors(action, reason)
    return _apply_feedback(_curated(user, memory_pk), action, reason, user=user)


@transaction.atomic
def memory_forget_by_user(*, user: Any, memory_pk: int, reason: str) -> Memory:
    reason = _require_reason(reason)
    return _apply_forget(_curated(user, memory_pk), reason, user=user)


#: What a team member can do to a memory: the feedback actions, and forget.
CURATE_ACTIONS = (*FEEDBACK_ACTIONS, Action.FORGET.value)


def memory_curate_by_user(*, user: Any, memory_pk: int, action: str, reason: str) -> Memory:
    """One of ``CURATE_ACTIONS`` by a team member (the dashboard and the admin)."""
    if action == Action.FORGET:
        return memory_forget_by_user(user=user, memory_pk=memory_pk, reason=reason)
    return memory_feedback_by_user(user=user, memory_pk=memory_pk, action=action, reason=reason)
