"""The operations' requests, each declared once as a frozen, typed command.

An adapter builds a command from its input once the input shape (``memories.serializers``) has
checked types, bounds and every rule that needs no stored state; code builds one directly
(``memories.operations`` checks keyword arguments the same way). A service takes the command
whole and checks only what depends on stored state: a scope the agent belongs to, a memory it
can see, a window that must follow the superseded one's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from django.conf import settings

from memories import metadata_filter, rules
from memories.errors import Errors
from memories.models import DEFAULT_SIGNIFICANCE, STARE_DIMENSIONS, Memory


@dataclass(frozen=True)
class EntityRef:
    """An entity a writer names: its name as the text says it, and its type."""

    name: str
    kind: str


@dataclass(frozen=True)
class LinkTo:
    """A link a writer asks for: to a memory (its mem_id), of a type, with a weight."""

    to: str
    kind: str
    weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class Remember:
    """One memory to store. A field named as a ``Memory`` column and not resolved from stored
    state (``RESOLVED``) is stored as given: a new memory field is declared here, on the model
    and on the input shape."""

    text: str
    category: str = Memory.Category.FACT
    memory_type: str = Memory.MemoryType.SEMANTIC
    significance: float | None = None
    #: The writer's scores by STARE dimension (the dimensions it could not judge left out).
    stare_scores: Mapping[str, float] = field(default_factory=dict)
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    observed_at: datetime | None = None
    created_at: datetime | None = None
    #: Who says so; None: the writing agent's name.
    source: str | None = None
    #: The scope's name; blank: the agent's private scope.
    scope: str = ""
    supersedes: str = ""
    session: str = ""
    thread: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    idempotency_key: str = ""
    entities: tuple[EntityRef, ...] = ()
    links: tuple[LinkTo, ...] = ()
    perspective: str = ""
    attributed_to: str = ""
    source_kind: str = ""
    sig_self: float | None = None
    sig_external: float | None = None

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Remember:
        """The command of an input shape's checked values (``RememberInput``): absent, None and
        blank mean the default; the text is kept without the spaces around it."""
        given = {name: value for name, value in values.items() if value is not None}
        given["text"] = given.get("text", "").strip()
        given["stare_scores"] = {
            key: value for key, value in given.get("stare_scores", {}).items() if value is not None
        }
        given["entities"] = tuple(
            EntityRef(e["name"].strip(), e["type"]) for e in given.get("entities", ())
        )
        given["links"] = tuple(
            LinkTo(link["to"], link["type"], float(link.get("weight", 1.0)))
            for link in given.get("links", ())
        )
        for name in ("category", "memory_type", "perspective", "source_kind"):
            if not given.get(name):
                given.pop(name, None)
        return cls(**given)

    @classmethod
    def checked(cls, **values: Any) -> Remember:
        """The command of code's keyword arguments, each value checked as given by the rules
        ``RememberInput`` applies to a request (``memories.rules``) and an import applies to a
        file's memory (``memories.exchange``): one ValidationFailed naming every broken rule."""
        errors = Errors()
        unknown = sorted(set(values) - {f.name for f in fields(cls)})
        for name in unknown:
            errors.add(name, "is not a known field.")
        text = values.get("text")
        errors.check("text", rules.memory_text(text if isinstance(text, str) else None))
        for name, choices in (
            ("category", Memory.Category.values),
            ("memory_type", Memory.MemoryType.values),
        ):
            errors.check(name, rules.choice(values.get(name), choices))
        for name in ("source", "session", "thread", "idempotency_key"):
            errors.check(name, rules.storable_text(values.get(name)))
        errors.check("idempotency_key", rules.idempotency_key(values.get("idempotency_key")))
        errors.check("metadata", rules.metadata(values.get("metadata")))
        errors.check("perspective", rules.perspective(values.get("perspective")))
        errors.check("source_kind", rules.source_kind(values.get("source_kind")))
        errors.check("attributed_to", rules.entity_reference(values.get("attributed_to")))
        for name in ("significance", "sig_self", "sig_external"):
            errors.check(name, rules.unit_interval(values.get(name)))
        for key, value in (values.get("stare_scores") or {}).items():
            if key not in STARE_DIMENSIONS:
                errors.add(f"stare_scores.{key}", "is not a STARE dimension (s, t, a, r, e).")
            else:
                errors.check(f"stare_scores.{key}", rules.unit_interval(value))
        errors.check("created_at", rules.not_in_future(values.get("created_at")))
        errors.check(
            "valid_until", rules.window(values.get("valid_from"), values.get("valid_until"))
        )
        for i, item in enumerate(_listed(errors, "entities", values)):
            errors.check(f"entities[{i}].name", rules.entity_name(item.get("name")))
            errors.check(f"entities[{i}].type", rules.entity_type(item.get("type")))
        for i, item in enumerate(_listed(errors, "links", values)):
            weight = item.get("weight", 1.0)
            errors.check(f"links[{i}].to", rules.mem_id(item.get("to")))
            errors.check(f"links[{i}].type", rules.link_type(item.get("type")))
            errors.check(
                f"links[{i}].weight",
                rules.unit_interval(weight) if weight is not None else "must be a number.",
            )
        errors.raise_if_any()
        return cls.from_values(values)

    @property
    def stored_significance(self) -> float:
        """Significance stays the ranking signal: without one, the larger of what the memory
        means to its writer and to others (docs/stare.md, Asymmetry)."""
        if self.significance is not None:
            return self.significance
        given = [v for v in (self.sig_self, self.sig_external) if v is not None]
        return max(given) if given else DEFAULT_SIGNIFICANCE


