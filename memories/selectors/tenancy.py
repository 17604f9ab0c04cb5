"""Workspaces, agents and scopes as operators and team members see them."""

from __future__ import annotations

from django.db.models import QuerySet

from memories.errors import NotFound
from memories.models import Agent, Scope, Workspace


def agent_by_name(*, workspace_slug: str, name: str) -> Agent | None:
    """An active agent, for operators' commands that act as it."""
    return (
        Agent.objects.select_related("workspace", "private_scope")
        .filter(workspace__slug=workspace_slug, name=name, is_active=True)
        .first()
    )


def workspace_agents(workspace: Workspace) -> QuerySet[Agent]:
    """Every agent of the workspace, active or revoked, with its scopes, by name."""
    return (
        Agent.objects.filter(workspace=workspace)
        .select_related("private_scope")
        .prefetch_related("scopes")
        .order_by("name")
    )


def workspace_by_slug(slug: str) -> Workspace:
    """A workspace by its slug (operators' commands); NotFound when there is none."""
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise NotFound(f"no workspace {slug!r}")
    return workspace


def shared_scopes_for(agent_id: int | None) -> QuerySet[Scope]:
    """The shared scopes an agent may be given: those of its own workspace (none for an agent
    that does not exist)."""
    workspace_id = Agent.objects.filter(pk=agent_id).values("workspace_id")[:1]
    return Scope.objects.filter(workspace_id=workspace_id, kind=Scope.Kind.SHARED)
