"""Every change to workspaces, agents and memories goes through these functions.

Adapters (REST API, CLI, MCP, dashboard, admin, tasks) parse their input and call one of these;
each validates everything before it writes and writes in one transaction, so bad input changes
nothing.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories import rules
from memories.embeddings import get_embedder
from memories.errors import Errors, NotFound, ValidationFailed
from memories.models import (
    DEFAULT_SIGNIFICANCE,
    STARE_DIMENSIONS,
    Agent,
    Membership,
    Memory,
    ProvenanceEvent,
    Scope,
    Workspace,
)
from memories.presenters import iso as _iso
from memories.selectors import memory_get, visible_scope_ids

Action = ProvenanceEvent.Action
#: How mature the episodes written here are, read by the readiness registry.
READINESS = {"E/anchor": "beta"}

#: The feedback actions, and exactly what each does (also in the README):
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
TOKEN_PREFIX = "mm_"


# --- Workspaces and agents -----------------------------------------------------------------


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def workspace_get_or_create(*, slug: str, name: str = "") -> Workspace:
    workspace, _ = Workspace.objects.get_or_create(slug=slug, defaults={"name": name or slug})
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
    *, workspace_slug: str, name: str, shared_scopes: list[str] | None = None
) -> tuple[Agent, str]:
    """Create an agent (and its workspace if new). Returns the agent and its token.

    The token is returned once; only its sha256 is stored.
    """
    errors = Errors()
    _check(errors, "name", rules.agent_name(name))
    if not workspace_slug.strip():
        errors.add("workspace", "must not be empty.")
    for scope_name in shared_scopes or []:
        _check(errors, "scopes", rules.scope_name(scope_name))
    errors.raise_if_any()
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


def agent_authenticate(token: str) -> Agent | None:
    if not token.startswith(TOKEN_PREFIX):
        return None
    return (
        Agent.objects.select_related("workspace", "private_scope")
        .filter(token_hash=hash_token(token), is_active=True)
        .first()
    )


# --- Memories ------------------------------------------------------------------------------


def _check(errors: Errors, field: str, message: str | None) -> None:
    if message:
        errors.add(field, message)


def _writable_scope(
    agent: Agent, name: str | None, errors: Errors, known: dict[str, Scope | None] | None = None
) -> Scope | None:
    """The scope ``name`` if the agent may write to it (``known``: names already looked up)."""
    if not name or name in {"private", f"private:{agent.name}"}:
        return agent.private_scope
    if known is not None and name in known:
        scope = known[name]
    else:
        scope = agent.scopes.filter(name=name).first()
        if known is not None:
            known[name] = scope
    if scope is None:
        errors.add("scope", f"{name!r} is not a scope this agent belongs to.")
    return scope


@dataclass
class PreparedMemory:
    """A memory's validated values, ready to store (see ``prepare_remember``)."""

    agent: Agent
    text: str
    category: str
    memory_type: str
    significance: float
    scores: dict[str, float]  # the writer's scores, None values left out
    valid_from: datetime | None
    valid_until: datetime | None
    observed_at: datetime | None
    created_at: datetime
    source: str
    scope: Scope
    supersedes: Memory | None
    session: str
    thread: str
    metadata: dict[str, Any]
    idempotency_key: str
    #: Broken rules about the superseded memory's present state (see ``prepare_remember``).
    deferred: dict[str, list[str]] = field(default_factory=dict)

    def raise_deferred(self) -> None:
        if self.deferred:
            raise ValidationFailed(self.deferred)

    @property
    def content_hash(self) -> str:
        return content_hash(scope_id=self.scope.pk, source=self.source, text=self.text)

    def build(
        self, *, episode: Episode, vector: Any, episode_vector: Any, model_name: str
    ) -> Memory:
        memory = Memory(
            workspace_id=self.agent.workspace_id,
            scope=self.scope,
            text=self.text,
            category=self.category,
            memory_type=self.memory_type,
            source=self.source,
            significance=self.significance,
            created_at=self.created_at,
            observed_at=self.observed_at,
            valid_from=self.valid_from,
            valid_until=self.valid_until,
            session=self.session,
            thread=self.thread,
            episode_text=episode.text,
            follows_id=episode.follows_id,
            embedding=vector,
            episode_embedding=episode_vector,
            embedding_model=model_name,
            metadata=self.metadata,
            idempotency_key=self.idempotency_key,
            content_hash=self.content_hash,
        )
        for key, value in self.scores.items():
            setattr(memory, f"{key}_score", value)
            setattr(memory, f"{key}_origin", Memory.ScoreOrigin.WRITER)
        return memory

    def event(self, memory: Memory) -> ProvenanceEvent:
        """The ``remember`` provenance event of the stored memory."""
        return ProvenanceEvent(
            memory=memory,
            workspace_id=memory.workspace_id,
            action=Action.REMEMBER,
            agent=self.agent,
            new_values={
                "significance": memory.significance,
                "category": memory.category,
                "stare_scores": {
                    d: getattr(memory, f"{d}_score")
                    for d in STARE_DIMENSIONS
                    if getattr(memory, f"{d}_score") is not None
                },
                **(
                    {"stare_origins": memory.stare_origins}
                    if any(memory.stare_origins.values())
                    else {}
                ),
            },
        )


