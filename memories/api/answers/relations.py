"""The shapes of the answers about what memories connect to and disagree on: entities, paths
and traversals, divergences, sources (``memories.presenters``, one shape each, as in
``answers.memories``)."""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from memories.api.answers.memories import (
    LINK_ORIGINS,
    Answer,
    EntityAnswer,
    ListedEntityAnswer,
    MemoryAnswer,
    keyword_field,
    natural,
    unit,
)
from memories.kinds import LINK_DIRECTIONS
from memories.models import Divergence, ProvenanceEvent
from memories.selectors.sources import ENTITY, TOPIC, WRITER

#: Whose record a source's is: a writer's, an entity's its claims are attributed to, a topic's.
RECORD_KINDS = (WRITER, ENTITY, TOPIC)
#: What an event says of its memory's claim (``selectors.sources.event_effect``).
EFFECTS = ("right", "wrong", "none")


class PageAnswer(Answer):
    """Where a page of a list stands.

    ``selectors.paging.page_of``."""

    page = serializers.IntegerField(min_value=1)
    page_size = serializers.IntegerField(min_value=1)
    pages = natural(help_text="How many pages in all.")
    count = natural(help_text="How many items in all.")


class EntityPageAnswer(PageAnswer):
    """A page of the entities the reader may know of, most mentioned first."""

    results = ListedEntityAnswer(many=True)


class EntityDetailAnswer(PageAnswer):
    """An entity and a page of the memories that mention it, newest first."""

    entity = EntityAnswer()
    memories = MemoryAnswer(many=True)


class MemoryNodeAnswer(Answer):
    """A memory a walk reached or passed through."""

    kind = serializers.ChoiceField(choices=["memory"])
    mem_id = serializers.CharField()
    text = serializers.CharField()


class EntityNodeAnswer(Answer):
    """An entity a walk reached or passed through."""

    kind = serializers.ChoiceField(choices=["entity"])
    entity_id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()


def node(**options) -> PolymorphicProxySerializer:
    """A node of a walk or a path: a memory or an entity, told apart by ``kind``."""
    return PolymorphicProxySerializer(
        component_name="Node",
        serializers={"memory": MemoryNodeAnswer, "entity": EntityNodeAnswer},
        resource_type_field_name="kind",
        **options,
    )


class StepAnswer(Answer):
    """One link of a path, from one node to the next: who or what made it, why and when.

    ``presenters.path_to_list``."""

    to = node()
    type = serializers.CharField()
    direction = serializers.ChoiceField(choices=LINK_DIRECTIONS)
    link_id = serializers.CharField(
        allow_null=True, help_text="Null for the engine's own (supersedes, follows)."
    )
    origin = serializers.ChoiceField(choices=LINK_ORIGINS)
    made_by = serializers.CharField(help_text="agent:<name>, user:<name>, a model, or engine.")
    weight = unit()
    evidence = serializers.DictField(help_text="Why the link exists: free-form.")
    created_at = serializers.DateTimeField(allow_null=True)


class ReachedAnswer(Answer):
    """A node a walk reached, by its shortest path."""

    node = node()
    depth = natural()
    path = StepAnswer(many=True)


class TraversalAnswer(Answer):
    """The nodes within reach of a start, nearest first, each with its shortest path.

    ``presenters.traversal_to_dict``."""

    count = natural()
    nodes = ReachedAnswer(many=True)


class PathAnswer(Answer):
    """The shortest path between two nodes, when one is within reach.

    ``presenters.path_to_dict``."""

    to = node()
    found = serializers.BooleanField()
    length = natural(allow_null=True, help_text="Null when none was found.")
    path = StepAnswer(many=True)


for answer, before in ((StepAnswer, "to"), (TraversalAnswer, "count"), (PathAnswer, "to")):
    keyword_field(answer, "from", node(), before=before)


class DivergingMemoryAnswer(Answer):
    """One of the two memories that disagree."""

    mem_id = serializers.CharField()
    text = serializers.CharField()
    source = serializers.CharField()
    scope = serializers.CharField()
    created_at = serializers.DateTimeField()


class DivergenceAnswer(Answer):
    """Two memories by different writers that disagree (the older first), why they were
    flagged, and what a curator decided.

    ``presenters.divergence_to_dict``."""

    divergence_id = serializers.CharField()
    status = serializers.ChoiceField(choices=Divergence.Status.choices)
    score = serializers.FloatField()
    detector = serializers.CharField(help_text="rules, geometry or model")
    evidence = serializers.DictField(help_text="What the detector found: free-form.")
    memories = DivergingMemoryAnswer(many=True, help_text="The two, the older first.")
    link_id = serializers.CharField(allow_null=True, help_text="Its contradicts link.")
    reason = serializers.CharField(help_text="The curator's, once closed.")
    closed_by = serializers.CharField(allow_null=True)
    closed_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class DivergencePageAnswer(PageAnswer):
    """A page of divergences, newest first."""

    results = DivergenceAnswer(many=True)


class SourceAnswer(Answer):
    """A source's (or a topic's) record: its memories the reader sees, how many were found
    right and wrong, and its estimate.

    ``presenters.source_to_dict``."""

    kind = serializers.ChoiceField(choices=RECORD_KINDS)
    key = serializers.CharField(help_text="The writer's name, or the entity's entity_id.")
    name = serializers.CharField()
    memories = natural()
    right = natural()
    wrong = natural()
    estimate = unit(help_text="Shrunk toward the workspace's prior.")


class SourceEventAnswer(Answer):
    """An event behind a source's record."""

    mem_id = serializers.CharField()
    text = serializers.CharField()
    action = serializers.ChoiceField(choices=ProvenanceEvent.Action.choices)
    effect = serializers.ChoiceField(choices=EFFECTS)
    actor = serializers.CharField()
    reason = serializers.CharField()
    at = serializers.DateTimeField()


class SourceDetailAnswer(SourceAnswer):
    """A source's record with its records on topics (most judged first) and the events behind
    it (newest first).

    ``presenters.source_detail_to_dict``."""

    topics = SourceAnswer(many=True)
    events = SourceEventAnswer(many=True)


class SourcePageAnswer(PageAnswer):
    """A page of sources, most judged first, with the workspace's prior."""

    prior = unit(help_text="The workspace's prior estimate.")
    prior_strength = serializers.FloatField()
    results = SourceAnswer(many=True)
