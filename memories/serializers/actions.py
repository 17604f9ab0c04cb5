"""The other operations' arguments: feedback, forget, erase, links, traversal, entities
declared, a divergence closed, the compiled file."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from memories import rules
from memories.compile import DISPLAY_MODES, GROUPINGS, compile_options
from memories.kinds import WALK_DIRECTIONS
from memories.serializers.fields import (
    BLANK_MESSAGES,
    DATETIME_MESSAGES,
    ENTITY_TYPE,
    ENTITY_TYPE_HELP,
    ID_PATTERN,
    INTEGER_MESSAGES,
    LINK_TYPE,
    LINK_TYPE_FILTER,
    LINK_TYPE_HELP,
    MEM_ID,
    NODE_ID,
    Flag,
    Integer,
    MetadataFilter,
    Rule,
    StrictSerializer,
    Text,
    choice_message,
    reason_field,
    unit_field,
)
from memories.services import CURATE_ACTIONS
from memories.temporal.decay import PRESET_NAMES
from memories.tokens import COUNTER_NAME


class FeedbackInput(StrictSerializer):
    action = serializers.ChoiceField(
        choices=CURATE_ACTIONS,
        error_messages=choice_message(list(CURATE_ACTIONS)),
        help_text="important: it mattered (significance halfway to 1: += (1 - significance) / 2); "
        "demote: it misled or did not matter (significance halved); pin: always keep it in the "
        "compiled file; unpin: stop doing so; forget: never return or compile it again (the "
        "same as /forget; its history stays).",
    )
    reason = reason_field()


class ForgetInput(StrictSerializer):
    reason = reason_field()


class EraseInput(StrictSerializer):
    reason = reason_field()


class EraseChosenInput(StrictSerializer):
    """An erasure of every memory the agent sees that mentions an entity or matches a metadata
    filter (``services.memories_erase_by_agent``)."""

    #: Exactly one of them (the OpenAPI schema says so: ``memories.api.schema``).
    one_of = ("entity", "metadata")

    entity = Text(
        required=False,
        max_length=200,
        help_text="An entity's id, name or alias: the memories that mention it (a link to it or "
        "to an entity merged into it) or whose claim it made (attributed_to). The entity goes "
        "too once nothing names it, even a declared one.",
    )
    metadata = MetadataFilter(
        required=False,
        help_text="A metadata filter (docs/metadata.md): the memories it matches.",
    )
    reason = Text(
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="Why (required unless dry_run; kept in each tombstone, never the content).",
    )
    dry_run = Flag(
        required=False,
        default=False,
        error_messages={"invalid": "must be true or false."},
        help_text="List what would be erased (their mem_ids) and change nothing.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in self.one_of if attrs.get(name) is not None]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"entity": ["give either entity (a name or id) or metadata (a filter), not both."]}
            )
        return attrs

    def to_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of ``memories_erase_by_agent`` (besides the agent)."""
        by = "entity" if values.get("entity") is not None else "metadata"
        return {
            "by": by,
            "value": values[by],
            "reason": values.get("reason", ""),
            "dry_run": values.get("dry_run", False),
        }


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
    weight = unit_field(required=False, help_text="How strong, 0 to 1; default 1.")
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
        choices=WALK_DIRECTIONS,
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
    reason = reason_field()


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


class DivergenceCloseInput(StrictSerializer):
    status = serializers.ChoiceField(
        choices=("resolved", "dismissed"),
        error_messages=choice_message(["resolved", "dismissed"]),
        help_text="resolved: the disagreement was real and is settled; dismissed: it was none "
        "(its contradicts link is removed).",
    )
    reason = reason_field()
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
        error_messages=choice_message(list(DISPLAY_MODES)),
        help_text="marks (● ○ —), verbose (the numbers) or off; default MM_STARE_DISPLAY_MODE.",
    )
    decay = serializers.ChoiceField(
        choices=PRESET_NAMES,
        required=False,
        error_messages=choice_message(list(PRESET_NAMES)),
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
    metadata = MetadataFilter(
        required=False,
        allow_null=True,
        help_text="Only the memories whose metadata match this filter (docs/metadata.md), e.g. "
        'one customer\'s: {"customer": "orion"}.',
    )
    group_by = serializers.ChoiceField(
        choices=GROUPINGS,
        required=False,
        error_messages=choice_message(list(GROUPINGS)),
        help_text="category (a section per category, the default) or entity (a section per "
        "customer, person or product each memory mentions, each line with its date).",
    )

    def to_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of ``compiled_memory_file`` (besides whose file)."""
        data = dict(values)
        as_of = data.pop("as_of", None)
        return {"as_of": as_of, "options": compile_options(**data)}