def content_hash(*, scope_id: int, source: str, text: str) -> str:
    """What makes two memories the same for a retried write: scope, source and text. (Lengths
    keep the parts apart; the same formula fills existing rows in migration 0010.)"""
    key = f"{scope_id}:{len(source)}:{source}{text}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def prepare_remember(
    *,
    agent: Agent,
    text: str,
    category: str | None = None,
    memory_type: str | None = None,
    significance: float | None = None,
    stare_scores: dict[str, float | None] | None = None,
    valid_from: datetime | None = None,
    valid_until: datetime | None = None,
    observed_at: datetime | None = None,
    created_at: datetime | None = None,
    source: str | None = None,
    scope: str | None = None,
    supersedes: str | None = None,
    session: str | None = None,
    thread: str | None = None,
    metadata: dict[str, Any] | None = None,
    idempotency_key: str | None = None,
    now: datetime | None = None,
    scopes: dict[str, Scope | None] | None = None,
) -> PreparedMemory:
    """Validate the remember arguments (every broken rule at once, as ValidationFailed) and
    resolve their defaults; nothing is written.

    What depends on the superseded memory's present state (still active, still valid) is kept
    in ``PreparedMemory.deferred`` instead: a retried write finds that memory superseded by its
    own first attempt, and must come back as that stored memory, not as an error. Callers raise
    it (``raise_deferred``) for the writes they are about to store. ``scopes`` caches scope
    look-ups across many calls (bulk writes)."""
    now = now or timezone.now()
    errors = Errors()
    text = text.strip() if isinstance(text, str) else ""
    _check(errors, "text", rules.memory_text(text))
    category = category or Memory.Category.FACT
    _check(errors, "category", rules.choice(category, Memory.Category.values))
    memory_type = memory_type or Memory.MemoryType.SEMANTIC
    _check(errors, "memory_type", rules.choice(memory_type, Memory.MemoryType.values))
    for name, value in (
        ("source", source),
        ("session", session),
        ("thread", thread),
        ("idempotency_key", idempotency_key),
    ):
        _check(errors, name, rules.storable_text(value))
    _check(errors, "idempotency_key", rules.idempotency_key(idempotency_key))
    _check(errors, "metadata", rules.storable_json(metadata))
    significance = DEFAULT_SIGNIFICANCE if significance is None else significance
    _check(errors, "significance", rules.unit_interval(significance))
    scores = stare_scores or {}
    for key, value in scores.items():
        if key not in STARE_DIMENSIONS:
            errors.add(f"stare_scores.{key}", "is not a STARE dimension (s, t, a, r, e).")
        else:
            _check(errors, f"stare_scores.{key}", rules.unit_interval(value))
    _check(errors, "created_at", rules.not_in_future(created_at))

    old: Memory | None = None
    target_scope: Scope | None = None
    state = Errors()  # the superseded memory's present state: see ``deferred``
    if supersedes:
        try:
            old = memory_get(agent=agent, mem_id=supersedes)
        except NotFound:
            errors.add("supersedes", f"no memory {supersedes!r} is visible to this agent.")
        else:
            if old.status != Memory.Status.ACTIVE:
                state.add("supersedes", f"memory {supersedes!r} is {old.status}, not active.")
            if valid_from is None:
                valid_from = now
            # The replacement lives where the original did, so everyone who saw the old
            # memory sees the new one (and no one loses a shared memory to a private one).
            target_scope = old.scope
            if (
                scope
                and scope != old.scope.name
                and not (scope == "private" and old.scope_id == agent.private_scope_id)
            ):
                errors.add(
                    "scope",
                    f"must be the superseded memory's scope ({old.scope.name!r}) or omitted.",
                )
    if target_scope is None:
        target_scope = _writable_scope(agent, scope, errors, scopes)
    _check(errors, "valid_until", rules.window(valid_from, valid_until))
    if old is not None and valid_from is not None:
        if old.valid_from is not None and not old.valid_from < valid_from:
            errors.add(
                "valid_from",
                f"must be after the superseded memory's valid_from ({old.valid_from.isoformat()}).",
            )
        if old.valid_until is not None and old.valid_until <= valid_from:
            state.add(
                "supersedes",
                f"memory {supersedes!r} already stopped being valid at "
                f"{old.valid_until.isoformat()}.",
            )
    errors.raise_if_any()
    assert target_scope is not None
    return PreparedMemory(
        agent=agent,
        text=text,
        category=category,
        memory_type=memory_type,
        significance=significance,
        scores={k: v for k, v in scores.items() if v is not None},
        valid_from=valid_from,
        valid_until=valid_until,
        observed_at=observed_at,
        created_at=created_at or now,
        source=agent.name if source is None else source,
        scope=target_scope,
        supersedes=old,
        session=session or "",
        thread=thread or "",
        metadata=metadata or {},
        idempotency_key=idempotency_key or "",
        deferred=state.errors,
    )


