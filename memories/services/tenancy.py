"""Workspaces, scopes and agents: who writes and reads, and with which token."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.db import transaction

from memories import rules
from memories.errors import Errors, NotFound, ValidationFailed
from memories.models import Agent, Scope, Workspace
from memories.selectors.permissions import require_role, user_may
from memories.services.provenance import Action, record

TOKEN_PREFIX = "mm_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def workspace_get_or_create(*, slug: str, name: str = "") -> Workspace:
    """The workspace ``slug``, made if new. Two workspaces never differ only by case (a
    unique index on the lower-cased slug holds that for concurrent writers too): a slug that
    another's equals but for case is refused, naming the other."""
    workspace = Workspace.objects.filter(slug__iexact=slug).first()
    if workspace is None:
        workspace, _ = Workspace.objects.get_or_create(slug=slug, defaults={"name": name or slug})
    if workspace.slug != slug:
        raise ValidationFailed.single(
            "workspace",
            f"differs only by case from the workspace {workspace.slug!r}: use that name.",
        )
    return workspace


@transaction.atomic
def scope_get_or_create(*, workspace: Workspace, name: str) -> Scope:
    if name.startswith("private:"):
        raise ValidationFailed.single("scope", "names starting with 'private:' are reserved.")
    scope, _ = Scope.objects.get_or_create(
        workspace=workspace, name=name, defaults={"kind": Scope.Kind.SHARED}
    )
    return scope


@transaction.atomic
def agent_create(
    *, workspace_slug: str, name: str, shared_scopes: list[str] | None = None, by: Any = None
) -> tuple[Agent, str]:
    """Create an agent (and, for an operator, its workspace if new). Returns the agent and its
    token. ``by``, a team member, needs the role to manage the workspace's agents
    (``require_role``) and the workspace must exist; without ``by`` the caller is the operator
    (``createagent``, ``import``).

    The token is returned once; only its sha256 is stored.
    """
    errors = Errors()
    errors.check("name", rules.agent_name(name))
    errors.check("workspace", rules.workspace_slug(workspace_slug))
    for scope_name in shared_scopes or []:
        errors.check("scopes", rules.scope_name(scope_name))
    errors.raise_if_any()
    if by is not None:
        existing = Workspace.objects.filter(slug=workspace_slug).first()
        if existing is None:
            raise NotFound(f"no workspace {workspace_slug!r}")
        require_role(by, existing, "manage agents")
    workspace = workspace_get_or_create(slug=workspace_slug)
    if Agent.objects.filter(workspace=workspace, name=name).exists():
        raise ValidationFailed.single(
            "name", f"an agent named {name!r} already exists in workspace {workspace.slug!r}."
        )
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    private = Scope.objects.create(
        workspace=workspace, name=f"private:{name}", kind=Scope.Kind.PRIVATE
    )
    agent = Agent.objects.create(
        workspace=workspace,
        name=name,
        token_prefix=token[:10],
        token_hash=hash_token(token),
        private_scope=private,
    )
    for scope_name in shared_scopes or []:
        agent.scopes.add(scope_get_or_create(workspace=workspace, name=scope_name))
    return agent, token


@transaction.atomic
def agent_new_token(*, workspace_slug: str, name: str, reason: str = "") -> tuple[Agent, str]:
    """Give an agent a new token (its old one stops working at once) and let it act; an
    operator's (``createagent --new-token``): a lost token, or an agent an import made.
    Recorded in the workspace's provenance, the new token's prefix with it."""
    agent = (
        Agent.objects.select_for_update()
        .filter(workspace__slug=workspace_slug, name=name)
        .select_related("workspace")
        .first()
    )
    if agent is None:
        raise NotFound(f"no agent {name!r} in workspace {workspace_slug!r}")
    return agent, _new_token(
        agent, Action.REVOKE, user=None, reason=reason or f"new token for {agent.name}"
    )


def _new_token(agent: Agent, action: str, *, user: Any, reason: str) -> str:
    """A new token for ``agent`` (the old one never works again), the agent active, the change
    recorded with the new token's prefix; the token, to be shown once."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    old = {"token_prefix": agent.token_prefix, "is_active": agent.is_active}
    agent.token_prefix, agent.token_hash, agent.is_active = token[:10], hash_token(token), True
    agent.save(update_fields=["token_prefix", "token_hash", "is_active"])
    new = {"token_prefix": agent.token_prefix, "is_active": True}
    record(None, action, subject_agent=agent, user=user, old=old, new=new, reason=reason)
    return token


def agent_authenticate(token: str) -> Agent | None:
    if not token.startswith(TOKEN_PREFIX):
        return None
    return (
        Agent.objects.select_related("workspace", "private_scope")
        .filter(token_hash=hash_token(token), is_active=True)
        .first()
    )


def workspace_of_token_hash(token_hash: str) -> int | None:
    """The workspace of the active agent whose token has this sha256 (fair use's tenant)."""
    return (
        Agent.objects.filter(token_hash=token_hash, is_active=True)
        .values_list("workspace_id", flat=True)
        .first()
    )


def _agent_to_change(user: Any, workspace: Workspace, agent_id: int) -> Agent:
    """The agent, locked, if ``user`` may curate its workspace; NotFound otherwise (another
    workspace's agent is never told apart from one that does not exist)."""
    agent = (
        Agent.objects.select_for_update()
        .filter(workspace=workspace, pk=agent_id)
        .select_related("workspace")
        .first()
    )
    if agent is None or not user_may(user, workspace, "read"):
        raise NotFound(f"no agent {agent_id} in workspace {workspace.slug!r}")
    require_role(user, workspace, "manage agents")
    return agent


def _set_active(agent: Agent, active: bool, *, user: Any, action: str, reason: str) -> Agent:
    agent.is_active = active
    agent.save(update_fields=["is_active"])
    record(
        None,
        action,
        subject_agent=agent,
        user=user,
        old={"is_active": not active},
        new={"is_active": active},
        reason=reason,
    )
    return agent


@transaction.atomic
def agent_revoke(*, user: Any, workspace: Workspace, agent_id: int, reason: str = "") -> Agent:
    """Revoke an agent's token: it stops working at once (every request checks it). A team
    member who may curate the workspace may; anyone else, and an agent of another workspace,
    gets NotFound. Recorded in the workspace's provenance; revoking a revoked token is a
    ValidationFailed and records nothing."""
    agent = _agent_to_change(user, workspace, agent_id)
    if not agent.is_active:
        raise ValidationFailed.single("agent", f"the token of {agent.name} is already revoked.")
    reason = reason.strip() or f"token of {agent.name} revoked"
    return _set_active(agent, False, user=user, action=Action.REVOKE, reason=reason)


@transaction.atomic
def agent_reactivate(
    *, user: Any, workspace: Workspace, agent_id: int, reason: str = ""
) -> tuple[Agent, str]:
    """Let a revoked agent act again, with a new token (returned, to be shown once): a revoked
    token never works again, whoever may hold it. ``agent_revoke`` decides who may; recorded
    the same way, the new token's prefix with it."""
    agent = _agent_to_change(user, workspace, agent_id)
    if agent.is_active:
        raise ValidationFailed.single("agent", f"the token of {agent.name} is not revoked.")
    reason = reason.strip() or f"{agent.name} reactivated with a new token"
    return agent, _new_token(agent, Action.RESTORE, user=user, reason=reason)
