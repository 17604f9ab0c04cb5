"""The shapes of the answers about memories: a memory (alone, with its entities, links and
history, in a page, as a search hit), a bulk write, an erasure, a stored link, the compiled
file. Each mirrors one presenter of ``memories.presenters`` (named in its docstring), field for
field: its type, whether it may be null, the values it takes.

These serializers never serialise anything: the presenters build the answers, and these only
declare them in the OpenAPI schema, which the clients are generated from. The API's property
test (``memories/tests/test_api_properties.py``) checks every answer it gets against them, every
field there and no other. A shape's docstring opens with what a client reads in the schema (its
first paragraph); the presenter it mirrors follows."""

from __future__ import annotations

from rest_framework import serializers

from memories.compile import DISPLAY_MODES
from memories.kinds import LINK_DIRECTIONS, SOURCE_KINDS
from memories.models import STARE_DIMENSIONS, Entity, Link, Memory, ProvenanceEvent
from memories.search.recipe import SOURCES

#: A link's origin as a reader is shown it: as stored, or ``engine`` for the engine's own links
#: (what a memory supersedes and follows; ``selectors.relations.links``, ``traversal``).
LINK_ORIGINS = (*Link.Origin.values, "engine")
#: A search hit's Eligible value (``memories.eligibility``): in the compiled file, in it and
#: protected, cut by the budget, or not active or not valid now.
ELIGIBLE = ("yes", "protected", "cut", "-")
#: What a bulk write did with each item (``services.bulk.BulkResult.status``).
BULK_STATUSES = ("stored", "existing")


class Answer(serializers.Serializer):
    """An answer's shape, for the schema alone: its component is named after the class, less
    ``Answer``, and described by its docstring's first paragraph
    (``memories.api.schema.AnswerName``)."""


def keyword_field(
    answer: type[Answer], name: str, field: serializers.Field, *, before: str
) -> None:
    """Give ``answer`` a field whose name is a Python keyword (``from``), before ``before``."""
    fields = list(answer._declared_fields.items())
    at = [existing for existing, _ in fields].index(before)
    answer._declared_fields = dict([*fields[:at], (name, field), *fields[at:]])


def _per_dimension(name: str, doc: str, field: type[serializers.Field], **options) -> type:
    """An answer with one field per STARE dimension (``s``, ``t``, ``a``, ``r``, ``e``)."""
    fields = {dimension: field(**options) for dimension in STARE_DIMENSIONS}
    return type(name, (Answer,), {"__doc__": doc, "__module__": __name__, **fields})


def unit(**options) -> serializers.FloatField:
    """A number from 0 to 1."""
    return serializers.FloatField(min_value=0, max_value=1, **options)


def natural(**options) -> serializers.IntegerField:
    """A whole number, 0 or more (a count, a size, an index)."""
    return serializers.IntegerField(min_value=0, **options)


StareScoresAnswer = _per_dimension(
    "StareScoresAnswer",
    "A memory's STARE scores, each from 0 to 1, null where none was given or computed.",
    serializers.FloatField,
    allow_null=True,
    min_value=0,
    max_value=1,
)
StareOriginsAnswer = _per_dimension(
    "StareOriginsAnswer",
    "Where each STARE score came from, null where there is no score.",
    serializers.ChoiceField,
    choices=Memory.ScoreOrigin.choices,
    allow_null=True,
)


class EntityRefAnswer(Answer):
    """An entity named where something points at it: a claim's author, a link's end, a search
    filter it let through."""

    entity_id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField(help_text="person, customer, custom:<name>…")


class EntityAnswer(EntityRefAnswer):
    """An entity, with when and how the reader first knew of it.

    ``presenters.entity_to_dict``."""

    aliases = serializers.ListField(child=serializers.CharField())
    declared = serializers.BooleanField(help_text="In the workspace's gazetteer.")
    origin = serializers.ChoiceField(
        choices=Entity.Origin.choices, help_text="How the reader first knew of it."
    )
    merged_into = serializers.CharField(
        allow_null=True, help_text="The entity_id it was merged into, null when not merged."
    )
    created_at = serializers.DateTimeField(
        allow_null=True, help_text="When the reader could first know of it (null: not yet)."
    )


