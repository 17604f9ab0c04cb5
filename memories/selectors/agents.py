"""Agents as operators and team members see them."""

from __future__ import annotations

from django.db.models import QuerySet

from memories.models import Agent, Workspace


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
