"""What memories connect to: entities, typed links, and each memory's degree."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Q
from pgvector.django import BitField

from memories.models.base import (
    EMBEDDING_DIMENSIONS,
    new_public_id,
)
from memories.models.keys import WorkspaceForeignKey, WorkspaceOneToOneField, WorkspaceRow
from memories.models.tenancy import (
    Workspace,
)


class Entity(WorkspaceRow):
    """Someone or something memories mention: a person, a customer, a project... of one
    workspace, with its aliases: one entity per normalised name and type (merged ones aside);
    namesakes of different types are different things ("Jordan" the person and the country),
    made only when a writer, the team or a curator says so, never on a recogniser's guess
    (``memories.services.relations.namesakes``). ``declared`` entities form the workspace's
    gazetteer: they are found in every text written by their names and aliases."""

    class Origin(models.TextChoices):
        WRITER = "writer"  # given with a memory (``entities``)
        GAZETTEER = "gazetteer"  # declared by the team (API, dashboard, import)
        EXTRACTION = "extraction"  # found by named-entity recognition
        MEMBER = "member"  # made by a team member on the dashboard

    entity_id = models.CharField(max_length=16, default=new_public_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="entities")
    kind = models.CharField(max_length=80, help_text="Its type: person, customer, custom:<name>…")
    name = models.CharField(max_length=200, help_text="Its canonical name.")
    #: ``memories.relations.normalize(name)``: what resolution compares.
    normalized = models.CharField(max_length=200)
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    #: The normalised name and aliases, for finding an entity by any of them.
    keys = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    #: The words of its keys and each word's first letters
    #: (``memories.relational.gazetteer.tokens``):
    #: the entities a fuzzy match compares a name with share one of them.
    tokens = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    declared = models.BooleanField(
        default=False, help_text="In the workspace's gazetteer: found in texts by its aliases."
    )
    declared_at = models.DateTimeField(
        null=True, blank=True, help_text="When it was first declared (the gazetteer's)."
    )
    origin = models.CharField(max_length=12, choices=Origin.choices)

    class TypedBy(models.TextChoices):
        """Who gave its type, surest first: a surer one replaces a less sure one's, never the
        other way (``TYPE_RANK``)."""

        CURATOR = "curator"  # corrected on the dashboard or the admin
        DECLARED = "declared"  # declared by the team (the gazetteer)
        WRITER = "writer"  # given with a memory
        SPEAKER = "speaker"  # a conversation line's speaker: a person
        EXTRACTION = "extraction"  # the recogniser's labels: the one most mentions agree on

    typed_by = models.CharField(
        max_length=12,
        choices=TypedBy.choices,
        default=TypedBy.EXTRACTION,
        help_text="Who gave its type; the recogniser's type follows most of its mentions.",
    )
    created_by_agent = models.ForeignKey(
        "Agent", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    #: Set by a curator's merge: this entity is that one (undone by clearing it). Always an
    #: entity that is not merged itself.
    merged_into = WorkspaceForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="merged",
        db_constraint=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["workspace", "kind", "name"]
        verbose_name_plural = "entities"
        constraints = [
            # One entity per name and type: a merged one stands for the one it was merged into.
            models.UniqueConstraint(
                fields=["workspace", "normalized", "kind"],
                condition=Q(merged_into__isnull=True),
                name="entity_one_per_name_and_type",
            ),
            models.UniqueConstraint(
                fields=["entity_id", "workspace"], name="entity_unique_entity_id"
            ),
            models.CheckConstraint(
                condition=~Q(merged_into=F("id")), name="entity_not_merged_into_itself"
            ),
        ]
        indexes = [
            GinIndex(fields=["keys"], name="entity_keys_gin"),
            GinIndex(fields=["tokens"], name="entity_tokens_gin"),
            models.Index(fields=["workspace"], name="entity_declared", condition=Q(declared=True)),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


#: How sure each source of a type is: a higher rank's type replaces a lower one's.
TYPE_RANK = {
    Entity.TypedBy.EXTRACTION: 0,
    Entity.TypedBy.SPEAKER: 1,
    Entity.TypedBy.WRITER: 2,
    Entity.TypedBy.DECLARED: 3,
    Entity.TypedBy.CURATOR: 4,
}


class Link(WorkspaceRow):
    """One typed connection from a memory to another memory or to an entity, with who or what
    made it and why. A removed link keeps its row (``removed_at``, and the reason in the
    source memory's history)."""

    class Origin(models.TextChoices):
        WRITER = "writer"  # an agent, with the memory or later
        EXTRACTION = "extraction"  # named-entity recognition
        GAZETTEER = "gazetteer"  # an alias of a declared entity found in the text
        CONSOLIDATION = "consolidation"
        MEMBER = "member"  # a team member
        DIVERGENCE = "divergence"  # divergence detection (a ``contradicts`` link)

    link_id = models.CharField(max_length=16, default=new_public_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    source = WorkspaceForeignKey(
        "Memory",
        on_delete=models.CASCADE,
        related_name="links_out",
        db_index=False,
        db_constraint=False,
    )
    target_memory = WorkspaceForeignKey(
        "Memory",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="links_in",
        db_index=False,
        db_constraint=False,
    )
    target_entity = WorkspaceForeignKey(
        Entity,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="links",
        db_index=False,
        db_constraint=False,
    )
    kind = models.CharField(max_length=80, help_text="Its type: mentions, supports, custom:<name>…")
    weight = models.FloatField(default=1.0)
    origin = models.CharField(max_length=14, choices=Origin.choices)
    agent = models.ForeignKey(
        "Agent", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    #: Why it exists: the rule or model, the matched span, the score.
    evidence = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    removed_at = models.DateTimeField(null=True, blank=True)
    #: A mention's copy of its memory's scope and of the sign bits of its vector, kept by
    #: triggers (migration 0020): an entity's memories are shortlisted for a query by the
    #: bits (Hamming distance) from one index, without reading their vectors. None for a link
    #: to a memory.
    source_scope_id = models.BigIntegerField(null=True, blank=True, editable=False)
    source_code = BitField(length=EMBEDDING_DIMENSIONS, null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["link_id", "workspace"], name="link_unique_link_id"),
            models.CheckConstraint(
                condition=Q(target_memory__isnull=True) ^ Q(target_entity__isnull=True),
                name="link_one_target",
            ),
            models.CheckConstraint(condition=~Q(target_memory=F("source")), name="link_not_self"),
            models.CheckConstraint(
                condition=Q(weight__gte=0) & Q(weight__lte=1), name="link_weight_0_1"
            ),
            # One active link of a type between two ends; these also read a memory's links out.
            models.UniqueConstraint(
                fields=["source", "target_memory", "kind", "workspace"],
                condition=Q(removed_at__isnull=True, target_memory__isnull=False),
                name="link_unique_memory",
            ),
            models.UniqueConstraint(
                fields=["source", "target_entity", "kind", "workspace"],
                condition=Q(removed_at__isnull=True, target_entity__isnull=False),
                name="link_unique_entity",
            ),
        ]
        indexes = [
            # Links read the other way: into a memory, and to an entity (its memories).
            models.Index(
                fields=["target_memory", "source"],
                include=["workspace"],
                name="link_in",
                condition=Q(removed_at__isnull=True, target_memory__isnull=False),
            ),
            models.Index(
                fields=["target_entity", "source"],
                include=["workspace"],
                name="link_entity",
                condition=Q(removed_at__isnull=True, target_entity__isnull=False),
            ),
            models.Index(fields=["source"], name="link_source_all"),
            # An entity's mentions by scope, with what shortlists them for a query.
            models.Index(
                fields=["target_entity", "source_scope_id"],
                include=["source", "source_code", "workspace"],
                name="link_entity_code",
                condition=Q(removed_at__isnull=True, target_entity__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        target = self.target_memory_id or f"entity {self.target_entity_id}"
        return f"{self.source_id} {self.kind} {target}"


class MemoryDegree(WorkspaceRow):
    """How many active link rows touch a memory, either end, the engine's own ``follows`` and
    ``supersedes`` included: kept by triggers on the memory and link tables (migration 0019),
    so every writer, a bulk COPY included, keeps it true. It is at least the connection count
    ``min_r`` reads (which counts distinct other ends a reader sees, active ones only), so a
    search reads it first, cheaply, and counts exactly only what gets through."""

    memory = WorkspaceOneToOneField(
        "Memory",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="degree",
        db_constraint=False,
    )
    #: The memory's workspace, kept by the same triggers (every key of a workspace's table
    #: carries it: docs/SCALING.md).
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    links = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.links}"