class ListedEntityAnswer(EntityAnswer):
    """An entity in the entities list: with how many memories the reader sees mention it."""

    mentions = natural()


class MemoryAnswer(Answer):
    """A memory: what its writer gave, its times, scope, replacement and STARE scores.

    ``presenters.memory_to_dict``: ``models.PLAIN_FIELDS`` but what the engine keeps back."""

    mem_id = serializers.CharField()
    text = serializers.CharField()
    category = serializers.ChoiceField(choices=Memory.Category.choices)
    memory_type = serializers.ChoiceField(choices=Memory.MemoryType.choices)
    source = serializers.CharField(help_text="Who wrote it (blank: not said).")
    significance = unit()
    pinned = serializers.BooleanField()
    status = serializers.ChoiceField(choices=Memory.Status.choices)
    session = serializers.CharField()
    thread = serializers.CharField()
    perspective = serializers.CharField(help_text="self, user, team, external or custom:<name>.")
    source_kind = serializers.ChoiceField(
        choices=SOURCE_KINDS, allow_null=True, help_text="Null when not known."
    )
    sig_self = unit(allow_null=True)
    sig_external = unit(allow_null=True)
    attribution = serializers.DictField(
        help_text="Where perspective, attributed_to and source_kind came from (the writer, the "
        "scope, a cue in the text and its words): free-form."
    )
    embedding_model = serializers.CharField()
    metadata = serializers.DictField(help_text="The writer's own, free-form.")
    created_at = serializers.DateTimeField()
    observed_at = serializers.DateTimeField(allow_null=True)
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_until = serializers.DateTimeField(allow_null=True)
    scope = serializers.CharField()
    superseded_by = serializers.CharField(allow_null=True, help_text="The mem_id that replaced it.")
    stare_scores = StareScoresAnswer()
    stare_origins = StareOriginsAnswer()
    attributed_to = EntityRefAnswer(allow_null=True, help_text="Who made its claim.")


class LinkedMemoryAnswer(Answer):
    """A memory at the other end of a link."""

    mem_id = serializers.CharField()
    text = serializers.CharField()


class MemoryLinkAnswer(Answer):
    """One of a memory's links, with the memory or the entity at its other end, who or what
    made it and why.

    ``presenters.link_to_dict``."""

    link_id = serializers.CharField(
        allow_null=True, help_text="Null for the engine's own (supersedes, follows)."
    )
    type = serializers.CharField(help_text="mentions, supports, custom:<name>…")
    direction = serializers.ChoiceField(choices=LINK_DIRECTIONS)
    memory = LinkedMemoryAnswer(required=False, help_text="The other end, when a memory.")
    entity = EntityRefAnswer(required=False, help_text="The other end, when an entity.")
    weight = unit()
    origin = serializers.ChoiceField(choices=LINK_ORIGINS)
    made_by = serializers.CharField(help_text="agent:<name>, user:<name>, a model, or engine.")
    evidence = serializers.DictField(
        help_text="Why it exists (a rule or model, a span, a score): free-form."
    )
    created_at = serializers.DateTimeField(allow_null=True)


class ProvenanceAnswer(Answer):
    """One event of a memory's history: what changed, who did it, when and why.

    ``presenters.provenance_to_dict``."""

    action = serializers.ChoiceField(choices=ProvenanceEvent.Action.choices)
    actor = serializers.CharField(help_text="agent:<name>, user:<name> or system.")
    old = serializers.DictField(help_text="The values before, free-form.")
    new = serializers.DictField(help_text="The values after, free-form.")
    reason = serializers.CharField()
    at = serializers.DateTimeField()


