"""Who may do what: a team member's role in a workspace, and the one gate every change by a
team member passes (``require_role``), whichever adapter asked for it (dashboard, admin,
REST, MCP, CLI)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from memories.errors import Forbidden, NotFound
from memories.models import Membership, Workspace

Role = Membership.Role

#: Each thing a team member does in a workspace, and the least role it needs (roles rank
#: viewer < curator < admin; a superuser is an admin of every workspace). The table of roles
#: and actions in docs/SECURITY.md is this one (``memories/tests/test_permissions.py`` holds
#: them together).
#: Django's own permissions never widen it: they open the admin's pages, not workspaces.
ROLE_FOR: dict[str, str] = {
    "read": Role.VIEWER,  # memories, search, the compiled file, entities, sources, history
    "curate": Role.CURATOR,  # feedback on memories: important, demote, pin, unpin, forget
    "declare entities": Role.CURATOR,  # the gazetteer: names, types, aliases
    "merge entities": Role.CURATOR,  # and undo a merge
    "correct entities": Role.CURATOR,  # an entity's type
    "close divergences": Role.CURATOR,  # resolve or dismiss, with a reason
    "decide proposals": Role.CURATOR,  # accept or reject a supersession proposal
    "consolidate": Role.CURATOR,  # start a consolidation run
    "manage agents": Role.CURATOR,  # create, revoke, reactivate, new token
    "manage members": Role.ADMIN,  # add, change the role of, remove
    "erase": Role.ADMIN,  # memories for good, by memory, source, agent or session
}

_RANK = {Role.VIEWER: 0, Role.CURATOR: 1, Role.ADMIN: 2}


def _active(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False) and user.is_active)


def require_role(user: Any, workspace: Workspace | int, action: str) -> str:
    """The user's role in the workspace when it allows ``action`` (a key of ``ROLE_FOR``).
    NotFound when the user has no role there (the workspace is hidden from them, as one that
    does not exist); Forbidden when their role is below the one ``action`` needs."""
    needed = ROLE_FOR[action]
    if not isinstance(workspace, Workspace):
        found = Workspace.objects.filter(pk=workspace).first()
        if found is None:
            raise NotFound(f"no workspace {workspace!r}")
        workspace = found
    role = user_workspace_role(user, workspace)
    if role is None:
        raise NotFound(f"no workspace {workspace.slug!r}")
    if _RANK[role] < _RANK[needed]:
        raise Forbidden(f"{action} needs the {needed} role in this workspace; yours is {role}")
    return role


def user_may(user: Any, workspace: Workspace | int, action: str) -> bool:
    """Whether ``require_role`` lets the user do ``action`` (for what a page offers)."""
    try:
        require_role(user, workspace, action)
    except (NotFound, Forbidden):
        return False
    return True


def user_may_curate(user: Any, workspace_id: int) -> bool:
    """A superuser, or a member of the workspace with a curating role (curator, admin): on the
    dashboard and in the admin alike (a staff user's permissions open the admin's pages, not
    other workspaces)."""
    return user_may(user, workspace_id, "curate")


def workspaces_with_role(user: Any, roles: tuple[str, ...]) -> QuerySet[Workspace] | None:
    """The workspaces where the user has one of ``roles``; None for a superuser (every
    workspace). The admin shows a staff user these only."""
    if admin_everywhere(user):
        return None
    if not _active(user):
        return Workspace.objects.none()
    return Workspace.objects.filter(memberships__user=user, memberships__role__in=roles)


def admin_everywhere(user: Any) -> bool:
    """A superuser administers every workspace, member or not, whatever a membership says."""
    return _active(user) and user.is_superuser


def user_workspace_role(user: Any, workspace: Workspace) -> str | None:
    """The user's role in the workspace: a superuser is an admin of every workspace; a member
    has the membership's role; anyone else has none (the workspace is a 404 to them)."""
    if not _active(user):
        return None
    if admin_everywhere(user):
        return Membership.Role.ADMIN
    membership = Membership.objects.filter(user=user, workspace=workspace).first()
    return membership.role if membership else None


def user_may_manage_members(user: Any, workspace: Workspace) -> bool:
    """Only a workspace's admins (and superusers) add, change and remove its members."""
    return user_may(user, workspace, "manage members")


def other_admins_exist(membership: Membership) -> bool:
    """Whether the membership's workspace has an admin besides it (the last-admin rule)."""
    return (
        Membership.objects.filter(workspace_id=membership.workspace_id, role=Membership.Role.ADMIN)
        .exclude(pk=membership.pk)
        .exists()
    )


def last_admin_message(membership: Membership) -> str:
    return f"{membership.user} is the workspace's last admin; add another first."


def memberships_of(user: Any) -> list[Membership]:
    """The workspaces the user sees, each with the user's role (a superuser's: unsaved admin
    memberships of every workspace)."""
    if admin_everywhere(user):
        return [
            Membership(user=user, workspace=workspace, role=Membership.Role.ADMIN)
            for workspace in Workspace.objects.order_by("slug")
        ]
    return list(Membership.objects.filter(user=user).select_related("workspace"))


def membership_of(user: Any, slug: str) -> Membership:
    """The user's membership of the workspace ``slug`` (a superuser's is an unsaved admin
    one); NotFound when the user does not see it, as for a workspace that does not exist."""
    if admin_everywhere(user):
        workspace = Workspace.objects.filter(slug=slug).first()
        membership = (
            Membership(user=user, workspace=workspace, role=Membership.Role.ADMIN)
            if workspace is not None
            else None
        )
    else:
        membership = (
            Membership.objects.select_related("workspace")
            .filter(user=user, workspace__slug=slug)
            .first()
        )
    if membership is None:
        raise NotFound("No such workspace.")
    return membership


def workspace_members(workspace: Workspace) -> QuerySet[Membership]:
    """The workspace's members with their roles, by username."""
    return (
        Membership.objects.filter(workspace=workspace)
        .select_related("user")
        .order_by("user__username")
    )
