"""Each record's rules, checked for every line before an import writes anything."""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable
from datetime import UTC
from typing import Any

from django.db import connection, models

from memories import rules
from memories.exchange.format import (
    FORMAT_VERSION,
    RECORD_TYPES,
    parse_time,
    shown,
)
from memories.models import (
    EMBEDDING_DIMENSIONS,
    PLAIN_FIELDS,
    STARE_DIMENSIONS,
    Divergence,
    Entity,
    Link,
    Memory,
    ProvenanceEvent,
    Scope,
    Thread,
    Workspace,
)

# --- The rules of each record ------------------------------------------------------------------
#
# A field the remember arguments also have is checked by the same rule (``memories.rules``), so
# a file brings nothing that remember, bulk or the REST API would refuse. The rest are checked
# against the columns they fill.

Check = Callable[[Any], str | None]


def _string(rule: Check | None = None) -> Check:
    """A string, then ``rule`` (one of ``memories.rules``), or storable text without one."""

    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return "must be a string."
        return (rule or rules.storable_text)(value)

    return check


def _text(max_length: int | None = None, *, blank: bool = True) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return "must be a string."
        if not blank and not value.strip():
            return "must not be empty."
        if max_length is not None and len(value) > max_length:
            return f"must be at most {max_length} characters (got {len(value)})."
        return rules.storable_text(value)

    return check


def _max(model: type, name: str, *, blank: bool = True) -> Check:
    """A text no longer than the model's column."""
    return _text(model._meta.get_field(name).max_length, blank=blank)


def _choice(choices: Any) -> Check:
    values = [str(value) for value in choices.values]

    def check(value: Any) -> str | None:
        if not isinstance(value, str) or value not in values:
            return f"{shown(value)} is not one of: {', '.join(values)}."
        return None

    return check


def _number(rule: Callable[[float], str | None] | None = None) -> Check:
    """A finite number (an integer too large for a float is not one), then ``rule``."""

    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "must be a number."
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            return "must be a finite number."
        return rule(value) if rule else None

    return check


_UNIT = _number(rules.unit_interval)


def _count(model: type, name: str) -> Check:
    """A whole number the model's integer column holds."""
    field = model._meta.get_field(name)
    low, high = connection.ops.integer_field_range(field.get_internal_type())
    low = max(low or 0, 0)

    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"must be a whole number from {low} to {high}."
        return None

    return check


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false."


