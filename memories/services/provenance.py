"""The one writer of provenance: every change to a memory (or an agent's token) is recorded
here, with who made it, the old and new values and why."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memories.models import Agent, Entity, Memory, ProvenanceEvent
from memories.reading import note_writes

Action = ProvenanceEvent.Action


def iso(value: datetime | None) -> str | None:
    """A time as provenance stores it (ISO 8601), None as None."""
    return value.isoformat() if value else None


def provenance_event(
    memory: Memory | None,
    action: str,
    *,
    workspace_id: int | None = None,
    agent: Agent | None = None,
    user: Any = None,
    subject_agent: Agent | None = None,
    subject_entity: Entity | None = None,
    old: dict[str, Any] | None = None,
    new: dict[str, Any] | None = None,
    reason: str = "",
) -> ProvenanceEvent:
    """An unsaved event (bulk writes insert many at once); ``record`` saves one."""
    if workspace_id is None:
        workspace_id = memory.workspace_id if memory is not None else subject_agent.workspace_id
    return ProvenanceEvent(
        memory=memory,
        workspace_id=workspace_id,
        action=action,
        agent=agent,
        user=user,
        subject_agent=subject_agent,
        subject_entity=subject_entity,
        old_values=old or {},
        new_values=new or {},
        reason=reason,
    )


def record(memory: Memory | None, action: str, **fields: Any) -> ProvenanceEvent:
    return record_event(provenance_event(memory, action, **fields))


def record_event(event: ProvenanceEvent) -> ProvenanceEvent:
    """Save an event made by ``provenance_event``; an agent's, it stamps the agent's last
    write (``memories.reading``)."""
    event.save()
    note_writes([event.agent_id])
    return event


def record_many(events: list[ProvenanceEvent]) -> list[ProvenanceEvent]:
    """Save events made by ``provenance_event`` in one statement (bulk writes)."""
    saved = ProvenanceEvent.objects.bulk_create(events, batch_size=500)
    note_writes(event.agent_id for event in saved)
    return saved
