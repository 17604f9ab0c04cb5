"""A source's record: how often its memories were found right or wrong."""

from __future__ import annotations

from django.db import models

from memories.models.keys import WorkspaceRow
from memories.models.tenancy import (
    Workspace,
)


class SourceRecord(WorkspaceRow):
    """A source's record in a workspace, as the last refresh of the A scores counted it
    (``memories.services.asymmetry``): how many of its memories were found right (marked
    important, a divergence resolved for them) and wrong (demoted, superseded by another
    source, a divergence resolved against them), and the estimate shrunk toward the workspace's
    prior. A writer's memory reads its record here when it is written; the live record is
    ``memories.selectors.sources``."""

    class Kind(models.TextChoices):
        WRITER = "writer"  # ``Memory.source``
        ENTITY = "entity"  # ``Memory.attributed_to``: its ``entity_id``
        TOPIC = "topic"  # an entity the memories mention, whoever wrote them
        PRIOR = "prior"  # the workspace's prior (key and topic empty)

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    key = models.CharField(max_length=200)
    #: With a writer or an entity: its record on memories that mention this entity (its
    #: ``entity_id``).
    topic = models.CharField(max_length=16, blank=True, default="")
    memories = models.PositiveIntegerField(default=0)
    right = models.FloatField(default=0)
    wrong = models.FloatField(default=0)
    estimate = models.FloatField()
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "kind", "key", "topic"], name="source_record_unique"
            )
        ]

    def __str__(self) -> str:
        topic = f" on {self.topic}" if self.topic else ""
        return f"{self.kind} {self.key}{topic}: {self.estimate:.2f}"
