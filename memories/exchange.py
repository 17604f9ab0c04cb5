"""The export file's format (``meaning-memory export`` / ``import``): its name and version,
vectors as text, and each record's rules, checked for every line before an import writes
anything. The records are written by ``selectors.export`` and read by ``services.transfer``."""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np
from django.utils.dateparse import parse_datetime

from memories import rules
from memories.models import (
    EMBEDDING_DIMENSIONS,
    STARE_DIMENSIONS,
    Divergence,
    Entity,
    Link,
    Memory,
    ProvenanceEvent,
    Scope,
    Thread,
)

FORMAT = "meaning-memory-export"
FORMAT_VERSION = 1
RECORD_TYPES = ("scope", "agent", "entity", "memory", "link", "thread", "divergence")


def encode_vector(vector: Any) -> str | None:
    """A vector as base64 of its float32 values, little-endian: exact, and a third the size
    of decimal text."""
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4").astype(np.float32)


def parse_time(value: str | None) -> datetime | None:
    return None if value is None else parse_datetime(value)


# --- The rules of each record ------------------------------------------------------------------

Check = Callable[[Any], str | None]


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
        if value not in values:
            return f"{value!r} is not one of: {', '.join(values)}."
        return None

    return check


def _number(low: float | None = None, high: float | None = None) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "must be a number."
        if not math.isfinite(value):
            return "must be a finite number."
        if (low is not None and value < low) or (high is not None and value > high):
            return f"must be between {low} and {high} (got {value})."
        return None

    return check


def _count(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return "must be a whole number, 0 or more."
    return None


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false."


def _time(value: Any) -> str | None:
    if not isinstance(value, str) or parse_time(value) is None:
        return f"{value!r} is not an ISO 8601 date and time."
    if parse_time(value).tzinfo is None:
        return f"{value!r} has no time zone."
    return None


def _id(value: Any) -> str | None:
    return rules.public_id(value, "id")


def _json(value: Any) -> str | None:
    return rules.storable_json(value)


def _dict(value: Any) -> str | None:
    return _json(value) if isinstance(value, dict) else "must be an object."


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


def _scores(value: Any) -> str | None:
    if not isinstance(value, dict) or set(value) != set(STARE_DIMENSIONS):
        return f"must be an object with the keys {', '.join(STARE_DIMENSIONS)}."
    for dim, score in value.items():
        if score is not None and (message := _number(0, 1)(score)):
            return f"{dim}: {message}"
    return None


def _score_origins(value: Any) -> str | None:
    if not isinstance(value, dict) or set(value) != set(STARE_DIMENSIONS):
        return f"must be an object with the keys {', '.join(STARE_DIMENSIONS)}."
    known = [str(v) for v in Memory.ScoreOrigin.values]
    for dim, origin in value.items():
        if origin not in ("", None, *known):
            return f"{dim}: {origin!r} is not one of: {', '.join(known)}."
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
    "scope": {"name": _max(Scope, "name", blank=False), "kind": _choice(Scope.Kind)},
    "agent": {
        "name": _text(rules.AGENT_NAME_MAX, blank=False),
        "active": _bool,
        "scopes": _list_of(_max(Scope, "name", blank=False)),
    },
    "entity": {
        "entity_id": _id,
        "kind": _max(Entity, "kind", blank=False),
        "name": _max(Entity, "name", blank=False),
        "aliases": _list_of(_text(rules.ENTITY_NAME_MAX, blank=False)),
        "declared": _bool,
        "origin": _choice(Entity.Origin),
        "created_by_agent": _nullable(_text()),
        "created_by_user": _nullable(_text()),
        "merged_into": _nullable(_id),
        "history": _HISTORY,
    },
    "memory": {
        "origin": _id,
        "mem_id": _id,
        "scope": _max(Scope, "name", blank=False),
        "text": _text(blank=False),
        "category": _choice(Memory.Category),
        "memory_type": _choice(Memory.MemoryType),
        "source": _max(Memory, "source"),
        "significance": _number(0, 1),
        "pinned": _bool,
        "status": _choice(Memory.Status),
        "session": _max(Memory, "session"),
        "thread": _max(Memory, "thread"),
        "perspective": _max(Memory, "perspective", blank=False),
        "source_kind": lambda v: None if v == "" else _choice(Memory.SourceKind)(v),
        "sig_self": _nullable(_number(0, 1)),
        "sig_external": _nullable(_number(0, 1)),
        "attribution": _dict,
        "episode_text": _text(),
        "embedding_model": _max(Memory, "embedding_model"),
        "metadata": lambda v: rules.metadata(v) if isinstance(v, dict) else "must be an object.",
        "idempotency_key": _text(rules.IDEMPOTENCY_KEY_MAX),
        "relations_version": _nullable(_count),
        "created_at": _time,
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
        "kind": _max(Link, "kind", blank=False),
        "weight": _number(0, 1),
        "origin": _choice(Link.Origin),
        "agent": _nullable(_text()),
        "user": _nullable(_text()),
        "evidence": _dict,
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
        "size": _count,
        "sessions": _count,
        "cues": _list_of(_dict),
        "words": _dict,
        "members": _list_of(_fields({"memory": _id, "evidence": _dict})),
    },
    "divergence": {
        "divergence_id": _id,
        "first": _id,
        "second": _id,
        "link": _nullable(_id),
        "score": _number(),
        "detector": _max(Divergence, "detector", blank=False),
        "evidence": _dict,
        "status": _choice(Divergence.Status),
        "reason": _text(),
        "closed_by": _nullable(_text()),
        "closed_at": _nullable(_time),
        "created_at": _time,
    },
}


def record_problems(record: dict[str, Any]) -> list[str]:
    """What is wrong with one record of a known type (empty: nothing), field by field."""
    problems = []
    for name, rule in RECORDS[record["type"]].items():
        if name not in record:
            problems.append(f"{name}: is required.")
        elif message := rule(record[name]):
            problems.append(f"{name}: {message}")
    kind = record["type"]
    if kind == "memory" and not problems:
        for name in ("embedding", "episode_embedding"):
            if record.get(name) is not None and (message := _vector(record[name])):
                problems.append(f"{name}: {message}")
        if message := rules.window(
            parse_time(record["valid_from"]), parse_time(record["valid_until"])
        ):
            problems.append(f"valid_until: {message}")
    if (
        kind == "link"
        and not problems
        and (record["target_memory"] is None) == (record["target_entity"] is None)
    ):
        problems.append("target_memory: exactly one of target_memory and target_entity.")
    return problems
