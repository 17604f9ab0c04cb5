"""Each adapter's declaration of an operation's arguments, generated from its serializer
(``memories.serializers``): the MCP tools' JSON Schemas, the commands' options and the
dashboard's forms. A field added to a serializer shows up in all of them.

What is generated describes the arguments (a schema, ``--help``, a form's widgets); the
serializer still parses and checks every value, so each message exists once. The one exception
is a ``typed`` form, whose cleaned values go straight to a service.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from collections.abc import Iterable, Mapping
from typing import Any

from django import forms
from django.core.management.base import CommandError
from rest_framework import serializers

from memories import metadata_filter
from memories.serializers import MetadataFilter, Rule, TextList, WrittenBound

Fields = Mapping[str, serializers.Field]

# --- Bounds ----------------------------------------------------------------------------------


def _from_validators(field: serializers.Field, name: str) -> Any:
    """A bound a validator carries (``memories.serializers.Rule``: ``minimum``, ``maximum``,
    ``max_length``), for the rules whose messages DRF's own bounds would replace."""
    values = (getattr(validator, name, None) for validator in field.validators)
    return next((value for value in values if value is not None), None)


def bounds(field: serializers.Field) -> tuple[Any, Any]:
    """A number field's smallest and largest values (None: no bound)."""
    low, high = getattr(field, "min_value", None), getattr(field, "max_value", None)
    if low is None:
        low = _from_validators(field, "minimum")
    if high is None:
        high = _from_validators(field, "maximum")
    return low, high


def text_pattern(field: serializers.Field) -> str | None:
    """The regular expression a text field's rule publishes (a type, an id), if any."""
    return _from_validators(field, "pattern")


def length_bounds(field: serializers.CharField) -> tuple[int | None, int | None]:
    """A text field's shortest and longest lengths: at least 1 when it may not be blank."""
    shortest = field.min_length or (None if field.allow_blank else 1)
    return shortest, field.max_length or _from_validators(field, "max_length")


def _input_fields(serializer_class: type[serializers.Serializer], exclude: Iterable[str]) -> Fields:
    return {
        name: field
        for name, field in serializer_class().fields.items()
        if name not in exclude and not field.read_only
    }


def takes_json(field: serializers.Field) -> bool:
    """Nested shapes, lists (but a ``TextList``: comma-separated) and free JSON objects: a
    command takes them as JSON text."""
    if isinstance(field, TextList):
        return False
    return isinstance(
        field, serializers.BaseSerializer | serializers.DictField | serializers.ListField
    )


# --- JSON Schema: the MCP tools' input schemas ------------------------------------------------


def json_schema(
    serializer_class: type[serializers.Serializer], exclude: Iterable[str] = ()
) -> dict[str, Any]:
    """The JSON Schema of a serializer's input: an object that refuses other properties, as
    ``StrictSerializer`` does."""
    return _fields_schema(_input_fields(serializer_class, exclude))


def object_schema(properties: dict[str, Any], required: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _fields_schema(fields: Fields) -> dict[str, Any]:
    return object_schema(
        {name: field_schema(field) for name, field in fields.items()},
        [name for name, field in fields.items() if field.required],
    )


def field_schema(field: serializers.Field) -> dict[str, Any]:
    """One field's schema: its type and bounds, ``null`` when allowed, its help text."""
    schema = _type_schema(field)
    if field.allow_null:
        schema = {"anyOf": [schema, {"type": "null"}]}
    if field.help_text:
        schema = {**schema, "description": str(field.help_text)}
    return schema


def _type_schema(field: serializers.Field) -> dict[str, Any]:
    if isinstance(field, serializers.BaseSerializer):
        return _fields_schema({n: f for n, f in field.fields.items() if not f.read_only})
    if isinstance(field, serializers.BooleanField):
        return {"type": "boolean"}
    if isinstance(field, serializers.ChoiceField):
        return {"type": "string", "enum": list(field.choices)}
    if isinstance(field, serializers.CharField):
        shortest, longest = length_bounds(field)
        return _without_none(
            type="string", minLength=shortest, maxLength=longest, pattern=text_pattern(field)
        )
    if isinstance(field, serializers.IntegerField | serializers.FloatField):
        low, high = bounds(field)
        kind = "integer" if isinstance(field, serializers.IntegerField) else "number"
        return _without_none(type=kind, minimum=low, maximum=high)
    if isinstance(field, WrittenBound):
        return {**field.schema, "examples": list(field.examples)}
    if isinstance(field, serializers.DateTimeField):
        return {"type": "string", "format": "date-time"}
    if isinstance(field, serializers.DictField):
        return {"type": "object"}
    if isinstance(field, serializers.ListField):
        return _without_none(
            type="array", items=_type_schema(field.child), maxItems=field.max_length
        )
    raise TypeError(f"no JSON Schema for a {type(field).__name__}: teach memories.shapes one")


def _without_none(**schema: Any) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if value is not None}


# --- Command options -------------------------------------------------------------------------


def option_name(name: str) -> str:
    """``min_s_score`` → ``--min-s-score``."""
    return "--" + name.replace("_", "-")


