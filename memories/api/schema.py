"""The OpenAPI schema says what the API enforces: each field's bounds from its rule (the
serializers' ``Rule``, whose own messages DRF's bounds would replace), and that request bodies
refuse unknown fields (``StrictSerializer``). Found missing by the property-based test: a client
generated from the schema sent what the engine then refused. Each answer's shape
(``memories.api.answers``) is a component named after it.

drf-spectacular finds these extensions once the module is imported (``memories.api.views``
imports it)."""

from __future__ import annotations

import inspect

from drf_spectacular.extensions import (
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.plumbing import ResolvedComponent

from memories.shapes import bounds, length_bounds, text_pattern


class StrictBody(OpenApiSerializerExtension):
    target_class = "memories.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
            # Exactly one of some fields (``one_of``: a link's to or entity, a saga's query or
            # thread): each branch requires one, and an object with both matches two.
            choices = getattr(self.target, "one_of", ())
            if choices:
                schema["oneOf"] = [{"required": [name]} for name in choices]
            # A field that needs another, given and not blank (``requires``): either the field
            # is absent, or the other is there (OpenAPI 3.0 has no ``dependencies``).
            needs = [
                {
                    "anyOf": [
                        {"not": {"required": [name]}},
                        {
                            "required": [needed],
                            "properties": {needed: {"type": "string", "minLength": 1}},
                        },
                    ]
                }
                for name, needed in getattr(self.target, "requires", {}).items()
            ]
            if needs:
                schema["allOf"] = needs
        fields = self.target.fields if hasattr(self.target, "fields") else {}
        for name, field in schema.get("properties", {}).items():
            # A list that may not be empty says so.
            if getattr(fields.get(name), "allow_empty", True) is False:
                field["minItems"] = max(field.get("minItems", 0), 1)
            # A field that lets a blank value through only for the service to refuse it with
            # its own message (a reason) is shown as "blank or not", which the engine does not
            # accept in the end: the schema shows the non-blank string alone.
            variants = field.get("oneOf", [])
            if len(variants) == 2 and variants[1] == {"type": "string", "maxLength": 0}:
                field.update(field.pop("oneOf")[0])
        return schema


class AnswerName(OpenApiSerializerExtension):
    """An answer's shape (``memories.api.answers``) is the component named after its class,
    less ``Answer`` (``MemoryDetailAnswer`` is ``MemoryDetail``), described by the first
    paragraph of its own docstring (the rest, and a parent's, are for the code's readers)."""

    target_class = "memories.api.answers.Answer"
    match_subclasses = True

    def _shape(self) -> type:
        return self.target if isinstance(self.target, type) else type(self.target)

    def get_name(self, auto_schema, direction) -> str:
        return self._shape().__name__.removesuffix("Answer")

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        said = inspect.cleandoc(vars(self._shape()).get("__doc__") or "").split("\n\n")[0]
        schema.pop("description", None)
        if said:
            schema["description"] = " ".join(said.split()).replace("``", "`")
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


#: Text PostgreSQL can store: no NUL character (``rules.storable_text``).
STORABLE = r"^[^\x00]*$"
#: ... and not blank once the white space around it is trimmed (what a required text needs).
NOT_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"


class TextBounds(_RuleBounds):
    target_class = "memories.serializers.Text"

    def bound(self, field, schema: dict) -> None:
        shortest, longest = length_bounds(field)
        if shortest:
            schema["minLength"] = shortest
        if longest:
            schema["maxLength"] = longest
        # A rule's own pattern (a type, an id) says it all; otherwise what every text obeys.
        schema["pattern"] = text_pattern(field) or (NOT_BLANK if shortest else STORABLE)


def _metadata_value(inner: dict) -> dict:
    """A JSON value whose texts PostgreSQL can store (no NUL), arrays and objects holding
    ``inner``."""
    return {
        "nullable": True,
        "anyOf": [
            {"type": "string", "pattern": STORABLE},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "array", "items": inner},
            {"type": "object", "additionalProperties": inner},
        ],
    }


#: A value inside a memory's metadata, as ``rules.metadata`` allows it: its texts and those of
#: the arrays and objects it holds have no NUL character (deeper ones, the depth and the size
#: are in the field's description: a recursive shape would not make a TypeScript type).
METADATA_VALUE = _metadata_value(_metadata_value({}))


