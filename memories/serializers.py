"""Input shapes shared by every adapter (REST API, CLI, MCP tools, dashboard): the one
declaration of each operation's arguments.

They turn JSON into Python values (numbers, aware datetimes, choices) and refuse unknown
fields; the rules about those values (ranges, windows, existence) live in the services so that
every caller, serializer or not, gets them. The MCP tools' input schemas, the commands' options
and the dashboard's search and compile forms are generated from these classes
(``memories.shapes``), so a field added here shows up in each of them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from rest_framework import serializers

from memories import rules
from memories.compile import DISPLAY_MODES, compile_options
from memories.decay import PRESET_NAMES
from memories.errors import ValidationFailed
from memories.kinds import (
    CUSTOM_TYPE_PREFIX,
    DERIVED_LINK_TYPES,
    ENTITY_TYPES,
    LINK_TYPES,
    PERSPECTIVES,
    SOURCE_KINDS,
)
from memories.models import Memory
from memories.services import CURATE_ACTIONS
from memories.tokens import COUNTER_NAME


class Rule:
    """A serializer validator from one of ``memories.rules``, carrying the bounds that rule
    enforces so the generated shapes (``memories.shapes``) publish them: the rule keeps its own
    message, which DRF's min_value / max_value validators would replace."""

    def __init__(
        self,
        check: Callable[[Any], str | None],
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        max_length: int | None = None,
        pattern: str | None = None,
    ) -> None:
        self.check = check
        self.minimum = minimum
        self.maximum = maximum
        self.max_length = max_length
        self.pattern = pattern

    def __call__(self, value: Any) -> None:
        message = self.check(value)
        if message:
            raise serializers.ValidationError(message)


def _choice_message(choices: list[str]) -> dict[str, str]:
    return {"invalid_choice": '"{input}" is not one of: ' + ", ".join(choices) + "."}