def memory_remember(*, agent: Agent, **arguments: Any) -> Memory:
    """Store a memory for ``agent`` (the arguments of ``prepare_remember``); with
    ``supersedes``, close the older memory's window.

    The new memory's ``valid_from`` defaults to now when it supersedes another; the older one's
    ``valid_until`` becomes that instant and its status ``superseded``. With an
    ``idempotency_key`` already used in the workspace, nothing is written and the memory
    stored under it is returned (``memory.existing`` is then true).
    """
    prepared = prepare_remember(agent=agent, **arguments)
    if prepared.idempotency_key:
        existing = _by_idempotency_key(agent, prepared.idempotency_key)
        if existing is not None:
            return existing
    prepared.raise_deferred()
    episode = episode_before(
        workspace_id=agent.workspace_id,
        scope_id=prepared.scope.pk,
        session=prepared.session,
        before=prepared.created_at,
    )
    embedder = get_embedder()
    if episode.text:
        vector, episode_vector = embedder.embed(
            [prepared.text, episode.text + "\n" + prepared.text]
        )
    else:
        vector, episode_vector = embedder.embed([prepared.text])[0], None

    with transaction.atomic():
        if prepared.idempotency_key:
            # Writers with keys serialise per workspace (as bulk writers do), so two requests
            # with one key store one memory; the second gets it back.
            lock_workspace(agent.workspace_id)
            existing = _by_idempotency_key(agent, prepared.idempotency_key)
            if existing is not None:
                return existing
        memory = prepared.build(
            episode=episode,
            vector=vector,
            episode_vector=episode_vector,
            model_name=embedder.model_name,
        )
        memory.save()
        prepared.event(memory).save()
        if prepared.supersedes is not None:
            _supersede(old=prepared.supersedes, new=memory, agent=agent)
    memory.existing = False
    return memory


#: First key of the advisory lock writers of one workspace take to check and insert (the
#: second is the workspace's id).
LOCK_NAMESPACE = 0x6D6D  # "mm"