class MetadataShape(OpenApiSerializerFieldExtension):
    """A memory's metadata: an object of ``MetadataValue``s (no NUL in any text of it)."""

    target_class = "memories.serializers.Metadata"

    def map_serializer_field(self, auto_schema, direction):
        component = ResolvedComponent(
            name="MetadataValue",
            type=ResolvedComponent.SCHEMA,
            object="MetadataValue",
            schema=METADATA_VALUE,
        )
        auto_schema.registry.register_on_missing(component)
        return {"type": "object", "additionalProperties": component.ref}


_FILTER_SCALAR = {
    "nullable": True,
    "anyOf": [{"type": "string", "pattern": STORABLE}, {"type": "number"}, {"type": "boolean"}],
}


def _filter_conditions(most: int) -> dict:
    """A key's condition in a metadata filter: a value (equal) or up to ``most`` operators."""
    operators = {
        "eq": _FILTER_SCALAR,
        "ne": _FILTER_SCALAR,
        "in": {"type": "array", "items": _FILTER_SCALAR, "minItems": 1, "maxItems": 100},
        "exists": {"type": "boolean"},
        **{
            name: {"anyOf": [{"type": "number"}, {"type": "string", "pattern": STORABLE}]}
            for name in ("gt", "gte", "lt", "lte")
        },
    }
    return {
        "anyOf": [
            _FILTER_SCALAR,
            {
                "type": "object",
                "properties": operators,
                "additionalProperties": False,
                "minProperties": 1,
                "maxProperties": most,
            },
        ]
    }


def _filter_keys(most: int, conditions: int) -> dict:
    """Keys (any text but NUL, at most ``metadata_filter.MAX_KEY_CHARS``: OpenAPI 3.0 cannot
    say it of a key) and their conditions."""
    return {
        "type": "object",
        "additionalProperties": _filter_conditions(conditions),
        "minProperties": 1,
        "maxProperties": most,
    }


#: A filter inside ``or``, ``and`` or ``not``: keys and their conditions (the engine takes
#: deeper nesting too, up to ``metadata_filter.MAX_DEPTH``; a recursive shape would not make a
#: TypeScript type).
_INNER_FILTER = _filter_keys(4, 2)
#: A metadata filter (``memories.metadata_filter``), as its schema can say it.
METADATA_FILTER = {
    **_filter_keys(16, 8),
    "properties": {
        "or": {"type": "array", "items": _INNER_FILTER, "minItems": 1, "maxItems": 4},
        "and": {"type": "array", "items": _INNER_FILTER, "minItems": 1, "maxItems": 4},
        "not": _INNER_FILTER,
    },
}


class MetadataFilterShape(OpenApiSerializerFieldExtension):
    """A filter on memories' metadata (docs/metadata.md)."""

    target_class = "memories.serializers.MetadataFilter"

    def map_serializer_field(self, auto_schema, direction):
        return {**METADATA_FILTER, **({"nullable": True} if self.target.allow_null else {})}


class WrittenBoundShape(OpenApiSerializerFieldExtension):
    """One end of a written range: a day or an instant (``serializers.WrittenBound``)."""

    target_class = "memories.serializers.WrittenBound"

    def map_serializer_field(self, auto_schema, direction):
        target = self.target
        return {
            **target.schema,
            "example": target.examples[0],
            **({"nullable": True} if target.allow_null else {}),
        }


#: The body of every error but a validation's: ``{"detail": "…"}`` (``presenters.error_response``).
DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
#: A validation error's body: each field that broke a rule, with the rules' messages.
VALIDATION = {
    "type": "object",
    "additionalProperties": {"type": "array", "items": {"type": "string"}},
    "description": "Each offending field (a path such as memories[3].text for an item) with "
    "the rules it broke; nothing was written.",
}
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "description": "Seconds to wait before trying again.",
    }
}


def _error(description: str, schema_name: str, *, retry: bool = False) -> dict:
    response = {
        "description": description,
        "content": {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{schema_name}"}}
        },
    }
    if retry:
        response["headers"] = RETRY_AFTER
    return response


