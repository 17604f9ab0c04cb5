"""Memories by different writers that disagree, and how far the scan has read."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from memories.models.base import (
    new_public_id,
)
from memories.models.decisions import CuratorDecision
from memories.models.keys import WorkspaceForeignKey, WorkspaceRow
from memories.models.memory import Memory
from memories.models.relations import Link
from memories.models.tenancy import (
    Workspace,
)


class Divergence(CuratorDecision, WorkspaceRow):
    """Two active memories about the same thing, by different writers, that disagree, as
    divergence detection found them (``memories.services.divergence``): its score, the detector
    that decided and its evidence, and the ``contradicts`` link it made. A curator resolves it
    (with a reason) or dismisses it (the link is then removed, its row kept); nothing is
    deleted and no significance changes."""

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"
        DISMISSED = "dismissed"

    divergence_id = models.CharField(max_length=16, default=new_public_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    #: The older of the two (the lower id), then the newer.
    first = WorkspaceForeignKey(
        Memory, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    second = WorkspaceForeignKey(
        Memory, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    link = WorkspaceForeignKey(
        Link,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )
    score = models.FloatField()
    detector = models.CharField(max_length=10, help_text="rules, geometry or model")
    evidence = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    reason = models.TextField(blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    DECIDER, DECIDED_AT = "closed_by", "closed_at"
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["second", "first", "workspace"], name="divergence_one_per_pair"
            ),
            models.UniqueConstraint(
                fields=["divergence_id", "workspace"], name="divergence_unique_divergence_id"
            ),
            models.CheckConstraint(condition=Q(first__lt=F("second")), name="divergence_ordered"),
        ]
        indexes = [
            models.Index(fields=["workspace", "status", "-created_at"], name="divergence_list"),
        ]

    def __str__(self) -> str:
        return f"{self.divergence_id}: {self.first_id} / {self.second_id} ({self.status})"

    @property
    def pair(self) -> tuple[Memory, Memory]:
        return self.first, self.second


class DivergenceScan(WorkspaceRow):
    """How far divergence detection has read a workspace: memories up to ``through_id`` were
    compared with their neighbours, so the next run starts after it."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="+")
    through_id = models.BigIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.workspace_id} through {self.through_id}"
