from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower
from pgvector.django import BitField, HnswIndex, VectorField

#: Dimension of the stored vectors (all-MiniLM-L6-v2; a remote embedder is asked for the same).
EMBEDDING_DIMENSIONS = 384
#: Text search configuration of the full-text index and of queries against it.
TEXT_SEARCH_CONFIG = "english"
#: Full-text weight labels: a memory's own words, and the words of its episode (``episode_text``).
OWN_WEIGHT = "A"
EPISODE_WEIGHT = "B"
DEFAULT_SIGNIFICANCE = 0.80
STARE_DIMENSIONS = ("s", "t", "a", "r", "e")
#: HNSW graph parameters of every vector index (the table's and each large workspace's own).
#: ef_construction 128 rather than pgvector's default 64: a better graph lets searches use a
#: short search list (``MM_HNSW_EF_SEARCH`` 100) and still find what an exact scan finds, for a
#: slower build. Measured in docs/benchmarks-history.md (search latency, "The HNSW graph").
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128


def new_mem_id() -> str:
    return secrets.token_hex(8)


def new_public_id() -> str:
    """The public id of an entity or a link: 16 hex characters, like a ``mem_id``."""
    return secrets.token_hex(8)


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


class Memory(models.Model):
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
        ASYMMETRY = "asymmetry"  # the engine's A score (``memories.asymmetry``)

    class SourceKind(models.TextChoices):
        """How the claim reached the writer; blank when neither the writer nor a cue says."""

        OBSERVED = "observed"  # first-hand
        STATED = "stated"  # someone said it
        TOOL = "tool"  # a tool's output
        INFERRED = "inferred"  # the agent concluded it
        HEARSAY = "hearsay"  # reported second-hand

    mem_id = models.CharField(max_length=16, default=new_mem_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memories")
    scope = models.ForeignKey(Scope, on_delete=models.PROTECT, related_name="memories")
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
    superseded_by = models.ForeignKey(
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
    # (``memories.attribution``; the origin of each value in ``attribution``).
    perspective = models.CharField(
        max_length=80,
        default="self",
        db_default="self",
        help_text="Whom it is for: self, user, team, external or custom:<name>.",
    )
    attributed_to = models.ForeignKey(
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
    follows = models.ForeignKey(
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
            GinIndex(fields=["search_vector"], name="memory_search_vector_gin"),
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


class Entity(models.Model):
    """Someone or something memories mention: a person, a customer, a project... of one
    workspace, with its aliases. ``declared`` entities form the workspace's gazetteer: they are
    found in every text written by their names and aliases."""

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
    #: The words of its keys and each word's first letters (``memories.gazetteer.tokens``):
    #: the entities a fuzzy match compares a name with share one of them.
    tokens = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    declared = models.BooleanField(
        default=False, help_text="In the workspace's gazetteer: found in texts by its aliases."
    )
    declared_at = models.DateTimeField(
        null=True, blank=True, help_text="When it was first declared (the gazetteer's)."
    )
    origin = models.CharField(max_length=12, choices=Origin.choices)
    created_by_agent = models.ForeignKey(
        "Agent", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    #: Set by a curator's merge: this entity is that one (undone by clearing it). Always an
    #: entity that is not merged itself.
    merged_into = models.ForeignKey(
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
            models.UniqueConstraint(
                fields=["workspace", "kind", "normalized"], name="entity_unique_name"
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


class Link(models.Model):
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
    source = models.ForeignKey(
        Memory,
        on_delete=models.CASCADE,
        related_name="links_out",
        db_index=False,
        db_constraint=False,
    )
    target_memory = models.ForeignKey(
        Memory,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="links_in",
        db_index=False,
        db_constraint=False,
    )
    target_entity = models.ForeignKey(
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


class MemoryDegree(models.Model):
    """How many active link rows touch a memory, either end, the engine's own ``follows`` and
    ``supersedes`` included: kept by triggers on the memory and link tables (migration 0019),
    so every writer, a bulk COPY included, keeps it true. It is at least the connection count
    ``min_r`` reads (which counts distinct other ends a reader sees, active ones only), so a
    search reads it first, cheaply, and counts exactly only what gets through."""

    memory = models.OneToOneField(
        Memory,
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


class ProvenanceEvent(models.Model):
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

    #: The memory changed; empty for an event about an agent (``subject_agent``).
    memory = models.ForeignKey(
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
    subject_entity = models.ForeignKey(
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


class Divergence(models.Model):
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
    first = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    second = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    link = models.ForeignKey(
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


class DivergenceScan(models.Model):
    """How far divergence detection has read a workspace: memories up to ``through_id`` were
    compared with their neighbours, so the next run starts after it."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="+")
    through_id = models.BigIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.workspace_id} through {self.through_id}"


class Thread(models.Model):
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


class ThreadMember(models.Model):
    """A memory's place in a thread (one thread per memory), and why it joined."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    thread = models.ForeignKey(
        Thread, on_delete=models.CASCADE, related_name="members", db_constraint=False
    )
    memory = models.OneToOneField(
        Memory, on_delete=models.CASCADE, related_name="thread_member", db_constraint=False
    )
    #: What joined it: {"by": "label" | "similarity" | "new", "similarity": …, "entities": […]}.
    evidence = models.JSONField(default=dict, blank=True)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["thread", "memory"], name="thread_member_order")]

    def __str__(self) -> str:
        return f"{self.memory_id} in {self.thread_id}"


class SourceRecord(models.Model):
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


class LoginThrottle(models.Model):
    """Failed logins counted by user name and by address (``key``), so that guessing a
    password is slowed for every process of the engine alike (see ``memories.throttle``)."""

    key = models.CharField(max_length=200, unique=True)
    failures = models.PositiveIntegerField(default=0)
    locked_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.failures}"