def lock_workspace(workspace_id: int) -> None:
    """Hold the workspace's write lock until the end of the current transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_NAMESPACE, workspace_id])


def _by_idempotency_key(agent: Agent, key: str) -> Memory | None:
    """The memory stored under ``key`` in the agent's workspace, if the agent may see it."""
    memory = (
        Memory.objects.select_related("scope", "superseded_by")
        .filter(workspace_id=agent.workspace_id, idempotency_key=key)
        .first()
    )
    if memory is None:
        return None
    if memory.scope_id not in visible_scope_ids(agent):
        raise ValidationFailed.single(
            "idempotency_key", "is already used in this workspace by a memory you cannot see."
        )
    memory.existing = True
    return memory


@dataclass(frozen=True)
class Episode:
    text: str  # the texts before the memory, oldest first, one per line
    follows_id: int | None  # the memory just before it


def episode_before(*, workspace_id: int, scope_id: int, session: str, before: datetime) -> Episode:
    """The last ``MM_EPISODE_WINDOW`` memories of ``session`` in the scope written up to
    ``before`` (forgotten ones left out); empty without a session. A new memory's full-text
    index holds their texts too, at a lower weight, and its episode vector is that of their
    texts and its own (see ``Memory.episode_text``)."""
    rows = episode_rows(
        workspace_id=workspace_id, scope_id=scope_id, session=session, before=before
    )
    return Episode("\n".join(text for _, text in rows), rows[-1][0] if rows else None)


def episode_rows(
    *, workspace_id: int, scope_id: int, session: str, before: datetime
) -> list[tuple[int, str]]:
    """The (pk, text) of the memories of ``episode_before``, oldest first."""
    if not session or not settings.MM_EPISODE_WINDOW:
        return []
    rows = list(
        Memory.objects.filter(
            workspace_id=workspace_id, scope_id=scope_id, session=session, created_at__lte=before
        )
        .exclude(status=Memory.Status.FORGOTTEN)
        .order_by("-created_at", "-id")
        .values_list("pk", "text")[: settings.MM_EPISODE_WINDOW]
    )
    return list(reversed(rows))


def _supersede(*, old: Memory, new: Memory, agent: Agent) -> None:
    old = Memory.objects.select_for_update().get(pk=old.pk)
    if old.status != Memory.Status.ACTIVE:  # lost a race with another writer
        raise ValidationFailed.single(
            "supersedes", f"memory {old.mem_id!r} is {old.status}, not active."
        )
    before = {"status": old.status, "valid_until": _iso(old.valid_until), "superseded_by": None}
    old.status = Memory.Status.SUPERSEDED
    old.valid_until = new.valid_from
    old.superseded_by = new
    old.save(update_fields=["status", "valid_until", "superseded_by", "updated_at"])
    reason = f"superseded by {new.mem_id}"
    ProvenanceEvent.objects.create(
        memory=old,
        workspace=old.workspace,
        action=Action.SUPERSEDE,
        agent=agent,
        old_values=before,
        reason=reason,
        new_values={
            "status": old.status,
            "valid_until": _iso(old.valid_until),
            "superseded_by": new.mem_id,
        },
    )
    ProvenanceEvent.objects.create(
        memory=new,
        workspace=new.workspace,
        action=Action.SUPERSEDE,
        agent=agent,
        reason=f"supersedes {old.mem_id}",
        new_values={"supersedes": old.mem_id, "valid_from": _iso(new.valid_from)},
    )


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
    ProvenanceEvent.objects.create(
        memory=memory,
        workspace_id=memory.workspace_id,
        action=action,
        agent=agent,
        user=user,
        old_values={k: v[0] for k, v in changed.items()},
        new_values={k: v[1] for k, v in changed.items()},
        reason=reason.strip(),
    )
    return memory


