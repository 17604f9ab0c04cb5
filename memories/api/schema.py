"""The OpenAPI schema says what the API enforces: each field's bounds from its rule (the
serializers' ``Rule``, whose own messages DRF's bounds would replace), and that request bodies
refuse unknown fields (``StrictSerializer``). Found missing by the property-based test: a client
generated from the schema sent what the engine then refused.

drf-spectacular finds these extensions once the module is imported (``memories.api.views``
imports it)."""

from __future__ import annotations

from drf_spectacular.extensions import (
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)

from memories.shapes import bounds, length_bounds, text_pattern


class StrictBody(OpenApiSerializerExtension):
    target_class = "memories.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
        for field in schema.get("properties", {}).values():
            # A field that lets a blank value through only for the service to refuse it with
            # its own message (a reason) is shown as "blank or not", which the engine does not
            # accept in the end: the schema shows the non-blank string alone.
            variants = field.get("oneOf", [])
            if len(variants) == 2 and variants[1] == {"type": "string", "maxLength": 0}:
                field.update(field.pop("oneOf")[0])
        return schema


class _RuleBounds(OpenApiSerializerFieldExtension):
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        field = self.target
        schema = auto_schema._map_serializer_field(field, direction, bypass_extensions=True)
        self.bound(field, schema)
        return schema

    def bound(self, field, schema: dict) -> None:
        raise NotImplementedError


class NumberBounds(_RuleBounds):
    target_class = "memories.serializers.Number"

    def bound(self, field, schema: dict) -> None:
        low, high = bounds(field)
        if low is not None:
            schema["minimum"] = low
        if high is not None:
            schema["maximum"] = high


class IntegerBounds(NumberBounds):
    target_class = "memories.serializers.Integer"


class TextBounds(_RuleBounds):
    target_class = "memories.serializers.Text"

    def bound(self, field, schema: dict) -> None:
        shortest, longest = length_bounds(field)
        if shortest:
            schema["minLength"] = shortest
        if longest:
            schema["maxLength"] = longest
        if pattern := text_pattern(field):
            schema["pattern"] = pattern
