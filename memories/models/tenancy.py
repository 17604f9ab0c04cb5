"""Who is there: workspaces, their scopes, members and agents, and the login brake."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower


class Workspace(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            # Two workspaces never differ only by case (``workspace_get_or_create``).
            models.UniqueConstraint(Lower("slug"), name="workspace_slug_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.slug


class Scope(models.Model):
    """Who can read a memory: an agent's ``private:<agent>`` scope or a named shared scope."""

    class Kind(models.TextChoices):
        PRIVATE = "private", "Private to one agent"
        SHARED = "shared", "Shared"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="scopes")
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.SHARED)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="scope_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.workspace.slug}/{self.name}"


class Membership(models.Model):
    """A team member's role in a workspace: viewers read, curators also give feedback and
    manage agents. (Members are managed in the Django admin.)"""

    class Role(models.TextChoices):
        VIEWER = "viewer"
        CURATOR = "curator"
        ADMIN = "admin"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "user"]
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    @property
    def can_curate(self) -> bool:
        return self.role in CURATING_ROLES


#: The roles that may curate a workspace's memories and manage its agents (the one statement of
#: "may curate": ``Membership.can_curate`` and ``selectors.permissions.user_may_curate``).
CURATING_ROLES = (Membership.Role.CURATOR, Membership.Role.ADMIN)


class Agent(models.Model):
    """A writer and reader of memories, authenticated by an API token stored as a hash."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=120)
    token_prefix = models.CharField(max_length=16, help_text="First characters of the token.")
    token_hash = models.CharField(max_length=64, unique=True, help_text="sha256 of the token.")
    private_scope = models.OneToOneField(
        Scope, on_delete=models.PROTECT, related_name="owner", null=True, blank=True
    )
    scopes = models.ManyToManyField(
        Scope,
        related_name="members",
        blank=True,
        help_text="Shared scopes this agent reads and may write to.",
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    wrote_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the agent's latest write committed (kept with a read replica: "
        "memories.reading).",
    )

    class Meta:
        ordering = ["workspace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="agent_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.workspace.slug}/{self.name}"

    # DRF treats the authenticated principal as ``request.user``.
    @property
    def is_authenticated(self) -> bool:
        return True


class LoginThrottle(models.Model):
    """Failed logins counted by user name and by address (``key``), so that guessing a
    password is slowed for every process of the engine alike (see ``memories.throttle``)."""

    key = models.CharField(max_length=200, unique=True)
    failures = models.PositiveIntegerField(default=0)
    locked_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.failures}"