#: What only some operations answer, by path and method: a capability switched off (403, its
#: setting named), a run in progress (409), and 404 for input that names what the caller cannot
#: see (a memory to supersede or link to, an entity to filter by, a node to start from:
#: ``errors.MissingReference``; the body names the field) or a thing not made yet.
SWITCHED_OFF = "The capability is switched off on this engine (the body names its setting)."
NAMES_NOTHING = (
    "The input names a memory, an entity or a thread the caller cannot see (the body names "
    "the field, as a validation error does)."
)
SOME_OPERATIONS = {
    ("/api/v1/consolidate", "post"): {
        "403": "A phase asked for is switched off on this engine (the body names its setting).",
        "409": "A run of this workspace is in progress.",
    },
    ("/api/v1/memories/{mem_id}/forget", "post"): {"409": "The memory is already forgotten."},
    ("/api/v1/entities", "post"): {"409": "A name or alias names another declared entity."},
    ("/api/v1/compiled/kept", "get"): {"404": "No compiled file kept for this agent yet."},
    ("/api/v1/memories", "post"): {"404": NAMES_NOTHING},
    ("/api/v1/memories", "get"): {"404": NAMES_NOTHING},
    ("/api/v1/memories/bulk", "post"): {"404": NAMES_NOTHING},
    ("/api/v1/memories/erase", "post"): {"404": NAMES_NOTHING},
    ("/api/v1/messages", "post"): {"404": NAMES_NOTHING},
    ("/api/v1/search", "post"): {"404": NAMES_NOTHING},
    ("/api/v1/traverse", "post"): {"403": SWITCHED_OFF, "404": NAMES_NOTHING},
    ("/api/v1/explain-path", "post"): {"403": SWITCHED_OFF, "404": NAMES_NOTHING},
    ("/api/v1/saga", "post"): {"403": SWITCHED_OFF, "404": NAMES_NOTHING},
    ("/api/v1/divergences", "get"): {"403": SWITCHED_OFF},
    ("/api/v1/divergences/{divergence_id}", "get"): {"403": SWITCHED_OFF},
}


def _needs_a_body(result: dict, body: dict) -> bool:
    """A body whose shape asks for a field (one of several, or a required one) is required."""
    for content in body.get("content", {}).values():
        ref = content.get("schema", {}).get("$ref", "")
        schema = result["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
        if schema.get("oneOf") or schema.get("required"):
            return True
    return False


def document_errors(result: dict, generator, request, public) -> dict:
    """A drf-spectacular postprocessing hook: every status an operation can answer besides its
    success, each with its JSON body, so that a client generated from the schema expects them.
    Every operation under authentication can answer 401 (no or a revoked token), 429 (a fair
    use limit, with Retry-After) and 503 (the database or the embedder away, with
    Retry-After); one with a body or a query 400 (each broken rule by field), one with a body
    413 (larger than MM_MAX_BODY_BYTES), one with a path parameter 404 (nothing of that id the
    caller may see). What only some operations answer (403 for a capability switched off, 409
    for a run in progress) their views declare."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault("ErrorDetail", DETAIL)
    components.setdefault("ValidationErrors", VALIDATION)
    components.setdefault(
        "NotFoundBody",
        {"oneOf": [{"$ref": "#/components/schemas/ErrorDetail"}, VALIDATION]},
    )
    for path, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            has_query = any(p.get("in") == "query" for p in parameters)
            has_path = "{" in path
            secured = bool(operation.get("security", result.get("security")))
            statuses = {}
            if operation.get("requestBody") or has_query:
                statuses["400"] = _error(
                    "Invalid input: each field and the rule it broke.", "ValidationErrors"
                )
            if secured:
                statuses["401"] = _error("No token, or an invalid or revoked one.", "ErrorDetail")
            if has_path:
                statuses["404"] = _error(
                    "Nothing of that id that the caller may see (another workspace's, another "
                    "agent's private one and a missing one are told apart by no one).",
                    "NotFoundBody",
                )
            body = operation.get("requestBody")
            if body and _needs_a_body(result, body):
                body["required"] = True
            if operation.get("requestBody"):
                statuses["413"] = _error(
                    "The body is larger than MM_MAX_BODY_BYTES.", "ErrorDetail"
                )
            if secured:
                statuses["429"] = _error(
                    "A fair use limit was reached: try again after Retry-After seconds.",
                    "ErrorDetail",
                    retry=True,
                )
                statuses["503"] = _error(
                    "The database or the embedder cannot answer now: try again after "
                    "Retry-After seconds.",
                    "ErrorDetail",
                    retry=True,
                )
            for status, description in SOME_OPERATIONS.get((path, method), {}).items():
                body = "ErrorDetail" if status == "403" else "NotFoundBody"
                statuses[status] = _error(description, body)
            for status, response in statuses.items():
                responses.setdefault(status, response)
    return result