DATETIME_MESSAGES = {"invalid": "must be an ISO 8601 timestamp, e.g. 2026-03-01T09:00:00Z."}
BLANK_MESSAGES = {"blank": "must not be empty."}
NUMBER_MESSAGES = {"invalid": "must be a number."}


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, so a misspelt argument is an error, not a no-op."""

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data) - set(self.fields)) if isinstance(data, dict) else []
        errors = {name: ["is not a known field."] for name in unknown}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if not isinstance(exc.detail, dict):
                raise
            errors = {**exc.detail, **errors}
        if errors:
            raise serializers.ValidationError(errors)
        return value

    def to_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        """The validated ``values`` as keyword arguments of the matching service."""
        return dict(values)


UNIT_INTERVAL = Rule(rules.unit_interval, minimum=0, maximum=1)
MEMORY_TEXT = Rule(rules.memory_text, max_length=settings.MM_MAX_TEXT_CHARS)
SEARCH_QUERY = Rule(rules.search_query, max_length=settings.MM_SEARCH_MAX_QUERY_CHARS)
INTEGER_MESSAGES = {"invalid": "must be an integer."}


# --- Typed fields: a JSON value of the wrong type is an error, never converted --------------
#
# An agent's bug (``"significance": true``, ``"0.5"``, ``"text": 123``) is a 400. Values that
# come as text (command-line options, a page's query string, the compiled file's query
# parameters) are parsed from text: ``parse(..., from_text=True)``.


class _Typed:
    """Refuses a value whose JSON type is not ``json_types`` unless the input is text."""

    json_types: tuple[type, ...] = ()

    def to_internal_value(self, data: Any) -> Any:
        from_text = self.context.get("from_text", False)
        if not (from_text and isinstance(data, str)) and (
            isinstance(data, bool) is not (bool in self.json_types)
            or not isinstance(data, self.json_types)
        ):
            self.fail("invalid", input=data)
        return super().to_internal_value(data)


class Text(_Typed, serializers.CharField):
    json_types = (str,)
    default_error_messages = {"invalid": "must be a string."}


class Number(_Typed, serializers.FloatField):
    json_types = (int, float)
    default_error_messages = {"invalid": "must be a number."}


class Integer(_Typed, serializers.IntegerField):
    json_types = (int,)
    default_error_messages = {"invalid": "must be an integer."}

    def to_internal_value(self, data: Any) -> Any:
        # From text, digits only: "2.0", "2e0" and " 2 " are not integers (DRF would take them).
        if isinstance(data, str) and not INTEGER_TEXT.fullmatch(data):
            self.fail("invalid", input=data)
        return super().to_internal_value(data)


INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


class Flag(_Typed, serializers.BooleanField):
    json_types = (bool,)


class TextList(serializers.ListField):
    """A list of strings; from text (a command line, a query string), comma-separated."""

    def to_internal_value(self, data: Any) -> Any:
        if self.context.get("from_text", False) and isinstance(data, str):
            data = [part.strip() for part in data.split(",") if part.strip()]
        return super().to_internal_value(data)


def _unit_field(**kwargs: Any) -> Number:
    return Number(
        error_messages=NUMBER_MESSAGES,
        min_value=None,
        max_value=None,
        validators=[UNIT_INTERVAL],
        **kwargs,
    )


class StareScoresInput(StrictSerializer):
    s = _unit_field(required=False, allow_null=True)
    t = _unit_field(required=False, allow_null=True)
    a = _unit_field(required=False, allow_null=True)
    r = _unit_field(required=False, allow_null=True)
    e = _unit_field(required=False, allow_null=True)


ENTITY_TYPE_HELP = f"One of {', '.join(ENTITY_TYPES)}, or {CUSTOM_TYPE_PREFIX}<name>."
LINK_TYPE_HELP = (
    "One of "
    + ", ".join(t for t in LINK_TYPES if t not in DERIVED_LINK_TYPES)
    + f", or {CUSTOM_TYPE_PREFIX}<name> (supersedes and follows are the engine's)."
)


ID_PATTERN = rules.PUBLIC_ID_PATTERN
ENTITY_TYPE = Rule(rules.entity_type, pattern=rules.type_pattern(ENTITY_TYPES))
LINK_TYPE = Rule(
    rules.link_type,
    pattern=rules.type_pattern(tuple(t for t in LINK_TYPES if t not in DERIVED_LINK_TYPES)),
)
MEM_ID = Rule(rules.mem_id, pattern=ID_PATTERN)
PERSPECTIVE = Rule(rules.perspective, pattern=rules.type_pattern(PERSPECTIVES))
PERSPECTIVE_HELP = f"Whom it is for: {', '.join(PERSPECTIVES)}, or {CUSTOM_TYPE_PREFIX}<name>."


class EntityInput(StrictSerializer):
    name = Text(
        trim_whitespace=False,
        error_messages=BLANK_MESSAGES,
        validators=[
            Rule(rules.entity_name, max_length=rules.ENTITY_NAME_MAX, pattern=rules.NAME_PATTERN)
        ],
        help_text="Its name as the text says it, e.g. Zephyr Logistics.",
    )
    type = Text(validators=[ENTITY_TYPE], help_text=ENTITY_TYPE_HELP)


class LinkInput(StrictSerializer):
    to = Text(validators=[MEM_ID], help_text="The mem_id of the memory it links to.")
    type = Text(validators=[LINK_TYPE], help_text=LINK_TYPE_HELP)
    weight = _unit_field(required=False, help_text="How strong, 0 to 1; default 1.")


class RememberInput(StrictSerializer):
    text = Text(
        trim_whitespace=False,
        error_messages=BLANK_MESSAGES,
        validators=[MEMORY_TEXT],
        help_text="What to remember, in one or a few sentences (required; at most "
        f"{settings.MM_MAX_TEXT_CHARS} characters).",
    )
    category = serializers.ChoiceField(
        choices=Memory.Category.choices,
        required=False,
        error_messages=_choice_message(Memory.Category.values),
        help_text="Kind of memory; default fact.",
    )
    memory_type = serializers.ChoiceField(
        choices=Memory.MemoryType.choices,
        required=False,
        error_messages=_choice_message(Memory.MemoryType.values),
        help_text="Default semantic.",
    )
    significance = _unit_field(
        required=False, help_text="How much it matters, 0 to 1; default 0.80."
    )
    stare_scores = StareScoresInput(
        required=False,
        help_text="Your scores 0 to 1 for the dimensions s, t, a, r, e; leave out what you cannot "
        "judge.",
    )
    valid_from = serializers.DateTimeField(
        required=False,
        allow_null=True,
        error_messages=DATETIME_MESSAGES,
        help_text="When it starts being true; default open.",
    )
    valid_until = serializers.DateTimeField(
        required=False,
        allow_null=True,
        error_messages=DATETIME_MESSAGES,
        help_text="When it stops being true; default open.",
    )
    observed_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        error_messages=DATETIME_MESSAGES,
        help_text="When it happened.",
    )
    created_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        error_messages=DATETIME_MESSAGES,
        validators=[Rule(rules.not_in_future)],
        help_text="When the memory was really written (importing history); not in the future.",
    )
    source = Text(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Who says so; default the agent's name.",
    )
    scope = Text(
        required=False,
        allow_blank=True,
        help_text="Scope to write to, e.g. team:accounts; default the agent's private scope.",
    )
    supersedes = Text(
        required=False,
        allow_blank=True,
        allow_null=True,
        validators=[Rule(rules.mem_id_or_blank, pattern=r"^([0-9a-f]{16})?$")],
        help_text="mem_id of the memory this one replaces.",
    )
    session = Text(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The conversation or run it belongs to.",
    )
    thread = Text(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The ongoing story it belongs to.",
    )
    perspective = Text(
        required=False,
        validators=[PERSPECTIVE],
        help_text=PERSPECTIVE_HELP + " Default: self in your private scope, team in a shared one.",
    )
    attributed_to = Text(
        required=False,
        allow_null=True,
        validators=[Rule(rules.entity_reference, max_length=rules.ENTITY_NAME_MAX)],
        help_text="Who made the claim: an entity's id, or a name (found among the workspace's "
        'entities, or made one). Default: the text\'s reported speech ("according to Maria", '
        '"Maria said"), if any.',
    )
    source_kind = serializers.ChoiceField(
        choices=SOURCE_KINDS,
        required=False,
        error_messages=_choice_message(list(SOURCE_KINDS)),
        help_text="How the claim reached you: observed (first-hand), stated (someone said it), "
        "tool (a tool's output), inferred (you concluded it), hearsay (second-hand). Default: "
        "what the text's cues say, if anything.",
    )
    sig_self = _unit_field(
        required=False,
        allow_null=True,
        help_text="How much it matters to you, 0 to 1 (significance, when you give none, is the "
        "larger of sig_self and sig_external).",
    )
    sig_external = _unit_field(
        required=False, allow_null=True, help_text="How much it matters to others, 0 to 1."
    )
    metadata = serializers.DictField(required=False, help_text="Any JSON object to keep with it.")
    idempotency_key = Text(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=rules.IDEMPOTENCY_KEY_MAX,
        help_text="Your key for this write: sent again (a retry), nothing new is stored and the "
        "memory stored under it comes back (over REST, 200 instead of 201).",
    )
    entities = serializers.ListField(
        child=EntityInput(),
        required=False,
        max_length=settings.MM_MAX_ENTITIES_PER_MEMORY,
        help_text='Who or what it is about, e.g. [{"name": "Zephyr Logistics", "type": '
        '"customer"}]; the engine also finds the workspace\'s declared entities and the names '
        "in the text.",
    )
    links = serializers.ListField(
        child=LinkInput(),
        required=False,
        max_length=settings.MM_MAX_LINKS_PER_MEMORY,
        help_text='Memories it connects to, e.g. [{"to": "<mem_id>", "type": "supports"}].',
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        message = rules.window(attrs.get("valid_from"), attrs.get("valid_until"))
        if message:
            raise serializers.ValidationError({"valid_until": message})
        return attrs


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
    category = serializers.ChoiceField(
        choices=Memory.Category.choices,
        required=False,
        allow_null=True,
        error_messages=_choice_message(Memory.Category.values),
        help_text="Only this category.",
    )
    memory_type = serializers.ChoiceField(
        choices=Memory.MemoryType.choices,
        required=False,
        allow_null=True,
        error_messages=_choice_message(Memory.MemoryType.values),
        help_text="Only this memory type.",
    )
    source = Text(required=False, allow_null=True, allow_blank=True, help_text="Only this source.")
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
        error_messages=_choice_message(list(SOURCE_KINDS)),
        help_text="Only memories whose claim came this way.",
    )
    min_s_score = _unit_field(
        required=False, allow_null=True, help_text="Only memories with an S score at least this."
    )
    min_t_score = _unit_field(
        required=False, allow_null=True, help_text="Only memories with a T score at least this."
    )
    min_a_score = _unit_field(
        required=False, allow_null=True, help_text="Only memories with an A score at least this."
    )
    min_r_score = _unit_field(
        required=False, allow_null=True, help_text="Only memories with an R score at least this."
    )
    min_e_score = _unit_field(
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
        error_messages=_choice_message(list(SEARCH_EXPANSIONS)),
        help_text="graph: re-order the candidates by how closely links join them to the most "
        "relevant ones (off by default; each hit's explanation shows its share).",
    )

    #: Fields that need another (the OpenAPI schema says so: ``memories.api.schema``).
    requires = {"link_types": "related_to"}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("link_types") and not attrs.get("related_to"):
            raise serializers.ValidationError({"link_types": "needs related_to."})
        return attrs


#: What the list of memories (``GET /api/v1/memories``) may be ordered by.
LIST_ORDERINGS = ("newest", "significance")
LIST_LIMIT_MAX = rules.PAGE_SIZE_MAX
#: The search's filters that need no query and no link resolution beyond an entity.
LIST_FILTERS = (
    "as_of",
    "currently_valid",
    "category",
    "memory_type",
    "source",
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
            error_messages=_choice_message(list(LIST_ORDERINGS)),
            help_text="newest (default: newest written first) or significance (most "
            "significant first).",
        )
        return fields


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


def _reason_field() -> Text:
    """Blank goes through to the service, whose message says why a reason is needed;
    ``min_length`` (never broken by a reason that is not blank) tells the published shapes that
    one is expected."""
    return Text(
        allow_blank=True,
        trim_whitespace=True,
        min_length=1,
        help_text="Why (required; kept in the history).",
    )


class FeedbackInput(StrictSerializer):
    action = serializers.ChoiceField(
        choices=CURATE_ACTIONS,
        error_messages=_choice_message(list(CURATE_ACTIONS)),
        help_text="important: it mattered (significance halfway to 1: += (1 - significance) / 2); "
        "demote: it misled or did not matter (significance halved); pin: always keep it in the "
        "compiled file; unpin: stop doing so; forget: never return or compile it again (the "
        "same as /forget; its history stays).",
    )
    reason = _reason_field()


class ForgetInput(StrictSerializer):
    reason = _reason_field()


class EraseInput(StrictSerializer):
    reason = _reason_field()


class LinkAddInput(StrictSerializer):
    #: Exactly one of them (the OpenAPI schema says so: ``memories.api.schema``).
    one_of = ("to", "entity")

    to = Text(
        required=False,
        validators=[MEM_ID],
        help_text="The mem_id of the memory to link to (or give entity).",
    )
    entity = Text(
        required=False,
        validators=[Rule(lambda value: rules.public_id(value, "entity id"), pattern=ID_PATTERN)],
        help_text="The id of the entity to link to (or give to).",
    )
    type = Text(validators=[LINK_TYPE], help_text=LINK_TYPE_HELP)
    weight = _unit_field(required=False, help_text="How strong, 0 to 1; default 1.")
    note = Text(
        required=False,
        allow_blank=True,
        max_length=1_000,
        help_text="Why you link them (kept as the link's evidence).",
    )

    def to_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        data = dict(values)
        data["kind"] = data.pop("type")
        return data


LINK_TYPE_FILTER = TextList(
    child=Text(validators=[Rule(rules.link_type_filter, pattern=rules.type_pattern(LINK_TYPES))]),
    required=False,
    allow_null=True,
    help_text="Follow only links of these types (any type: "
    + ", ".join(LINK_TYPES)
    + f", {CUSTOM_TYPE_PREFIX}<name>).",
)
NODE_ID = Rule(rules.node_id, pattern=ID_PATTERN)


def _starts_from(serializer_class: type[StrictSerializer]) -> type[StrictSerializer]:
    """Declare the field ``from``, which a Python keyword cannot name as a class attribute."""
    serializer_class._declared_fields["from"] = Text(
        validators=[NODE_ID], help_text="Where to start: a mem_id or an entity id."
    )
    return serializer_class


@_starts_from
class TraverseInput(StrictSerializer):
    depth = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.traversal_depth, minimum=1, maximum=rules.TRAVERSAL_MAX_DEPTH)],
        help_text=f"How many links to follow, 1 to {rules.TRAVERSAL_MAX_DEPTH}; default 2.",
    )
    link_types = LINK_TYPE_FILTER
    direction = serializers.ChoiceField(
        choices=["out", "in", "both"],
        required=False,
        help_text="out: links from each node; in: links to it; both (default).",
    )
    limit = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.traversal_limit, minimum=1, maximum=rules.TRAVERSAL_MAX_NODES)],
        help_text=f"How many nodes, nearest first, 1 to {rules.TRAVERSAL_MAX_NODES}; default 50.",
    )


@_starts_from
class ExplainPathInput(StrictSerializer):
    to = Text(validators=[NODE_ID], help_text="Where to end: a mem_id or an entity id.")
    depth = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[Rule(rules.traversal_depth, minimum=1, maximum=rules.TRAVERSAL_MAX_DEPTH)],
        help_text=f"How many links a path may have, 1 to {rules.TRAVERSAL_MAX_DEPTH}; default "
        f"{rules.TRAVERSAL_MAX_DEPTH}.",
    )
    link_types = LINK_TYPE_FILTER


class LinkRemoveInput(StrictSerializer):
    reason = _reason_field()


class EntityDeclareInput(StrictSerializer):
    name = Text(
        trim_whitespace=False,
        error_messages=BLANK_MESSAGES,
        validators=[
            Rule(rules.entity_name, max_length=rules.ENTITY_NAME_MAX, pattern=rules.NAME_PATTERN)
        ],
        help_text="Its canonical name.",
    )
    type = Text(validators=[ENTITY_TYPE], help_text=ENTITY_TYPE_HELP)
    aliases = serializers.ListField(
        child=Text(
            validators=[
                Rule(
                    rules.entity_name, max_length=rules.ENTITY_NAME_MAX, pattern=rules.NAME_PATTERN
                )
            ]
        ),
        required=False,
        max_length=settings.MM_MAX_ENTITIES_PER_MEMORY,
        help_text="Other names texts use for it (found like its name).",
    )

    def to_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        data = dict(values)
        data["kind"] = data.pop("type")
        return data


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
        error_messages=_choice_message(list(SOURCE_KINDS_LISTED)),
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
        error_messages=_choice_message(list(DIVERGENCE_STATUSES)),
        help_text="Only divergences in this state (open, resolved, dismissed); default all.",
    )


class DivergenceCloseInput(StrictSerializer):
    status = serializers.ChoiceField(
        choices=("resolved", "dismissed"),
        error_messages=_choice_message(["resolved", "dismissed"]),
        help_text="resolved: the disagreement was real and is settled; dismissed: it was none "
        "(its contradicts link is removed).",
    )
    reason = _reason_field()
    right = Text(
        required=False,
        allow_null=True,
        validators=[MEM_ID],
        help_text="Resolving: the mem_id of the memory that was right (its source's record "
        "counts it right, the other's wrong).",
    )


class NoArguments(StrictSerializer):
    """An operation without arguments (the readiness report): any argument is unknown."""


class MemIdInput(StrictSerializer):
    """The memory acted on, for the adapters that take it as an argument (the MCP tools; the
    REST API takes it from the URL). Combined with a shape: ``class X(MemIdInput, FeedbackInput)``.
    """

    # The messages the tools have always given; anything else goes on to the lookup (NotFound).
    mem_id = Text(
        trim_whitespace=False,
        error_messages={
            "invalid": "must be a string.",
            "blank": "must be a string.",
            "null": "This field is required.",
        },
        help_text="The memory's mem_id (16 hex characters).",
    )


class CompileInput(StrictSerializer):
    budget = Integer(
        required=False,
        error_messages=INTEGER_MESSAGES,
        validators=[
            Rule(
                rules.compile_budget,
                minimum=rules.MIN_COMPILE_BUDGET,
                maximum=settings.MM_COMPILE_MAX_BUDGET_TOKENS,
            )
        ],
        help_text=f"Tokens ({COUNTER_NAME}), {rules.MIN_COMPILE_BUDGET} to "
        f"{settings.MM_COMPILE_MAX_BUDGET_TOKENS}; default {settings.MM_COMPILE_BUDGET_TOKENS}.",
    )
    as_of = serializers.DateTimeField(
        required=False,
        allow_null=True,
        error_messages=DATETIME_MESSAGES,
        help_text="The file as of this instant: its validity windows, writing times and ages "
        "apply (status, significance and pins are current); default now.",
    )
    display_mode = serializers.ChoiceField(
        choices=DISPLAY_MODES,
        required=False,
        error_messages=_choice_message(list(DISPLAY_MODES)),
        help_text="marks (● ○ —), verbose (the numbers) or off; default MM_STARE_DISPLAY_MODE.",
    )
    decay = serializers.ChoiceField(
        choices=PRESET_NAMES,
        required=False,
        error_messages=_choice_message(list(PRESET_NAMES)),
        help_text="A decay preset for every category; default MM_DECAY_PRESET and "
        "MM_DECAY_CATEGORIES.",
    )
    show_ids = Flag(
        required=False,
        allow_null=True,
        default=None,
        error_messages={"invalid": "must be true or false."},
        help_text="End each line with its mem_id; default MM_COMPILE_SHOW_IDS.",
    )

    def to_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of ``compiled_memory_file`` (besides whose file)."""
        data = dict(values)
        as_of = data.pop("as_of", None)
        return {"as_of": as_of, "options": compile_options(**data)}