def _apply_forget(
    memory: Memory, reason: str, *, agent: Agent | None = None, user: Any = None
) -> Memory:
    if memory.status == Memory.Status.FORGOTTEN:
        raise ValidationFailed.single("mem_id", f"memory {memory.mem_id!r} is already forgotten.")
    old_status = memory.status
    memory.status = Memory.Status.FORGOTTEN
    memory.save(update_fields=["status", "updated_at"])
    ProvenanceEvent.objects.create(
        memory=memory,
        workspace_id=memory.workspace_id,
        action=Action.FORGET,
        agent=agent,
        user=user,
        old_values={"status": old_status},
        new_values={"status": memory.status},
        reason=reason,
    )
    return memory


@transaction.atomic
def memory_feedback(*, agent: Agent, mem_id: str, action: str, reason: str) -> Memory:
    """Apply one feedback action (see FEEDBACK_ACTIONS) and record it with old → new values."""
    _feedback_errors(action, reason)
    memory = memory_get(agent=agent, mem_id=mem_id, for_update=True)
    return _apply_feedback(memory, action, reason, agent=agent)


@transaction.atomic
def memory_forget(*, agent: Agent, mem_id: str, reason: str) -> Memory:
    """Soft delete: the memory stays in the database, with its history, but is never returned
    by search or compiled again."""
    reason = _require_reason(reason)
    memory = memory_get(agent=agent, mem_id=mem_id, for_update=True)
    return _apply_forget(memory, reason, agent=agent)


# --- Team members ---------------------------------------------------------------------------


def user_may_curate(user: Any, workspace_id: int) -> bool:
    """A superuser, a staff member allowed to change memories (the admin site), or a member
    of the workspace with the curator or admin role."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser or (user.is_staff and user.has_perm("memories.change_memory")):
        return True
    return Membership.objects.filter(
        user=user,
        workspace_id=workspace_id,
        role__in=[Membership.Role.CURATOR, Membership.Role.ADMIN],
    ).exists()


def user_workspace_role(user: Any, workspace: Workspace) -> str | None:
    """The user's role in the workspace: a superuser is an admin of every workspace; a member
    has the membership's role; anyone else has none (the workspace is a 404 to them)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return None
    if user.is_superuser:
        return Membership.Role.ADMIN
    membership = Membership.objects.filter(user=user, workspace=workspace).first()
    return membership.role if membership else None


@transaction.atomic
def membership_set(*, by: Any, workspace: Workspace, username: str, role: str) -> Membership:
    """Add a user to the workspace with ``role``, or change a member's role. Only the
    workspace's admins (and superusers) may; a member who may not gets NotFound for a
    workspace they do not see, PermissionError otherwise."""
    _lock_members_as_admin(by, workspace)
    from django.contrib.auth import get_user_model

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
    who does not see the workspace, PermissionError for one who only reads or curates it. Then
    the workspace row is locked: membership changes of one workspace go one at a time (the
    last-admin rule reads the other members' rows)."""
    role = user_workspace_role(by, workspace)
    if role is None:
        raise NotFound(f"no workspace {workspace.slug!r}")
    if role != Membership.Role.ADMIN:
        raise PermissionError("only the workspace's admins manage its members")
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()


def _check_not_last_admin(
    errors: Errors, workspace: Workspace, membership: Membership, *, field: str
) -> None:
    others = (
        Membership.objects.select_for_update()
        .filter(workspace=workspace, role=Membership.Role.ADMIN)
        .exclude(pk=membership.pk)
    )
    if not others.exists():
        errors.add(field, f"{membership.user} is the workspace's last admin; add another first.")


def _curated(user: Any, memory_pk: int) -> Memory:
    memory = Memory.objects.select_for_update(of=("self",)).filter(pk=memory_pk).first()
    if memory is None or not user_may_curate(user, memory.workspace_id):
        raise NotFound(f"no memory with id {memory_pk}")
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


__all__ = [
    "FEEDBACK_ACTIONS",
    "agent_authenticate",
    "agent_create",
    "memory_feedback",
    "memory_curate_by_user",
    "memory_feedback_by_user",
    "memory_forget_by_user",
    "user_may_curate",
    "memory_forget",
    "content_hash",
    "memory_remember",
    "prepare_remember",
    "scope_get_or_create",
    "workspace_get_or_create",
]
