"""Open Threads and their members."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

from memories.models.base import (
    EMBEDDING_DIMENSIONS,
    new_public_id,
)
from memories.models.keys import WorkspaceForeignKey, WorkspaceOneToOneField, WorkspaceRow
from memories.models.memory import Memory
from memories.models.tenancy import (
    Scope,
    Workspace,
)


class Thread(WorkspaceRow):
    """Related memories of one scope across sessions, as consolidation's threads phase grouped
    them (Open Threads, pilot: ``MM_OPEN_THREADS``): a title made from its members' words, when
    it was first and last seen, and ``open`` while a member's cue (a plan, a future date,
    waiting, blocked, a question) has no later answer in it, ``resolved`` otherwise."""

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"

    thread_id = models.CharField(max_length=16, default=new_public_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+")
    #: The writers' own thread name when the members carry one (``Memory.thread``).
    label = models.CharField(max_length=200, blank=True)
    title = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RESOLVED)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    size = models.PositiveIntegerField(default=0)
    sessions = models.PositiveIntegerField(default=0)
    #: The cues that keep it open: [{"mem_id", "cue", "words"}], oldest first.
    cues = models.JSONField(default=list, blank=True)
    #: The mean of its members' vectors (its direction is what a new memory is compared with).
    centroid = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    #: Its members' words with their summed weights (the heaviest ``THREAD_WORDS_KEPT``).
    words = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-last_seen", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["thread_id", "workspace"], name="thread_unique_thread_id"
            )
        ]
        indexes = [
            models.Index(fields=["workspace", "status", "-last_seen"], name="thread_list"),
            models.Index(fields=["scope", "label"], name="thread_label", condition=~Q(label="")),
        ]

    def __str__(self) -> str:
        return f"{self.thread_id}: {self.title} ({self.status})"


class ThreadMember(WorkspaceRow):
    """A memory's place in a thread (one thread per memory), and why it joined."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    thread = WorkspaceForeignKey(
        Thread, on_delete=models.CASCADE, related_name="members", db_constraint=False
    )
    memory = WorkspaceOneToOneField(
        Memory, on_delete=models.CASCADE, related_name="thread_member", db_constraint=False
    )
    #: What joined it: {"by": "label" | "similarity" | "new", "similarity": …, "entities": […]}.
    evidence = models.JSONField(default=dict, blank=True)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["thread", "memory"], name="thread_member_order")]

    def __str__(self) -> str:
        return f"{self.memory_id} in {self.thread_id}"