class MemoryDetailAnswer(MemoryAnswer):
    """A memory with its entities, its links (both ways) and its history, as the reader may
    see them.

    ``presenters.memory_detail``."""

    entities = EntityAnswer(many=True)
    links = MemoryLinkAnswer(many=True)
    provenance = ProvenanceAnswer(many=True)
    enrichment = serializers.ChoiceField(
        choices=["done", "pending", "failed"],
        help_text="Whether its entities, links, claimant and A score are stored (done), still "
        "to come from the enricher (pending: a moment after the write), or given up on after "
        "every try (failed: a curator retries it).",
    )


class MemoryPageAnswer(Answer):
    """A page of memories, with the links to the pages before and after it.

    DRF's cursor pagination (``views.memories.MemoryCursor``)."""

    next = serializers.URLField(allow_null=True, help_text="The next page, null at the end.")
    previous = serializers.URLField(allow_null=True, help_text="Null on the first page.")
    results = MemoryAnswer(many=True)


class BulkItemAnswer(Answer):
    """What a bulk write did with one item: stored it, or found it stored already.

    ``presenters.bulk_result_to_dict``."""

    index = natural(help_text="Its place in the request.")
    status = serializers.ChoiceField(choices=BULK_STATUSES)
    mem_id = serializers.CharField()
    stare_scores = StareScoresAnswer()
    stare_origins = StareOriginsAnswer()


class BulkAnswer(Answer):
    """A bulk write: how many memories were stored, how many were there already, and each.

    ``presenters.bulk_results_to_dict``."""

    stored = natural()
    existing = natural()
    results = BulkItemAnswer(many=True)


class ErasureAnswer(Answer):
    """What an erasure removed (never what it said).

    ``presenters.erasure_to_dict``."""

    erased = serializers.ListField(child=serializers.CharField(), help_text="The mem_ids.")
    count = natural()
    by = serializers.CharField()
    episodes_rewritten = natural()
    entities_removed = natural()
    dry_run = serializers.BooleanField()


class StoredLinkAnswer(Answer):
    """A link as stored: from a memory to another memory or to an entity.

    ``presenters.stored_link_to_dict``."""

    link_id = serializers.CharField()
    type = serializers.CharField()
    to = serializers.CharField(allow_null=True, help_text="The memory it points to, or null.")
    entity = serializers.CharField(allow_null=True, help_text="The entity it points to, or null.")
    weight = unit()
    origin = serializers.ChoiceField(choices=Link.Origin.choices)
    evidence = serializers.DictField(help_text="Why it exists: free-form.")
    created_at = serializers.DateTimeField()
    removed_at = serializers.DateTimeField(allow_null=True)


keyword_field(StoredLinkAnswer, "from", serializers.CharField(), before="to")


class RelatedLinkAnswer(Answer):
    """A link between a hit and the memory named by related_to."""

    type = serializers.CharField()
    direction = serializers.ChoiceField(choices=LINK_DIRECTIONS)


class RelatedToAnswer(Answer):
    """The hit's links to the memory named by related_to."""

    mem_id = serializers.CharField()
    links = RelatedLinkAnswer(many=True)


class RelationsWhyAnswer(Answer):
    """What let a hit through the filters that read links (each there when its filter was)."""

    related_to = RelatedToAnswer(required=False)
    entity = EntityRefAnswer(many=True, required=False)
    attributed_to = EntityRefAnswer(many=True, required=False)
    connections = natural(required=False)
    min_r = natural(required=False)


class ViaAnswer(Answer):
    """What joins a hit to a seed of the graph: an entity both mention (entity_id, name) or a
    link between them (mem_id, link_type)."""

    entity_id = serializers.CharField(required=False)
    name = serializers.CharField(required=False)
    mem_id = serializers.CharField(required=False)
    link_type = serializers.CharField(required=False)


