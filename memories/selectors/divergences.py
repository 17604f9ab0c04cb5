"""Divergences as a reader may see them: an agent sees one only when it sees both memories (a
divergence with a memory it cannot see does not exist for it); a team member sees the
workspace's."""

from __future__ import annotations

from django.db.models import QuerySet

from memories.errors import NotFound
from memories.features import require_divergence
from memories.models import Agent, Divergence, Workspace
from memories.selectors.visibility import visible_scope_ids


def divergences_visible(
    *, agent: Agent | None = None, workspace: Workspace | None = None, status: str | None = None
) -> QuerySet[Divergence]:
    """Newest first, with both memories (and their scopes) loaded."""
    if agent is None and workspace is None:
        raise ValueError("divergences_visible needs an agent or a workspace")
    if agent is not None:  # an agent's read: the feature is opt-in
        require_divergence()
    rows = Divergence.objects.select_related(
        "first__scope", "second__scope", "link", "closed_by"
    ).filter(workspace=agent.workspace_id if agent is not None else workspace.pk)
    if agent is not None:
        scope_ids = visible_scope_ids(agent)
        rows = rows.filter(first__scope_id__in=scope_ids, second__scope_id__in=scope_ids)
    if status:
        rows = rows.filter(status=status)
    return rows.order_by("-created_at", "-id")


def divergence_get(
    *, divergence_id: str, agent: Agent | None = None, workspace: Workspace | None = None
) -> Divergence:
    """One divergence by its public id; one the reader may not see is NotFound, like a missing
    one."""
    found = divergences_visible(agent=agent, workspace=workspace).filter(
        divergence_id=divergence_id
    )
    divergence = found.first()
    if divergence is None:
        raise NotFound(f"no divergence {divergence_id!r}")
    return divergence
