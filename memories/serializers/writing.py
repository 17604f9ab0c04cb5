"""What a writer gives: a memory, its STARE scores, the entities and links it names."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from memories import rules
from memories.errors import ValidationFailed
from memories.kinds import (
    SOURCE_KINDS,
)
from memories.models import Memory
from memories.serializers.fields import (
    BLANK_MESSAGES,
    DATETIME_MESSAGES,
    ENTITY_TYPE,
    ENTITY_TYPE_HELP,
    LINK_TYPE,
    LINK_TYPE_HELP,
    MEM_ID,
    MEMORY_TEXT,
    PERSPECTIVE,
    PERSPECTIVE_HELP,
    Metadata,
    Rule,
    StrictSerializer,
    Text,
    choice_message,
    parse,
    unit_field,
)


class StareScoresInput(StrictSerializer):
    s = unit_field(required=False, allow_null=True)
    t = unit_field(required=False, allow_null=True)
    a = unit_field(required=False, allow_null=True)
    r = unit_field(required=False, allow_null=True)
    e = unit_field(required=False, allow_null=True)


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
    weight = unit_field(required=False, help_text="How strong, 0 to 1; default 1.")


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
        error_messages=choice_message(Memory.Category.values),
        help_text="Kind of memory; default fact.",
    )
    memory_type = serializers.ChoiceField(
        choices=Memory.MemoryType.choices,
        required=False,
        error_messages=choice_message(Memory.MemoryType.values),
        help_text="Default semantic.",
    )
    significance = unit_field(
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
        error_messages=choice_message(list(SOURCE_KINDS)),
        help_text="How the claim reached you: observed (first-hand), stated (someone said it), "
        "tool (a tool's output), inferred (you concluded it), hearsay (second-hand). Default: "
        "what the text's cues say, if anything.",
    )
    sig_self = unit_field(
        required=False,
        allow_null=True,
        help_text="How much it matters to you, 0 to 1 (significance, when you give none, is the "
        "larger of sig_self and sig_external).",
    )
    sig_external = unit_field(
        required=False, allow_null=True, help_text="How much it matters to others, 0 to 1."
    )
    metadata = Metadata(
        required=False,
        validators=[Rule(rules.metadata)],
        help_text="Any JSON object to keep with it: at most "
        f"{rules.METADATA_MAX_DEPTH} levels deep and {rules.METADATA_MAX_BYTES:,} bytes as "
        "JSON, finite numbers only, and no NUL character in any key or text (PostgreSQL "
        "cannot store one).",
    )
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
    return parse_items(items)


def parse_items(items: Any) -> list[dict[str, Any]]:
    """Each memory of a list (the remember arguments): every item's problems at once, named
    ``memories[<index>].<field>``."""
    if not isinstance(items, list):
        raise ValidationFailed.single("memories", "must be a list of memories.")
    errors: dict[str, list[str]] = {}
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