class GraphShareAnswer(Answer):
    """With ``expand: "graph"``: the graph's share of the hit's relevance."""

    activation = serializers.FloatField()
    contribution = serializers.FloatField()
    relevance_before = serializers.FloatField()
    seed = serializers.BooleanField()
    via = ViaAnswer(many=True)


class LearnedShareAnswer(Answer):
    """With ``MM_SEARCH_LEARNED``: the model's score and each feature's share."""

    model = serializers.CharField()
    score = serializers.FloatField()
    relevance_before = serializers.FloatField()
    features = serializers.DictField(child=serializers.FloatField())


class PiecesAnswer(Answer):
    """The pieces of the search's recipe that placed the hit (``memories.search.recipe``)."""

    found_by = serializers.ListField(
        child=serializers.ChoiceField(choices=SOURCES),
        help_text="The candidate sources that found it.",
    )
    placed_by = serializers.ListField(
        child=serializers.CharField(), help_text="The pieces that placed it, in the order they ran."
    )
    capped = serializers.BooleanField(
        required=False, help_text="Moved after the others by the session cap."
    )


class ExplanationAnswer(Answer):
    """The figures behind a hit's place (docs/search.md).

    ``search.SearchHit.explanation``."""

    similarity = serializers.FloatField()
    keyword_rank = serializers.FloatField()
    episode_similarity = serializers.FloatField()
    similarity_z = serializers.FloatField()
    keyword_z = serializers.FloatField()
    episode_z = serializers.FloatField()
    fused = serializers.FloatField()
    neighbour = serializers.FloatField()
    relevance = serializers.FloatField()
    significance = unit()
    age_days = serializers.FloatField()
    age_factor = serializers.FloatField()
    a_score = unit(allow_null=True)
    asymmetry_factor = serializers.FloatField(
        required=False, help_text="With MM_ASYMMETRY_RANKING."
    )
    score = serializers.FloatField()
    passed_gate = serializers.BooleanField()
    relations = RelationsWhyAnswer(required=False)
    graph = GraphShareAnswer(required=False)
    learned = LearnedShareAnswer(required=False)
    pieces = PiecesAnswer()


class SearchHitAnswer(MemoryAnswer):
    """A memory found: its rank, whether the compiled file has it, and why it ranks there.

    ``presenters.hit_to_dict``."""

    rank = serializers.IntegerField(min_value=1)
    eligible = serializers.ChoiceField(choices=ELIGIBLE)
    explanation = ExplanationAnswer()


class SearchAnswer(Answer):
    """The hits of a search, best first, and a markdown table of them."""

    results = SearchHitAnswer(many=True)
    table = serializers.CharField(help_text="The hits as a markdown table.")


class CompiledEntryAnswer(Answer):
    """A memory the compiled file included (with its tokens) or cut (with the reason)."""

    mem_id = serializers.CharField()
    category = serializers.ChoiceField(choices=Memory.Category.choices)
    significance = unit()
    weight = serializers.FloatField()
    protected = serializers.BooleanField()
    tokens = natural(required=False, help_text="Of its line, for an included memory.")
    reason = serializers.CharField(required=False, help_text="Why it was cut.")


class CompiledAnswer(Answer):
    """The compiled memory file: its markdown, what went in, what was cut and why.

    ``presenters.compiled_to_dict``."""

    as_of = serializers.DateTimeField()
    budget = natural()
    tokens = natural()
    token_counter = serializers.CharField()
    display_mode = serializers.ChoiceField(choices=DISPLAY_MODES)
    decay = serializers.CharField(help_text="e.g. standard; event: fast, decision: never")
    show_ids = serializers.BooleanField()
    candidates = natural()
    included_count = natural()
    cut_count = natural()
    cut_protected_count = natural()
    included = CompiledEntryAnswer(many=True)
    cut = CompiledEntryAnswer(many=True, help_text="At most cut_listed_max of them.")
    cut_listed_max = natural()
    markdown = serializers.CharField()
