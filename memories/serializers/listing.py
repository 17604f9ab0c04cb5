"""Lists a page at a time: memories, entities, sources, divergences."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memories import rules
from memories.kinds import (
    ENTITY_TYPES,
)
from memories.serializers.fields import (
    INTEGER_MESSAGES,
    Integer,
    Rule,
    StrictSerializer,
    Text,
    choice_message,
)
from memories.serializers.search import SearchInput, written_range

#: What the list of memories (``GET /api/v1/memories``) may be ordered by.
LIST_ORDERINGS = ("newest", "significance")


LIST_LIMIT_MAX = rules.PAGE_SIZE_MAX


#: The search's filters that need no query and no link resolution beyond an entity.
LIST_FILTERS = (
    "as_of",
    "currently_valid",
    "written_from",
    "written_until",
    "category",
    "memory_type",
    "source",
    "session",
    "thread",
    "metadata",
    "perspective",
    "attributed_to",
    "source_kind",
    "entity",
    *(f"min_{d}_score" for d in "stare"),
)


class _ListFilters:
    """The search's filters that need no query (``LIST_FILTERS``) and an order."""

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        search = SearchInput().get_fields()
        for name in LIST_FILTERS:
            fields[name] = search[name]
        fields["ordering"] = serializers.ChoiceField(
            choices=LIST_ORDERINGS,
            required=False,
            allow_blank=True,
            error_messages=choice_message(list(LIST_ORDERINGS)),
            help_text="newest (default: newest written first) or significance (most "
            "significant first).",
        )
        return fields

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return written_range(super().validate(attrs))


class MemoryListInput(_ListFilters, StrictSerializer):
    """Browse memories without a query: the search's filters that need none, an order, and a
    cursor page (``limit``, ``cursor``: the ``next`` link of the previous page)."""

    limit = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.page_size, minimum=1, maximum=LIST_LIMIT_MAX)],
        help_text=f"Per page, 1 to {LIST_LIMIT_MAX}; default 20.",
    )
    cursor = Text(
        required=False,
        allow_blank=True,
        max_length=1000,
        help_text="Where the page starts: take it from the previous page's next link.",
    )


class PageInput(StrictSerializer):
    page = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.page_number, minimum=1)],
        help_text="Page (from 1); default 1.",
    )
    page_size = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.page_size, minimum=1, maximum=rules.PAGE_SIZE_MAX)],
        help_text=f"Per page, 1 to {rules.PAGE_SIZE_MAX}; default {rules.PAGE_SIZE_DEFAULT}.",
    )


class MemoryPageInput(_ListFilters, PageInput):
    """Browse memories a numbered page at a time (MCP's mm_list, the dashboard)."""


class EntityListInput(PageInput):
    query = Text(required=False, allow_blank=True, help_text="Part of a name or alias.")
    type = Text(
        required=False,
        allow_blank=True,
        validators=[
            Rule(rules.entity_type_or_blank, pattern="^$|" + rules.type_pattern(ENTITY_TYPES))
        ],
    )


SOURCE_KINDS_LISTED = ("writer", "entity")


class SourceListInput(PageInput):
    kind = serializers.ChoiceField(
        choices=SOURCE_KINDS_LISTED,
        required=False,
        allow_blank=True,
        error_messages=choice_message(list(SOURCE_KINDS_LISTED)),
        help_text="Only writers (the memories' source) or only entities their claims are "
        "attributed to; default both.",
    )
    query = Text(required=False, allow_blank=True, help_text="Part of a source's name.")


DIVERGENCE_STATUSES = ("open", "resolved", "dismissed")


class DivergenceListInput(PageInput):
    status = serializers.ChoiceField(
        choices=DIVERGENCE_STATUSES,
        required=False,
        allow_blank=True,
        error_messages=choice_message(list(DIVERGENCE_STATUSES)),
        help_text="Only divergences in this state (open, resolved, dismissed); default all.",
    )
