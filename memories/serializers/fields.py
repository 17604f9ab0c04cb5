"""The parts every input shape is made of: strict serializers, typed fields that never
convert a value of the wrong type, the rules they carry, and parsing input into values or one
ValidationFailed."""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from rest_framework import serializers

from memories import metadata_filter, rules
from memories.errors import ValidationFailed
from memories.kinds import (
    CUSTOM_TYPE_PREFIX,
    DERIVED_LINK_TYPES,
    ENTITY_TYPES,
    LINK_TYPES,
    PERSPECTIVES,
)


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


def choice_message(choices: list[str]) -> dict[str, str]:
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
    """true or false (from text also 1/0, yes/no…); a blank value is neither (DRF would read
    it as null, and so as the default, in silence)."""

    json_types = (bool,)
    default_error_messages = {"invalid": "must be true or false."}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and not data.strip():
            self.fail("invalid", input=data)
        return super().to_internal_value(data)


class Metadata(serializers.DictField):
    """A memory's metadata: any JSON object the rule ``rules.metadata`` allows (its schema says
    what: ``memories.api.schema.MetadataShape``)."""


class MetadataFilter(serializers.DictField):
    """A filter on memories' metadata (``memories.metadata_filter``: equality, ``in``, ranges,
    ``exists``, ``or`` and ``not``); from text (a command line, a query string), the same JSON
    as one string. Its value is the parsed filter; each broken rule is named by its path."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            if self.context.get("from_text", False):
                return metadata_filter.parse_text(data, path="")
            return metadata_filter.parse(data, path="")
        except metadata_filter.FilterError as exc:
            raise serializers.ValidationError(exc.messages()) from exc


class TextList(serializers.ListField):
    """A list of strings; from text (a command line, a query string), comma-separated."""

    def to_internal_value(self, data: Any) -> Any:
        if self.context.get("from_text", False) and isinstance(data, str):
            data = [part.strip() for part in data.split(",") if part.strip()]
        return super().to_internal_value(data)


class WrittenBound(serializers.DateTimeField):
    """One end of a range of when memories were written (``created_at``): a day
    (``2026-03-01``, a whole day in UTC) or an instant (an ISO 8601 timestamp). Its value is
    where the range starts (``end=False``: at or after it) or the instant it ends *before*
    (``end=True``: through the whole day given, or up to and including the instant given)."""

    default_error_messages = {
        "invalid": "must be a day (2026-03-01) or an ISO 8601 timestamp (2026-03-01T09:00:00Z)."
    }

    #: Its JSON Schema (the MCP tools' and the OpenAPI schema's): text, a day or an instant.
    schema = {
        "anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]
    }
    examples = ("2026-03-01", "2026-03-01T09:00:00Z")

    def __init__(self, *, end: bool, **kwargs: Any) -> None:
        self.end = end
        super().__init__(**kwargs)

    def to_internal_value(self, value: Any) -> datetime.datetime | None:
        if isinstance(value, str) and (day := DAY_TEXT.fullmatch(value.strip())):
            try:
                start = datetime.datetime(*map(int, day.groups()), tzinfo=datetime.UTC)
            except ValueError:
                self.fail("invalid")
            return self._after(start, datetime.timedelta(days=1)) if self.end else start
        instant = super().to_internal_value(value)
        return self._after(instant, datetime.timedelta(microseconds=1)) if self.end else instant

    @staticmethod
    def _after(instant: datetime.datetime, step: datetime.timedelta) -> datetime.datetime | None:
        """The end just after ``instant``; None (no end) past the last instant Python holds."""
        try:
            return instant + step
        except OverflowError:
            return None


DAY_TEXT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def unit_field(**kwargs: Any) -> Number:
    return Number(
        error_messages=NUMBER_MESSAGES,
        min_value=None,
        max_value=None,
        validators=[UNIT_INTERVAL],
        **kwargs,
    )


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


def reason_field() -> Text:
    """Blank goes through to the service, whose message says why a reason is needed;
    ``min_length`` (never broken by a reason that is not blank) tells the published shapes that
    one is expected."""
    return Text(
        allow_blank=True,
        trim_whitespace=True,
        min_length=1,
        help_text="Why (required; kept in the history).",
    )


LINK_TYPE_FILTER = TextList(
    child=Text(validators=[Rule(rules.link_type_filter, pattern=rules.type_pattern(LINK_TYPES))]),
    required=False,
    allow_null=True,
    help_text="Follow only links of these types (any type: "
    + ", ".join(LINK_TYPES)
    + f", {CUSTOM_TYPE_PREFIX}<name>).",
)


NODE_ID = Rule(rules.node_id, pattern=ID_PATTERN)


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