def _time(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{shown(value)} is not an ISO 8601 date and time."
    try:
        parsed = parse_time(value)
        if parsed is not None and parsed.tzinfo is not None:
            parsed.astimezone(UTC)  # stored in UTC: the first and last days may not fit
    except (ValueError, OverflowError):
        return f"{shown(value)} is not a valid date and time."
    if parsed is None:
        return f"{shown(value)} is not an ISO 8601 date and time."
    if parsed.tzinfo is None:
        return f"{shown(value)} has no time zone."
    return None


def _written_at(value: Any) -> str | None:
    """When a memory was written: a time, and not in the future (remember's ``created_at``)."""
    return _time(value) or rules.not_in_future(parse_time(value))


def _id(value: Any) -> str | None:
    return rules.public_id(value, "id")


def _json(value: Any) -> str | None:
    return rules.storable_json(value)


def _dict(value: Any) -> str | None:
    return _json(value) if isinstance(value, dict) else "must be an object."


def _small_dict(value: Any) -> str | None:
    """What the engine writes itself as a small object (a link's or a divergence's evidence, a
    thread's cues and words, a memory's attribution): at most as large as a memory's metadata,
    so a file cannot bring megabytes that every read of it would then serve."""
    return rules.metadata(value) if isinstance(value, dict) else "must be an object."


def _list_of(check: Check) -> Check:
    def checked(value: Any) -> str | None:
        if not isinstance(value, list):
            return "must be a list."
        for i, item in enumerate(value):
            if message := check(item):
                return f"[{i}] {message}"
        return None

    return checked


def _vector(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be base64 text."
    try:
        size = len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return "is not base64."
    if size != 4 * EMBEDDING_DIMENSIONS:
        return f"must hold {EMBEDDING_DIMENSIONS} float32 values (got {size} bytes)."
    return None


def _nullable(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def _entity_name(value: Any) -> str | None:
    """An entity's name or alias as remember and the entities API take it (one of
    ``memories.rules``)."""
    return _string(rules.entity_name)(value)


def _scores(value: Any) -> str | None:
    if not isinstance(value, dict) or set(value) != set(STARE_DIMENSIONS):
        return f"must be an object with the keys {', '.join(STARE_DIMENSIONS)}."
    for dim, score in value.items():
        if score is not None and (message := _UNIT(score)):
            return f"{dim}: {message}"
    return None


def _score_origins(value: Any) -> str | None:
    if not isinstance(value, dict) or set(value) != set(STARE_DIMENSIONS):
        return f"must be an object with the keys {', '.join(STARE_DIMENSIONS)}."
    known = [str(v) for v in Memory.ScoreOrigin.values]
    for dim, origin in value.items():
        if origin not in ("", None, *known):
            return f"{dim}: {shown(origin)} is not one of: {', '.join(known)}."
    return None


def _counts(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must be an object."
    for kind, count in value.items():
        if kind not in RECORD_TYPES:
            return f"{shown(kind)} is not one of: {', '.join(RECORD_TYPES)}."
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            return f"{kind}: must be a whole number, 0 or more."
    return None


_EVENT: dict[str, Check] = {
    "action": _choice(ProvenanceEvent.Action),
    "agent": _nullable(_text()),
    "user": _nullable(_text()),
    "old": _dict,
    "new": _dict,
    "reason": _text(),
    "created_at": _time,
}


def _fields(spec: dict[str, Check]) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return "must be an object."
        for name, rule in spec.items():
            if name not in value:
                return f"{name}: is required."
            if message := rule(value[name]):
                return f"{name}: {message}"
        return None

    return check


_HISTORY = _list_of(_fields(_EVENT))

RECORDS: dict[str, dict[str, Check]] = {
    "header": {
        "workspace": _string(rules.workspace_slug),
        "workspace_name": _max(Workspace, "name"),
        "since": _nullable(_time),
        "vectors": _bool,
        "embedding_model": _max(Memory, "embedding_model"),
    },
    "end": {"counts": _counts},
    # A private scope's name is checked with its kind (``record_problems``).
    "scope": {"name": _max(Scope, "name", blank=False), "kind": _choice(Scope.Kind)},
    "agent": {
        "name": _string(rules.agent_name),
        "active": _bool,
        "scopes": _list_of(_string(rules.scope_name)),
    },
    "entity": {
        "entity_id": _id,
        "kind": _string(rules.entity_type),
        "name": _entity_name,
        "aliases": _list_of(_entity_name),
        "declared": _bool,
        "origin": _choice(Entity.Origin),
        "typed_by": _choice(Entity.TypedBy),
        "created_by_agent": _nullable(_text()),
        "created_by_user": _nullable(_text()),
        "merged_into": _nullable(_id),
        "history": _HISTORY,
    },
    "memory": {
        "origin": _id,
        "mem_id": _id,
        "scope": _max(Scope, "name", blank=False),
        "text": _string(rules.memory_text),
        "category": _choice(Memory.Category),
        "memory_type": _choice(Memory.MemoryType),
        "source": _max(Memory, "source"),
        "significance": _UNIT,
        "pinned": _bool,
        "status": _choice(Memory.Status),
        "session": _max(Memory, "session"),
        "thread": _max(Memory, "thread"),
        "perspective": _string(rules.perspective),
        "source_kind": lambda v: None if v == "" else _string(rules.source_kind)(v),
        "sig_self": _nullable(_UNIT),
        "sig_external": _nullable(_UNIT),
        "attribution": _small_dict,
        "episode_text": _string(rules.episode_text),
        "embedding_model": _max(Memory, "embedding_model"),
        "metadata": lambda v: rules.metadata(v) if isinstance(v, dict) else "must be an object.",
        "idempotency_key": _string(lambda v: rules.idempotency_key(v) or rules.storable_text(v)),
        "relations_version": _nullable(_count(Memory, "relations_version")),
        "created_at": _written_at,
        "observed_at": _nullable(_time),
        "valid_from": _nullable(_time),
        "valid_until": _nullable(_time),
        "scores": _scores,
        "score_origins": _score_origins,
        "attributed_to": _nullable(_id),
        "follows": _nullable(_id),
        "superseded_by": _nullable(_id),
        "history": _HISTORY,
    },
    "link": {
        "link_id": _id,
        "source": _id,
        "target_memory": _nullable(_id),
        "target_entity": _nullable(_id),
        "kind": _string(rules.link_type_filter),
        "weight": _UNIT,
        "origin": _choice(Link.Origin),
        "agent": _nullable(_text()),
        "user": _nullable(_text()),
        "evidence": _small_dict,
        "created_at": _time,
        "removed_at": _nullable(_time),
    },
    "thread": {
        "thread_id": _id,
        "scope": _max(Scope, "name", blank=False),
        "label": _max(Thread, "label"),
        "title": _max(Thread, "title", blank=False),
        "status": _choice(Thread.Status),
        "first_seen": _time,
        "last_seen": _time,
        "size": _count(Thread, "size"),
        "sessions": _count(Thread, "sessions"),
        "cues": _list_of(_small_dict),
        "words": _small_dict,
        "members": _list_of(_fields({"memory": _id, "evidence": _small_dict})),
    },
    "divergence": {
        "divergence_id": _id,
        "first": _id,
        "second": _id,
        "link": _nullable(_id),
        "score": _number(),
        "detector": _max(Divergence, "detector", blank=False),
        "evidence": _small_dict,
        "status": _choice(Divergence.Status),
        "reason": _text(),
        "closed_by": _nullable(_text()),
        "closed_at": _nullable(_time),
        "created_at": _time,
    },
}


def _column(model: type, name: str) -> Check:
    """What a column holds, for a plain field with no rule of its own above."""
    field = model._meta.get_field(name)
    if isinstance(field, models.BooleanField):
        check = _bool
    elif isinstance(field, models.FloatField):
        check = _number()
    elif isinstance(field, models.IntegerField):
        check = _count(model, name)
    elif isinstance(field, models.JSONField):
        check = _dict
    elif isinstance(field, models.CharField | models.TextField):
        check = _max(model, name) if field.max_length else _text()
    else:
        raise TypeError(f"no check for a {type(field).__name__}: give {name} one in RECORDS")
    return _nullable(check) if field.null else check


#: A memory's plain fields with no rule above (added after this format's first version) may be
#: missing from a file written before they were: the import gives them their default.
OPTIONAL = {
    "memory": frozenset(PLAIN_FIELDS) - set(RECORDS["memory"]),
    # Files written before entities kept who typed them: the import infers it.
    "entity": frozenset({"typed_by"}),
}
RECORDS["memory"].update({name: _column(Memory, name) for name in OPTIONAL["memory"]})


def record_problems(record: dict[str, Any]) -> dict[str, str]:
    """What is wrong with one record of a known type, field by field (empty: nothing)."""
    problems = {}
    kind = record["type"]
    for name, rule in RECORDS[kind].items():
        if name not in record:
            if name not in OPTIONAL.get(kind, ()):
                problems[name] = "is required."
        elif message := rule(record[name]):
            problems[name] = message
    if problems:
        return problems
    if kind == "header" and (
        isinstance(record["version"], bool) or record["version"] != FORMAT_VERSION
    ):
        problems["version"] = (
            f"format version {shown(record['version'])}: this engine reads version "
            f"{FORMAT_VERSION}."
        )
    elif kind == "scope":
        private = record["kind"] == Scope.Kind.PRIVATE
        name = record["name"]
        message = (
            rules.agent_name(name.removeprefix("private:"))
            if private and name.startswith("private:")
            else "must be private:<agent> for a private scope."
            if private
            else rules.scope_name(name)
        )
        if message:
            problems["name"] = message
    elif kind == "memory":
        for name in ("embedding", "episode_embedding"):
            if record.get(name) is not None and (message := _vector(record[name])):
                problems[name] = message
        if message := rules.window(
            parse_time(record["valid_from"]), parse_time(record["valid_until"])
        ):
            problems["valid_until"] = message
    elif kind == "link" and (record["target_memory"] is None) == (record["target_entity"] is None):
        problems["target_memory"] = "exactly one of target_memory and target_entity."
    return problems
