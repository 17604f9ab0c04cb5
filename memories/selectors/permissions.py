"""Who may do what: a team member's role in a workspace, and "may curate"."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from memories.errors import NotFound
from memories.models import CURATING_ROLES, Membership, Workspace


def _active(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False) and user.is_active)


def user_may_curate(user: Any, workspace_id: int) -> bool:
    """A superuser, or a member of the workspace with a curating role (curator, admin): on the
    dashboard and in the admin alike (a staff user's permissions open the admin's pages, not
    other workspaces)."""
    if not _active(user):
        return False
    if admin_everywhere(user):
        return True
    return Membership.objects.filter(
        user=user, workspace_id=workspace_id, role__in=CURATING_ROLES
    ).exists()


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
    return user_workspace_role(user, workspace) == Membership.Role.ADMIN


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