def parse_bulk(data: Any) -> list[dict[str, Any]]:
    """``{"memories": [...]}``, each item the remember arguments: every item's problems at once,
    named ``memories[<index>].<field>``."""
    if not isinstance(data, dict):
        raise ValidationFailed.single("body", "must be a JSON object.")
    errors: dict[str, list[str]] = {
        name: ["is not a known field."] for name in sorted(set(data) - {"memories"})
    }
    items = data.get("memories")
    limit = settings.MM_BULK_MAX_ITEMS
    if not isinstance(items, list):
        errors["memories"] = ["must be a list of memories (the remember arguments)."]
    elif not 1 <= len(items) <= limit:
        errors["memories"] = [f"must hold 1 to {limit} memories (got {len(items)})."]
    if errors:
        raise ValidationFailed(errors)
    parsed = []
    for index, item in enumerate(items):
        try:
            if not isinstance(item, dict):
                raise ValidationFailed.single("body", "must be a JSON object.")
            parsed.append(parse(RememberInput, item))
        except ValidationFailed as exc:
            for field, messages in exc.errors.items():
                name = f"memories[{index}]" + ("" if field == "body" else f".{field}")
                errors[name] = messages
    if errors:
        raise ValidationFailed(errors)
    return parsed


def query_values(query: Any) -> dict[str, str]:
    """A query string's parameters, each given once (a list is comma-separated): a parameter
    given twice is a 400 naming it, never one of its values chosen in silence."""
    repeated = sorted(name for name, values in query.lists() if len(values) > 1)
    if repeated:
        raise ValidationFailed(
            {name: ["is given more than once: give it once."] for name in repeated}
        )
    return query.dict()


