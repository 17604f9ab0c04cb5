"""Reads: what an agent may see, one memory by id."""

from __future__ import annotations

from memories.errors import NotFound
from memories.models import Agent, Memory


def agent_by_name(*, workspace_slug: str, name: str) -> Agent | None:
    """An active agent, for operators' commands that act as it."""
    return (
        Agent.objects.select_related("workspace", "private_scope")
        .filter(workspace__slug=workspace_slug, name=name, is_active=True)
        .first()
    )


def visible_scope_ids(agent: Agent) -> list[int]:
    """The agent's private scope plus every shared scope it belongs to."""
    ids = list(agent.scopes.values_list("id", flat=True))
    if agent.private_scope_id:
        ids.append(agent.private_scope_id)
    return ids


def memory_get(*, agent: Agent, mem_id: str, for_update: bool = False) -> Memory:
    """One memory the agent may see. Anything else — another workspace's, another agent's
    private one, or an id that does not exist — is the same NotFound."""
    queryset = Memory.objects.filter(
        workspace_id=agent.workspace_id, scope_id__in=visible_scope_ids(agent), mem_id=mem_id
    )
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    memory = queryset.select_related("scope", "superseded_by").first()
    if memory is None:
        raise NotFound(f"no memory {mem_id!r}")
    return memory
