"""A search's arguments."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from memories import rules
from memories.kinds import (
    CUSTOM_TYPE_PREFIX,
    LINK_TYPES,
    PERSPECTIVES,
    SOURCE_KINDS,
)
from memories.models import Memory
from memories.serializers.fields import (
    BLANK_MESSAGES,
    DATETIME_MESSAGES,
    INTEGER_MESSAGES,
    MEM_ID,
    PERSPECTIVE,
    SEARCH_QUERY,
    Flag,
    Integer,
    MetadataFilter,
    Rule,
    StrictSerializer,
    Text,
    TextList,
    WrittenBound,
    choice_message,
    unit_field,
)

#: What ``expand`` on a search may name (``memories.search.graph``).
SEARCH_EXPANSIONS = ("graph",)


class SearchInput(StrictSerializer):
    query = Text(
        trim_whitespace=False,
        error_messages=BLANK_MESSAGES,
        validators=[SEARCH_QUERY],
        help_text="What you are looking for, in your words (at most "
        f"{settings.MM_SEARCH_MAX_QUERY_CHARS:,} characters and "
        f"{settings.MM_SEARCH_MAX_WORDS:,} distinct words).",
    )
    limit = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.search_limit, minimum=1, maximum=settings.MM_SEARCH_MAX_LIMIT)],
        help_text=f"How many results, 1 to {settings.MM_SEARCH_MAX_LIMIT}; default 10.",
    )
    as_of = serializers.DateTimeField(
        required=False,
        allow_null=True,
        error_messages=DATETIME_MESSAGES,
        help_text="Search the memories valid at this instant.",
    )
    currently_valid = Flag(
        required=False,
        allow_null=True,
        default=None,
        help_text="true: valid now; false: no longer valid. Without it or as_of, valid now.",
    )
    written_from = WrittenBound(
        end=False,
        required=False,
        allow_null=True,
        help_text="Only memories written at or after this: a day (2026-03-01, from its start in "
        "UTC) or an ISO 8601 timestamp.",
    )
    written_until = WrittenBound(
        end=True,
        required=False,
        allow_null=True,
        help_text="Only memories written up to this: a day (2026-03-31, the whole day in UTC) "
        "or an ISO 8601 timestamp (included).",
    )
    category = serializers.ChoiceField(
        choices=Memory.Category.choices,
        required=False,
        allow_null=True,
        error_messages=choice_message(Memory.Category.values),
        help_text="Only this category.",
    )
    memory_type = serializers.ChoiceField(
        choices=Memory.MemoryType.choices,
        required=False,
        allow_null=True,
        error_messages=choice_message(Memory.MemoryType.values),
        help_text="Only this memory type.",
    )
    source = Text(required=False, allow_null=True, allow_blank=True, help_text="Only this source.")
    session = Text(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=200,
        help_text="Only memories of this session (the conversation or run they belong to).",
    )
    thread = Text(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=200,
        help_text="Only memories of this thread (the ongoing story a writer named).",
    )
    metadata = MetadataFilter(
        required=False,
        allow_null=True,
        help_text='Only memories whose metadata matches: {"customer": "orion", "seats": '
        '{"gte": 50}, "tier": {"in": ["gold", "silver"]}, "churn_risk": {"exists": true}} '
        "(keys AND-ed; eq, ne, in, gt, gte, lt, lte, exists; or, and, not; see "
        "docs/metadata.md).",
    )
    perspective = Text(
        required=False,
        allow_null=True,
        validators=[PERSPECTIVE],
        help_text="Only memories for this perspective (" + ", ".join(PERSPECTIVES) + ", "
        f"{CUSTOM_TYPE_PREFIX}<name>).",
    )
    attributed_to = Text(
        required=False,
        allow_null=True,
        allow_blank=True,
        validators=[Rule(rules.entity_reference, max_length=rules.ENTITY_NAME_MAX)],
        help_text="Only claims made by this entity: its id, or a name or alias.",
    )
    source_kind = serializers.ChoiceField(
        choices=SOURCE_KINDS,
        required=False,
        allow_null=True,
        error_messages=choice_message(list(SOURCE_KINDS)),
        help_text="Only memories whose claim came this way.",
    )
    min_s_score = unit_field(
        required=False, allow_null=True, help_text="Only memories with an S score at least this."
    )
    min_t_score = unit_field(
        required=False, allow_null=True, help_text="Only memories with a T score at least this."
    )
    min_a_score = unit_field(
        required=False, allow_null=True, help_text="Only memories with an A score at least this."
    )
    min_r_score = unit_field(
        required=False, allow_null=True, help_text="Only memories with an R score at least this."
    )
    min_e_score = unit_field(
        required=False, allow_null=True, help_text="Only memories with an E score at least this."
    )
    related_to = Text(
        required=False,
        allow_null=True,
        validators=[MEM_ID],
        help_text="Only the memories directly linked to this one (its mem_id), either way.",
    )
    link_types = TextList(
        child=Text(
            validators=[Rule(rules.link_type_filter, pattern=rules.type_pattern(LINK_TYPES))]
        ),
        required=False,
        allow_null=True,
        help_text="With related_to: only links of these types (any type: "
        + ", ".join(LINK_TYPES)
        + f", {CUSTOM_TYPE_PREFIX}<name>).",
    )
    min_r = Integer(
        required=False,
        allow_null=True,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.min_connections, minimum=0)],
        help_text="Only memories with at least this many connections: distinct active memories "
        "linked either way (links of any type, supersedes and follows included) that you can "
        "see, plus distinct entities mentioned.",
    )
    entity = Text(
        required=False,
        allow_null=True,
        allow_blank=True,
        validators=[Rule(rules.entity_reference, max_length=rules.ENTITY_NAME_MAX)],
        help_text="Only memories that mention this entity: its id, or a name or alias.",
    )
    expand = serializers.ChoiceField(
        choices=SEARCH_EXPANSIONS,
        required=False,
        allow_null=True,
        error_messages=choice_message(list(SEARCH_EXPANSIONS)),
        help_text="graph: re-order the candidates by how closely links join them to the most "
        "relevant ones (off by default; each hit's explanation shows its share).",
    )

    #: Fields that need another (the OpenAPI schema says so: ``memories.api.schema``).
    requires = {"link_types": "related_to"}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("link_types") and not attrs.get("related_to"):
            raise serializers.ValidationError({"link_types": "needs related_to."})
        return written_range(attrs)


def written_range(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs``, once its written range (``written_from``, ``written_until``) is one that can
    hold a memory."""
    start, end = attrs.get("written_from"), attrs.get("written_until")
    if start is not None and end is not None and end <= start:
        raise serializers.ValidationError({"written_until": "must not be before written_from."})
    return attrs