def parse(
    serializer_class: type[StrictSerializer], data: Any, *, from_text: bool = False
) -> dict[str, Any]:
    """Validate ``data`` with a serializer, raising the domain's ValidationFailed on error.
    ``from_text``: the values came as text (command line, query string) and are parsed from it;
    otherwise each must have its JSON type."""
    if not isinstance(data, dict):
        raise ValidationFailed.single("body", "must be a JSON object.")
    validator = _validator(serializer_class, from_text)
    try:
        values = validator.run_validation(data)
    except serializers.ValidationError as exc:
        detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        raise ValidationFailed(_flatten(detail)) from None
    return validator.to_kwargs(values)


@functools.cache
def _validator(serializer_class: type[StrictSerializer], from_text: bool) -> StrictSerializer:
    """One unbound instance of each serializer, its fields built once: validating with it
    (``run_validation``) reads them and keeps no state, and building a serializer's fields
    anew is most of the cost of a small request (a deep copy of every declared field)."""
    validator = serializer_class(context={"from_text": from_text})
    validator.fields  # noqa: B018  (built here, once, not by the first request of each thread)
    return validator


def _flatten(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    flat: dict[str, list[str]] = {}
    for field, value in errors.items():
        if isinstance(field, int):  # an item of a list: ``entities[0]``
            name = f"{prefix.removesuffix('.')}[{field}]"
        else:
            name = "body" if field == "non_field_errors" and not prefix else f"{prefix}{field}"
        if isinstance(value, dict):
            flat.update(_flatten(value, prefix=f"{name}."))
        else:
            flat[name] = [str(message) for message in value]
    return flat
