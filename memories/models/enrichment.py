"""What a write leaves to do after it is acknowledged: one row a memory whose understanding
(entities, links, its claimant, its A score) is still to come (``memories.services.enrichment``).

The row is inserted in the write's own transaction, so a memory is never stored without it, and
deleted in the transaction that enriches the memory, so a memory is never enriched twice; a
worker or a web process killed between the two leaves the row for the next enricher."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from memories.models.keys import WorkspaceOneToOneField, WorkspaceRow
from memories.models.memory import Memory
from memories.models.tenancy import Agent, Workspace


class MemoryEnrichment(WorkspaceRow):
    """A memory's enrichment still to do (``pending``), or given up on after
    ``MM_ENRICH_ATTEMPTS`` tries (``failed``, until a curator retries it)."""

    class State(models.TextChoices):
        PENDING = "pending"
        FAILED = "failed"

    memory = WorkspaceOneToOneField(
        Memory,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="enrichment",
        db_constraint=False,
    )
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    #: The writer: the entities are resolved as it sees them, its given ones made by it.
    agent = models.ForeignKey(
        Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    #: What the writer gave that only the enrichment stores: ``entities`` ([name, type]),
    #: ``links`` ([memory id, type, weight]) and the claimant's ``name`` and ``origin``.
    given = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    #: The write's instant on the database's clock (the enricher's lag is measured on it).
    created_at = models.DateTimeField(db_default=models.functions.Now())
    #: Not before then (a failed try waits before the next).
    next_at = models.DateTimeField(db_default=models.functions.Now())

    class Meta:
        indexes = [
            models.Index(fields=["next_at"], name="enrichment_due", condition=Q(state="pending")),
            models.Index(fields=["workspace", "state"], name="enrichment_workspace"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.state}"
