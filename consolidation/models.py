"""Consolidation's records: each run, and how far each phase has read a workspace."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q

from memories.models import Agent, Entity, Memory, Scope, Workspace, new_public_id
from memories.models.decisions import CuratorDecision
from memories.models.keys import WorkspaceForeignKey, WorkspaceRow


class ConsolidationRun(WorkspaceRow):
    """One run over a workspace: who or what started it, the phases asked, each phase's counts
    and time, and how it ended."""

    class Trigger(models.TextChoices):
        SCHEDULE = "schedule"
        COMMAND = "command"
        API = "api"
        BULK = "bulk"  # after a bulk import

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    run_id = models.CharField(max_length=16, default=new_public_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    phases = ArrayField(models.CharField(max_length=20))
    dry_run = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    #: Per phase: what it did (or would do, in a dry run) and how long it took.
    counts = models.JSONField(default=dict, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    started_by_agent = models.ForeignKey(
        Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    started_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="run_by_workspace")]
        constraints = [
            models.UniqueConstraint(fields=["run_id", "workspace"], name="run_unique_run_id"),
            # One run at a time per workspace, whoever starts it.
            models.UniqueConstraint(
                fields=["workspace"],
                condition=Q(status__in=["queued", "running"]),
                name="run_one_live_per_workspace",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} ({self.status})"


class PhaseWatermark(WorkspaceRow):
    """A phase has read the workspace's memories up to ``through_id``: the next run of it starts
    after that (a run killed before it moved the watermark does that part again, and each
    phase is idempotent)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    phase = models.CharField(max_length=20)
    through_id = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "phase"], name="watermark_one_per_phase"),
            models.CheckConstraint(condition=Q(through_id__gte=0), name="watermark_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.workspace_id}/{self.phase} through {self.through_id}"


class ThreadCorpus(WorkspaceRow):
    """How many memories of a scope the threads phase has read: the N of its words' inverse
    document frequencies."""

    scope = models.OneToOneField(Scope, on_delete=models.CASCADE, related_name="+")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    memories = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.scope_id}: {self.memories} memories"


class WordFrequency(WorkspaceRow):
    """In how many of a scope's memories read by the threads phase a word appears (kept as
    memories are read, so an incremental run never counts the whole scope again)."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+")
    #: The scope's workspace (every key of a workspace's table carries it: docs/SCALING.md).
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    word = models.CharField(max_length=100)
    memories = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "word", "workspace"], name="word_frequency_one_per_word"
            )
        ]

    def __str__(self) -> str:
        return f"{self.scope_id}/{self.word}: {self.memories}"


class CompiledSnapshot(WorkspaceRow):
    """An agent's compiled memory file as consolidation's compile phase left it (default
    options), kept for agents that load it at start (``GET /api/v1/compiled/kept``)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    agent = models.OneToOneField(Agent, on_delete=models.CASCADE, related_name="+")
    markdown = models.TextField()
    #: The memories whose words it may hold (their pks): those it lists and the members of the
    #: open threads it lists. An erasure drops every file that names an erased one. None for a
    #: file kept before they were recorded (consolidation 0006): an erasure drops those all.
    memory_ids = ArrayField(models.BigIntegerField(), null=True, blank=True)
    tokens = models.PositiveIntegerField()
    as_of = models.DateTimeField()
    run = WorkspaceForeignKey(
        ConsolidationRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )

    class Meta:
        indexes = [GinIndex(fields=["memory_ids"], name="snapshot_memory_ids_gin")]

    def __str__(self) -> str:
        return f"{self.agent_id} as of {self.as_of}"


class SupersessionProposal(CuratorDecision, WorkspaceRow):
    """A newer memory of a scope gives another value for a slot an older one fills (one entity,
    one single-valued attribute): consolidation's supersede phase applied it (``applied``, a
    high-confidence rule) or proposes it to a curator, who accepts or rejects it with a reason."""

    class Status(models.TextChoices):
        OPEN = "open"
        APPLIED = "applied"  # by the rule
        ACCEPTED = "accepted"  # by a curator
        REJECTED = "rejected"
        UNDONE = "undone"  # applied or accepted, then undone by a curator

    proposal_id = models.CharField(max_length=16, default=new_public_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    older = WorkspaceForeignKey(
        Memory, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    newer = WorkspaceForeignKey(
        Memory, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    #: The entity both memories mention, when that is how the pair was found; else the pair
    #: shares a name or a session (``subject``).
    entity = WorkspaceForeignKey(
        Entity,
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
        null=True,
        blank=True,
    )
    subject = models.CharField(max_length=200, blank=True, default="", db_default="")
    attribute = models.CharField(max_length=40)
    old_values = ArrayField(models.CharField(max_length=200))
    new_values = ArrayField(models.CharField(max_length=200))
    rule = models.CharField(max_length=200)
    confidence = models.CharField(max_length=10, help_text="high (applied) or low (proposed)")
    #: Why: the rule that found it, the newer's stance, the model's score where it was asked.
    why = models.CharField(max_length=200, blank=True, default="", db_default="")
    score = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["newer", "older", "workspace"], name="proposal_one_per_pair"
            ),
            models.UniqueConstraint(
                fields=["proposal_id", "workspace"], name="proposal_unique_proposal_id"
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "status", "-created_at"], name="proposal_list"),
        ]

    def __str__(self) -> str:
        return f"{self.proposal_id}: {self.older_id} -> {self.newer_id} ({self.status})"
