"""Team members of a workspace: who reads, curates and administers it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from memories.errors import Errors, NotFound
from memories.models import Membership, Workspace
from memories.selectors.permissions import (
    last_admin_message,
    other_admins_exist,
    require_role,
)


@transaction.atomic
def membership_set(*, by: Any, workspace: Workspace, username: str, role: str) -> Membership:
    """Add a user to the workspace with ``role``, or change a member's role. Only the
    workspace's admins (and superusers) may; a member who may not gets NotFound for a
    workspace they do not see, Forbidden otherwise."""
    _lock_members_as_admin(by, workspace)
    errors = Errors()
    username = (username or "").strip()
    user = None
    if not username:
        errors.add("username", "is required.")
    else:
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            errors.add("username", f"no active user {username!r}.")
    if role not in Membership.Role.values:
        errors.add("role", f"must be one of {', '.join(Membership.Role.values)} (got {role!r}).")
    existing = (
        Membership.objects.select_for_update().filter(user=user, workspace=workspace).first()
        if user is not None
        else None
    )
    if existing is not None and existing.role == Membership.Role.ADMIN and role != existing.role:
        _check_not_last_admin(errors, workspace, existing, field="role")
    errors.raise_if_any()
    if existing is not None:
        existing.role = role
        existing.save(update_fields=["role"])
        return existing
    return Membership.objects.create(user=user, workspace=workspace, role=role)


@transaction.atomic
def membership_remove(*, by: Any, workspace: Workspace, membership_id: int) -> Membership:
    """Remove a member (workspace admins and superusers only; never the last admin)."""
    _lock_members_as_admin(by, workspace)
    membership = (
        Membership.objects.select_for_update()
        .filter(workspace=workspace, pk=membership_id)
        .select_related("user")
        .first()
    )
    if membership is None:
        raise NotFound(f"no member {membership_id} in workspace {workspace.slug!r}")
    errors = Errors()
    if membership.role == Membership.Role.ADMIN:
        _check_not_last_admin(errors, workspace, membership, field="member")
    errors.raise_if_any()
    membership.delete()
    return membership


def _lock_members_as_admin(by: Any, workspace: Workspace) -> None:
    """Only the workspace's admins (and superusers) manage its members: NotFound for a user
    who does not see the workspace, Forbidden for one who only reads or curates it. Then
    the workspace row is locked: membership changes of one workspace go one at a time (the
    last-admin rule reads the other members' rows)."""
    require_role(by, workspace, "manage members")
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()


def _check_not_last_admin(
    errors: Errors, workspace: Workspace, membership: Membership, *, field: str
) -> None:
    # The other admins' rows are locked too: two changes cannot each leave the other's last.
    list(
        Membership.objects.select_for_update()
        .filter(workspace=workspace, role=Membership.Role.ADMIN)
        .exclude(pk=membership.pk)
    )
    if not other_admins_exist(membership):
        errors.add(field, last_admin_message(membership))
