"""Every change's provenance."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from memories.models.keys import WorkspaceForeignKey, WorkspaceRow
from memories.models.memory import Memory
from memories.models.relations import Entity
from memories.models.tenancy import (
    Agent,
    Workspace,
)


class ProvenanceEvent(WorkspaceRow):
    """Append-only record of every change to a memory (or to an agent's token), with who,
    what, old → new and why. Written by ``memories.services.provenance`` only."""

    class Action(models.TextChoices):
        REMEMBER = "remember"
        IMPORTANT = "important"
        DEMOTE = "demote"
        PIN = "pin"
        UNPIN = "unpin"
        SUPERSEDE = "supersede"
        MERGE = "merge"
        FORGET = "forget"
        RESTORE = "restore"
        RESCORE = "rescore"
        REVOKE = "revoke"
        LINK = "link"
        UNLINK = "unlink"
        UNMERGE = "unmerge"
        DIVERGE = "diverge"  # found to disagree with another memory
        RESOLVE = "resolve"  # a divergence resolved by a curator
        DISMISS = "dismiss"  # a divergence dismissed by a curator
        ERASE = "erase"  # erased for good: the tombstone (``memory`` is empty then)
        RETYPE = "retype"  # an entity's type corrected by a curator
        SPLIT = "split"  # a curator moved mentions of an entity to its namesake of another type

    #: The memory changed; empty for an event about an agent (``subject_agent``).
    memory = WorkspaceForeignKey(
        Memory,
        on_delete=models.CASCADE,
        related_name="provenance",
        null=True,
        blank=True,
        db_constraint=False,
    )
    #: The agent an event is about (its token revoked), when it is not about a memory.
    subject_agent = models.ForeignKey(
        Agent,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="events",
        db_index=False,
    )
    #: The entity an event is about (merged, unmerged), when it is not about a memory.
    subject_entity = WorkspaceForeignKey(
        Entity,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="events",
        db_index=False,
        db_constraint=False,
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=12, choices=Action.choices)
    agent = models.ForeignKey(
        Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    old_values = models.JSONField(default=dict, blank=True)
    new_values = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["memory", "created_at"], name="provenance_memory_time"),
            models.Index(
                fields=["subject_entity", "created_at"],
                name="provenance_entity_time",
                condition=Q(subject_entity__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        subject = (
            self.memory_id
            or (self.subject_agent_id and f"agent {self.subject_agent_id}")
            or (self.subject_entity_id and f"entity {self.subject_entity_id}")
            or self.new_values.get("erased", "")
        )
        return f"{self.action} {subject} at {self.created_at:%Y-%m-%d %H:%M}"

    @property
    def changes(self) -> list[str]:
        """What the event changed, readably: ``pinned: no → yes``, ``significance: 0.8 → 0.4``,
        or ``category: fact`` for a value it set."""
        found = []
        for key in sorted(set(self.old_values) | set(self.new_values)):
            new = _readable(self.new_values.get(key))
            if key in self.old_values:
                found.append(f"{key}: {_readable(self.old_values[key])} → {new}")
            else:
                found.append(f"{key}: {new}")
        return found

    @property
    def actor(self) -> str:
        if self.agent_id:
            return f"agent:{self.agent.name}"
        if self.user_id:
            return f"user:{self.user.get_username()}"
        return "system"


def _readable(value: object) -> str:
    """A provenance value as a person reads it: yes/no, — for none, nested values inline."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_readable(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return ", ".join(_readable(v) for v in value) or "—"
    if isinstance(value, float):
        return f"{value:.4g}"  # 0.3333333333333333 reads 0.3333
    return str(value)
