"""A memory."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Q
from pgvector.django import HnswIndex, VectorField

from memories.models.base import (
    DEFAULT_SIGNIFICANCE,
    EMBEDDING_DIMENSIONS,
    EPISODE_WEIGHT,
    HNSW_EF_CONSTRUCTION,
    HNSW_M,
    OWN_WEIGHT,
    STARE_DIMENSIONS,
    TEXT_SEARCH_CONFIG,
    new_mem_id,
)
from memories.models.keys import WorkspaceForeignKey, WorkspaceRow
from memories.models.relations import Entity
from memories.models.tenancy import (
    Scope,
    Workspace,
)


class Memory(WorkspaceRow):
    #: What a page that lists memories never reads (``.defer(*Memory.UNREAD_ON_PAGES)``): the
    #: vectors, each hundreds of numbers decoded per row, and the full-text document.
    UNREAD_ON_PAGES = ("embedding", "episode_embedding", "search_vector")

    class Category(models.TextChoices):
        FACT = "fact"
        DECISION = "decision"
        PREFERENCE = "preference"
        COMMITMENT = "commitment"
        EVENT = "event"
        PROCEDURE = "procedure"
        OBSERVATION = "observation"

    class MemoryType(models.TextChoices):
        SEMANTIC = "semantic"
        EPISODIC = "episodic"
        PROCEDURAL = "procedural"
        WORKING = "working"

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUPERSEDED = "superseded"
        MERGED = "merged"
        FORGOTTEN = "forgotten"

    class ScoreOrigin(models.TextChoices):
        WRITER = "writer"
        SCORER = "scorer"
        EXTRACTION = "extraction"
        ASYMMETRY = "asymmetry"  # the engine's A score (``memories.asymmetry.score``)

    class SourceKind(models.TextChoices):
        """How the claim reached the writer; blank when neither the writer nor a cue says."""

        OBSERVED = "observed"  # first-hand
        STATED = "stated"  # someone said it
        TOOL = "tool"  # a tool's output
        INFERRED = "inferred"  # the agent concluded it
        HEARSAY = "hearsay"  # reported second-hand

    mem_id = models.CharField(max_length=16, default=new_mem_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memories")
    #: No index of its own: ``memory_content_hash`` (scope, content_hash) serves every lookup by
    #: scope. A scope's own index misled the planner: for a scope written since the table's
    #: last ANALYZE it expects one row, and read every memory of the scope to find a key
    #: (migration 0035).
    scope = models.ForeignKey(
        Scope, on_delete=models.PROTECT, related_name="memories", db_index=False
    )
    text = models.TextField()
    category = models.CharField(max_length=20, choices=Category.choices, default=Category.FACT)
    memory_type = models.CharField(
        max_length=20, choices=MemoryType.choices, default=MemoryType.SEMANTIC
    )
    source = models.CharField(
        max_length=200,
        blank=True,
        help_text="Who wrote it: an agent's name unless the writer says.",
    )
    significance = models.FloatField(default=DEFAULT_SIGNIFICANCE)
    pinned = models.BooleanField(default=False)

    created_at = models.DateTimeField(help_text="When the memory was written; age counts from it.")
    observed_at = models.DateTimeField(
        null=True, blank=True, help_text="When what it records happened."
    )
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    superseded_by = WorkspaceForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="supersedes",
        db_constraint=False,
    )

    s_score = models.FloatField(null=True, blank=True)
    t_score = models.FloatField(null=True, blank=True)
    a_score = models.FloatField(null=True, blank=True)
    r_score = models.FloatField(null=True, blank=True)
    e_score = models.FloatField(null=True, blank=True)
    s_origin = models.CharField(max_length=12, choices=ScoreOrigin.choices, blank=True)
    t_origin = models.CharField(max_length=12, choices=ScoreOrigin.choices, blank=True)
    a_origin = models.CharField(max_length=12, choices=ScoreOrigin.choices, blank=True)
    r_origin = models.CharField(max_length=12, choices=ScoreOrigin.choices, blank=True)
    e_origin = models.CharField(max_length=12, choices=ScoreOrigin.choices, blank=True)

    session = models.CharField(max_length=200, blank=True)
    thread = models.CharField(max_length=200, blank=True)

    # Asymmetry: whose perspective it serves and where its claim came from
    # (``memories.asymmetry.cues``; the origin of each value in ``attribution``).
    perspective = models.CharField(
        max_length=80,
        default="self",
        db_default="self",
        help_text="Whom it is for: self, user, team, external or custom:<name>.",
    )
    attributed_to = WorkspaceForeignKey(
        "Entity",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="attributed",
        db_index=False,  # memory_attributed_to, partial: most memories name no one
        help_text="Who made the claim.",
        db_constraint=False,
    )
    source_kind = models.CharField(
        max_length=10, choices=SourceKind.choices, blank=True, default="", db_default=""
    )
    #: How much it matters to the writing agent itself, and to others (``significance`` stays
    #: the ranking signal; see docs/stare.md, Asymmetry).
    sig_self = models.FloatField(null=True, blank=True)
    sig_external = models.FloatField(null=True, blank=True)
    #: Where ``perspective``, ``attributed_to`` and ``source_kind`` came from: the writer, the
    #: scope (perspective's default) or a cue in the text (with the words that set it).
    attribution = models.JSONField(default=dict, blank=True, db_default={})

    #: The texts of the memories just before this one in its session and scope (at most
    #: ``MM_EPISODE_WINDOW``, oldest first, one per line), as they stood when it was written.
    #: Full-text search indexes them with this memory, at a lower weight (``EPISODE_WEIGHT``):
    #: a reply is found by the words of what it replies to.
    episode_text = models.TextField(blank=True, default="", db_default="")
    #: The memory just before this one in its session and scope, when it was written.
    follows = WorkspaceForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    #: The vector of the episode and the memory's own text together (``episode_text`` then
    #: ``text``); null when the episode is empty (then ``embedding`` stands for both).
    episode_embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config=TEXT_SEARCH_CONFIG, weight=OWN_WEIGHT)
        + SearchVector("episode_text", config=TEXT_SEARCH_CONFIG, weight=EPISODE_WEIGHT),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    metadata = models.JSONField(default=dict, blank=True)
    #: The writer's key for a retried write: one memory per key in a scope.
    idempotency_key = models.CharField(max_length=200, blank=True, default="")
    #: Which extraction of entities has run on it (``memories.services.relations``); null: none
    #: yet (written before it existed, or with ``MM_ENTITY_EXTRACTION`` off): ``meaning-memory
    #: link`` does it.
    relations_version = models.PositiveSmallIntegerField(null=True, blank=True)
    #: sha256 of scope, source and text (``services.content_hash``): a bulk write stores a
    #: memory whose scope, source and text are already stored once only.
    content_hash = models.CharField(max_length=64, blank=True, default="")
    #: The memory's first ``mem_id`` when an import (``meaning-memory import``) brought it
    #: here: what makes importing the same file twice store nothing new.
    imported_from = models.CharField(max_length=16, blank=True, default="", db_default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "memories"
        indexes = [
            models.Index(fields=["workspace", "status", "created_at"], name="memory_ws_status"),
            # A new memory's episode: the last memories of its session in its scope.
            models.Index(
                fields=["scope", "session", "created_at"],
                name="memory_episode",
                condition=~Q(session=""),
            ),
            # The compiled memory file reads every active memory of a workspace's scopes:
            # an index-only scan of this instead of the wide rows (see memories.compile).
            models.Index(
                fields=["workspace", "scope"],
                include=[
                    "id",
                    "significance",
                    "pinned",
                    "created_at",
                    "category",
                    "valid_from",
                    "valid_until",
                ],
                name="memory_compile",
                condition=Q(status="active"),
            ),
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=HNSW_M,
                ef_construction=HNSW_EF_CONSTRUCTION,
                opclasses=["vector_cosine_ops"],
            ),
            # Words and metadata in one index: full-text search, metadata filters
            # (``memories.metadata_filter``: containment and path equality) and the words of a
            # search with a metadata filter, whose matches the index narrows to the memories
            # the filter keeps (``memories.search.metadata``).
            GinIndex(
                fields=["search_vector", "metadata"],
                name="memory_words_metadata",
                opclasses=["tsvector_ops", "jsonb_path_ops"],
            ),
            models.Index(fields=["scope", "content_hash"], name="memory_content_hash"),
            models.Index(
                fields=["attributed_to"],
                name="memory_attributed_to",
                condition=Q(attributed_to__isnull=False),
            ),
            models.Index(
                fields=["workspace", "imported_from"],
                name="memory_imported_from",
                condition=~Q(imported_from=""),
            ),
            # The memories whose entities were not extracted yet (``meaning-memory link``).
            models.Index(
                fields=["workspace", "id"],
                name="memory_unlinked",
                condition=Q(relations_version__isnull=True),
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["mem_id", "workspace"], name="memory_unique_mem_id"),
            models.UniqueConstraint(
                fields=["scope", "idempotency_key", "workspace"],
                condition=~Q(idempotency_key=""),
                name="memory_unique_scope_idempotency_key",
            ),
            models.CheckConstraint(
                condition=Q(significance__gte=0) & Q(significance__lte=1),
                name="memory_significance_0_1",
            ),
            *[
                models.CheckConstraint(
                    condition=Q(**{f"{d}_score__isnull": True})
                    | (Q(**{f"{d}_score__gte": 0}) & Q(**{f"{d}_score__lte": 1})),
                    name=f"memory_{d}_score_0_1",
                )
                for d in STARE_DIMENSIONS
            ],
            models.CheckConstraint(
                condition=Q(valid_from__isnull=True)
                | Q(valid_until__isnull=True)
                | Q(valid_from__lt=F("valid_until")),
                name="memory_valid_from_before_until",
            ),
            *[
                models.CheckConstraint(
                    condition=Q(**{f"{name}__isnull": True})
                    | (Q(**{f"{name}__gte": 0}) & Q(**{f"{name}__lte": 1})),
                    name=f"memory_{name}_0_1",
                )
                for name in ("sig_self", "sig_external")
            ],
        ]

    def __str__(self) -> str:
        return f"{self.mem_id}: {self.text[:60]}"

    @property
    def stare_scores(self) -> dict[str, float | None]:
        return {d: getattr(self, f"{d}_score") for d in STARE_DIMENSIONS}

    @property
    def stare_origins(self) -> dict[str, str | None]:
        return {d: getattr(self, f"{d}_origin") or None for d in STARE_DIMENSIONS}

    @property
    def claimant(self) -> Entity | None:
        """The entity that made its claim (the one it was merged into, if merged)."""
        if self.attributed_to_id is None:
            return None
        entity = self.attributed_to
        return entity.merged_into if entity.merged_into_id else entity


#: A memory's own values, each kept as it is (no relation, vector, time or STARE score): the one
#: list an export writes and an import reads (``memories.exchange``), the admin shows and the
#: API presents (``memories.presenters`` keeps some back). A field added here travels with them.
PLAIN_FIELDS = (
    "text",
    "category",
    "memory_type",
    "source",
    "significance",
    "pinned",
    "status",
    "session",
    "thread",
    "perspective",
    "source_kind",
    "sig_self",
    "sig_external",
    "attribution",
    "episode_text",
    "embedding_model",
    "metadata",
    "idempotency_key",
    "relations_version",
)
#: Its times (ISO 8601 text in an export).
TIME_FIELDS = ("created_at", "observed_at", "valid_from", "valid_until")