#: What each list argument holds, as its error says.
_SHAPES = {"entities": '{"name": ..., "type": ...}', "links": '{"to": mem_id, "type": ...}'}


def _listed(errors: Errors, name: str, values: Mapping[str, Any]) -> list[dict]:
    """The items of a list argument (entities, links), at most its setting's number; an item
    that is not an object is checked as an empty one."""
    items = values.get(name)
    if items is None:
        return []
    if not isinstance(items, list):
        errors.add(name, f"must be a list of {_SHAPES[name]}.")
        return []
    setting = f"MM_MAX_{name.upper()}_PER_MEMORY"
    if len(items) > (limit := getattr(settings, setting)):
        errors.add(name, f"must hold at most {limit} {name} (got {len(items)}; {setting}).")
        return []
    return [item if isinstance(item, dict) else {} for item in items]


#: The fields of ``Remember`` that the service resolves from stored state or from other fields
#: before they are stored; every other field named as a memory column is stored as given.
RESOLVED = frozenset(
    {
        "significance",
        "stare_scores",
        "valid_from",
        "created_at",
        "source",
        "scope",
        "supersedes",
        "entities",
        "links",
        "perspective",
        "attributed_to",
        "source_kind",
        "metadata",
    }
)

#: What a memory stores as its writer gave it (``Remember``'s other fields).
STORED_AS_GIVEN = tuple(
    f.name
    for f in fields(Remember)
    if f.name not in RESOLVED and f.name in {c.name for c in Memory._meta.concrete_fields}
)


@dataclass(frozen=True, kw_only=True)
class Search:
    """One search: the query, how many hits, and the filters (``memories.search.filters``
    turns them into the ranking statement's WHERE fragments; ``memories.search.relational``
    resolves those that read links and entities). None: no such filter."""

    query: str
    limit: int = 10
    expand: str | None = None
    as_of: datetime | None = None
    currently_valid: bool | None = None
    #: Written at or after ``written_from`` and before ``written_until`` (the serializer makes
    #: the end it is given exclusive: ``serializers.WrittenBound``).
    written_from: datetime | None = None
    written_until: datetime | None = None
    category: str | None = None
    memory_type: str | None = None
    source: str | None = None
    session: str | None = None
    thread: str | None = None
    perspective: str | None = None
    source_kind: str | None = None
    attributed_to: str | None = None
    metadata: metadata_filter.Filter | None = None
    min_s_score: float | None = None
    min_t_score: float | None = None
    min_a_score: float | None = None
    min_r_score: float | None = None
    min_e_score: float | None = None
    related_to: str | None = None
    link_types: tuple[str, ...] | None = None
    min_r: int | None = None
    entity: str | None = None

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Search:
        """The command of ``SearchInput``'s checked values."""
        given = dict(values)
        given["query"] = given["query"].strip()
        if given.get("limit") is None:
            given.pop("limit", None)
        if given.get("link_types") is not None:
            given["link_types"] = tuple(given["link_types"])
        return cls(**given)


#: The column filters of a search that match a memory's column of the same name exactly.
COLUMN_FILTERS = (
    "category",
    "memory_type",
    "source",
    "session",
    "thread",
    "perspective",
    "source_kind",
)


#: A conversation's roles and what each makes of its message: whom the memory is for
#: (perspective) and how its claim reached the writer (source_kind).
MESSAGE_ROLES = {
    "user": ("user", "stated"),
    "assistant": ("self", "stated"),
    "system": ("self", "stated"),
    "tool": ("self", "tool"),
}


def message_memories(values: Mapping[str, Any]) -> list[Remember]:
    """The memories of a conversation (``MessagesInput``'s checked values): one episodic memory
    per message, in order, with its session, its time (``at``: when it was said and written),
    its speaker (the text starts ``"<name>: "`` and the claim is attributed to the name), whom
    it is for and how it was said (``MESSAGE_ROLES``), the conversation's and the message's
    metadata with ``role`` and ``speaker``, and an idempotency key of the message: its ``id``
    in the session, or what it says (role, name, time and content), so that sending a
    conversation again, or a longer one, stores each message once."""
    session = values["session"].strip()
    shared = dict(values.get("metadata") or {})
    memories = []
    for message in values["messages"]:
        role, name = message["role"], (message.get("name") or "").strip()
        content = message["content"].strip()
        at = message.get("at")
        perspective, source_kind = MESSAGE_ROLES[role]
        metadata = {**shared, **(message.get("metadata") or {})}
        metadata.setdefault("role", role)
        if name:
            metadata.setdefault("speaker", name)
        given_id = (message.get("id") or "").strip()
        identity = [session, given_id] if given_id else [session, role, name, at, content]
        memories.append(
            Remember(
                text=message_text(name, content),
                category=values.get("category") or Memory.Category.OBSERVATION,
                memory_type=Memory.MemoryType.EPISODIC,
                created_at=at,
                observed_at=at,
                scope=values.get("scope") or "",
                session=session,
                metadata=metadata,
                idempotency_key="message:" + _digest(identity),
                perspective=perspective,
                attributed_to=name,
                source_kind=source_kind,
            )
        )
    return memories


def message_text(name: str, content: str) -> str:
    """A message's memory text: its content, after its speaker's name when it has one."""
    return f"{name}: {content}" if name else content


def _digest(identity: list[Any]) -> str:
    text = json.dumps(identity, default=lambda value: value.isoformat(), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