def add_options(
    parser: ArgumentParser,
    serializer_class: type[serializers.Serializer],
    *,
    positional: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> None:
    """One option per field, or a positional argument for the names in ``positional``. Values
    stay text (read them back with ``command_input``) so that the serializer's messages are
    the ones shown. A choice's values show in ``--help``; a boolean is ``--flag`` (true) or
    ``--flag true|false``; a nested shape or an object is JSON text."""
    positional = set(positional)
    for name, field in _input_fields(serializer_class, exclude).items():
        help_text = _command_help(field)
        if name in positional:
            parser.add_argument(name, help=help_text)
        else:
            parser.add_argument(option_name(name), dest=name, help=help_text, **_option(field))


def _option(field: serializers.Field) -> dict[str, Any]:
    if isinstance(field, serializers.BooleanField):
        return {
            "nargs": "?",
            "const": "true",
            "choices": ("true", "false"),
            "metavar": "true|false",
        }
    if isinstance(field, serializers.ChoiceField):
        return {"metavar": "{" + ",".join(field.choices) + "}"}
    if takes_json(field):
        return {"metavar": "JSON"}
    if isinstance(field, serializers.DateTimeField):
        return {"metavar": "ISO-8601"}
    if isinstance(field, TextList):
        return {"metavar": "A,B"}
    return {}


def _command_help(field: serializers.Field) -> str:
    return str(field.help_text or "").replace("%", "%%")  # argparse formats help with %


def command_input(
    serializer_class: type[serializers.Serializer], options: Mapping[str, Any]
) -> dict[str, Any]:
    """The fields given on the command line, as the serializer's input: options left out are
    left out, JSON options decoded."""
    data = {}
    for name, field in serializer_class().fields.items():
        value = options.get(name)
        if value is None:
            continue
        if takes_json(field):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise CommandError(
                    f"{option_name(name)}: must be JSON ({_json_kind(field)})"
                ) from exc
        data[name] = value
    return data


# --- Dashboard forms -------------------------------------------------------------------------


def form_class(
    serializer_class: type[serializers.Serializer],
    *,
    exclude: Iterable[str] = (),
    labels: Mapping[str, str] | None = None,
    choices: Mapping[str, list[tuple[str, str]]] | None = None,
    blank: Mapping[str, str] | None = None,
    typed: bool = False,
) -> type[forms.Form]:
    """A form with one optional field per serializer field (the serializer or the service says
    what is missing). ``labels`` and ``choices`` override a field's label or offer its values
    as a list; a choice field starts with a blank choice labelled ``blank[name]`` ("default"
    unless told). Numbers and datetimes stay text for the serializer to parse unless ``typed``,
    for a form whose cleaned values go straight to a service."""
    labels, choices, blank = labels or {}, choices or {}, blank or {}
    attrs: dict[str, Any] = {"__module__": __name__}
    for name, field in _input_fields(serializer_class, exclude).items():
        common = {
            "required": False,
            "label": labels.get(name, field.label),
            "help_text": str(field.help_text or ""),
        }
        if name in choices:
            attrs[name] = forms.ChoiceField(choices=choices[name], **common)
        elif isinstance(field, serializers.ChoiceField):
            values = [("", blank.get(name, "default")), *((v, v) for v in field.choices)]
            attrs[name] = forms.ChoiceField(choices=values, **common)
        else:
            attrs[name] = _form_field(field, typed, common)
    return type(forms.Form)(f"{serializer_class.__name__}Form", (forms.Form,), attrs)


def _form_rule(rule: Rule):
    """A serializer ``Rule`` as a form validator (its message, as a form error)."""

    def validate(value: Any) -> None:
        message = rule.check(value)
        if message:
            raise forms.ValidationError(message)

    return validate


def _form_field(field: serializers.Field, typed: bool, common: dict[str, Any]) -> forms.Field:
    if isinstance(field, serializers.BooleanField):
        return forms.BooleanField(**common)
    if isinstance(field, MetadataFilter):  # the JSON form, as text (parsed from text)
        return MetadataFilterField(**common) if typed else forms.CharField(**common)
    if takes_json(field):
        raise TypeError(f"no form field for a {type(field).__name__}: teach memories.shapes one")
    if typed and isinstance(field, serializers.IntegerField | serializers.FloatField):
        # The serializer's own rules check the value, so the page says what the API says; the
        # bounds still reach the browser's number input.
        low, high = bounds(field)
        kind = (
            forms.IntegerField if isinstance(field, serializers.IntegerField) else forms.FloatField
        )
        limits = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
        return kind(
            validators=[_form_rule(v) if isinstance(v, Rule) else v for v in field.validators],
            widget=forms.NumberInput(attrs=limits),
            **common,
        )
    if typed and isinstance(field, serializers.DateTimeField):
        return forms.DateTimeField(**common)
    return forms.CharField(**common)


class MetadataFilterField(forms.CharField):
    """A typed form's metadata filter: its JSON as text, cleaned to the parsed filter, each
    broken rule a form error named by its path (``seats.gte: …``), as the API words it."""

    def clean(self, value: Any) -> Any:
        text = super().clean(value)
        if not text:
            return None
        try:
            return metadata_filter.parse_text(text, "")
        except metadata_filter.FilterError as exc:
            raise forms.ValidationError(exc.messages()) from exc


def _json_kind(field: serializers.Field) -> str:
    return "a list" if isinstance(field, serializers.ListField) else "an object"
