"""Field rules shared by the services and the input serializers, so each message exists once.

Each function returns the message for a broken rule, or None.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from memories.kinds import (
    CUSTOM_TYPE_PREFIX,
    DERIVED_LINK_TYPES,
    ENTITY_TYPES,
    LINK_TYPES,
    PERSPECTIVES,
    SOURCE_KINDS,
)
from memories.relational.gazetteer import normalize


def unit_interval(value: float | None) -> str | None:
    if value is None:
        return None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return f"must be between 0 and 1 (got {value})."
    return None


def memory_text(value: str | None) -> str | None:
    """Not blank, and at most MM_MAX_TEXT_CHARS characters as given (spaces around it count:
    the published schema's ``maxLength`` counts them too)."""
    text = (value or "").strip()
    if not text:
        return "must not be empty."
    if len(value) > settings.MM_MAX_TEXT_CHARS:
        return f"must be at most {settings.MM_MAX_TEXT_CHARS} characters (got {len(value)})."
    return storable_text(text)


def message_content(value: str | None) -> str | None:
    """A conversation's message: as a memory's text, with room before it for its speaker's name
    (``"<name>: "``, ``commands.message_text``)."""
    longest = message_content_max()
    if (value or "").strip() and len(value) > longest:
        return f"must be at most {longest} characters (got {len(value)})."
    return memory_text(value)


def message_content_max() -> int:
    """The longest message of a conversation: a memory's longest text less room for its
    speaker's name."""
    return settings.MM_MAX_TEXT_CHARS - ENTITY_NAME_MAX - 2


def episode_text(value: str) -> str | None:
    """A memory's episode (``services.episodes``): the texts of at most MM_EPISODE_WINDOW
    memories before it, one a line, each at most MM_MAX_TEXT_CHARS."""
    top = settings.MM_EPISODE_WINDOW * (settings.MM_MAX_TEXT_CHARS + 1)
    if len(value) > top:
        return (
            f"must be at most {top} characters (got {len(value)}): MM_EPISODE_WINDOW texts of "
            "at most MM_MAX_TEXT_CHARS."
        )
    return storable_text(value)


def reason_given(value: str | None, why: str) -> str | None:
    """A curator's or agent's reason for a change: not blank (``why`` says what it should say)."""
    return None if (value or "").strip() else f"must not be empty: {why}"


def search_query(value: str | None) -> str | None:
    text = (value or "").strip()
    if not text:
        return "must not be empty."
    if len(value) > settings.MM_SEARCH_MAX_QUERY_CHARS:
        return (
            f"must be at most {settings.MM_SEARCH_MAX_QUERY_CHARS:,} characters "
            f"(got {len(value):,}; MM_SEARCH_MAX_QUERY_CHARS)."
        )
    return storable_text(text)


def query_words(count: int) -> str | None:
    """A search reads at most MM_SEARCH_MAX_WORDS distinct words (after stemming and stop
    words): each is a term of its keyword match."""
    if count > settings.MM_SEARCH_MAX_WORDS:
        return (
            f"has {count:,} distinct words; a search reads at most "
            f"{settings.MM_SEARCH_MAX_WORDS:,} (MM_SEARCH_MAX_WORDS): ask in fewer words."
        )
    return None


def storable_text(value: str | None) -> str | None:
    """PostgreSQL text holds valid UTF-8 without NUL characters."""
    if value is None:
        return None
    if "\x00" in value:
        return "must not contain NUL (\\u0000) characters."
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode (no lone surrogates)."
    return None


#: How deep and how large a memory's ``metadata`` may be (its JSON text, in UTF-8 bytes).
METADATA_MAX_DEPTH = 32
METADATA_MAX_BYTES = 65_536


def storable_json(value: object, max_depth: int = METADATA_MAX_DEPTH) -> str | None:
    """Every string inside a JSON value, keys included, is storable text, and no object or
    list is nested more than ``max_depth`` deep (the top one is 1). Checked without recursion,
    so that a value nested thousands deep is an answer, not a crash."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if message := storable_text(item):
                return message
            continue
        if isinstance(item, float) and not math.isfinite(item):
            return "must hold only finite numbers (JSON has no infinity or NaN)."
        if isinstance(item, dict):
            parts: list[object] = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            parts = list(item)
        else:
            continue
        if depth > max_depth:
            return f"must not be nested more than {max_depth} levels deep."
        stack.extend((part, depth + 1) for part in parts)
    return None


def metadata(value: object) -> str | None:
    """A memory's metadata: storable, at most ``METADATA_MAX_DEPTH`` deep and
    ``METADATA_MAX_BYTES`` long as JSON."""
    if message := storable_json(value):
        return message
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if size > METADATA_MAX_BYTES:
        return f"must be at most {METADATA_MAX_BYTES} bytes as JSON (got {size})."
    return None


def choice(value: str | None, choices: list[str]) -> str | None:
    if value and value not in choices:
        return f"{value!r} is not one of: {', '.join(choices)}."
    return None


def search_limit(value: int | None) -> str | None:
    if value is not None and not 1 <= value <= settings.MM_SEARCH_MAX_LIMIT:
        return f"must be between 1 and {settings.MM_SEARCH_MAX_LIMIT} (got {value})."
    return None


#: How many links a traversal follows at most from where it starts.
TRAVERSAL_MAX_DEPTH = 3
#: How many nodes a traversal returns at most.
TRAVERSAL_MAX_NODES = 500


def traversal_depth(value: int | None) -> str | None:
    if value is not None and not 1 <= value <= TRAVERSAL_MAX_DEPTH:
        return f"must be between 1 and {TRAVERSAL_MAX_DEPTH} (got {value})."
    return None


def traversal_limit(value: int | None) -> str | None:
    if value is not None and not 1 <= value <= TRAVERSAL_MAX_NODES:
        return f"must be between 1 and {TRAVERSAL_MAX_NODES} (got {value})."
    return None


def node_id(value: object) -> str | None:
    """Where a traversal starts or ends: a mem_id or an entity id (16 hex characters)."""
    return public_id(value, "mem_id or entity id")


def not_in_future(value: datetime | None) -> str | None:
    if value is not None and value > timezone.now():
        return "must not be in the future."
    return None


def window(valid_from: datetime | None, valid_until: datetime | None) -> str | None:
    """The message for ``valid_until`` when the window is empty or reversed."""
    if valid_from and valid_until and not valid_from < valid_until:
        return "must be after valid_from."
    return None


#: The smallest budget of a compiled memory file: room for its header and a few lines.
MIN_COMPILE_BUDGET = 200


def compile_budget(value: int) -> str | None:
    top = settings.MM_COMPILE_MAX_BUDGET_TOKENS
    if isinstance(value, bool) or not isinstance(value, int):
        return "must be an integer."
    if not MIN_COMPILE_BUDGET <= value <= top:
        return f"must be between {MIN_COMPILE_BUDGET} and {top} tokens (got {value})."
    return None


IDEMPOTENCY_KEY_MAX = 200


def idempotency_key(value: str | None) -> str | None:
    if value is not None and len(value) > IDEMPOTENCY_KEY_MAX:
        return f"must be at most {IDEMPOTENCY_KEY_MAX} characters (got {len(value)})."
    return None


#: An agent's name, short enough for its private scope's name (``private:<name>``, 120 at most).
AGENT_NAME_MAX = 112
SCOPE_NAME_MAX = 120


#: A workspace's slug: it names the workspace in URLs (``/w/<slug>/``) and in commands.
WORKSPACE_SLUG_MAX = 64
WORKSPACE_SLUG = re.compile(r"[-a-zA-Z0-9_]+")


def workspace_slug(value: str) -> str | None:
    if not value:
        return "must not be empty."
    if len(value) > WORKSPACE_SLUG_MAX:
        return f"must be at most {WORKSPACE_SLUG_MAX} characters (got {len(value)})."
    if not WORKSPACE_SLUG.fullmatch(value):
        return "must be letters, digits, hyphens and underscores only (it is used in URLs)."
    return None


def agent_name(value: str) -> str | None:
    if not value.strip():
        return "must not be empty."
    if len(value) > AGENT_NAME_MAX:
        return f"must be at most {AGENT_NAME_MAX} characters (got {len(value)})."
    return storable_text(value)


def scope_name(value: str) -> str | None:
    if value.startswith("private:"):
        return "names starting with 'private:' are reserved."
    if len(value) > SCOPE_NAME_MAX:
        return f"must be at most {SCOPE_NAME_MAX} characters (got {len(value)})."
    return storable_text(value)


#: A ``custom:<name>`` type's name: lower-case words joined by ``_`` or ``-``.
CUSTOM_TYPE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
#: What a ``mem_id``, an entity id or a link id looks like.
PUBLIC_ID_PATTERN = r"^[0-9a-f]{16}$"


def type_pattern(known: tuple[str, ...]) -> str:
    """The published pattern of a type: one of ``known``, or ``custom:<name>``."""
    return (
        "^("
        + "|".join(re.escape(k) for k in known)
        + ")$|^"
        + re.escape(CUSTOM_TYPE_PREFIX)
        + CUSTOM_TYPE_NAME.pattern.removeprefix("^")
    )


ENTITY_NAME_MAX = 200


def _typed(value: str | None, known: tuple[str, ...], what: str, typed: bool = True) -> str | None:
    if not isinstance(value, str) or not value:
        return "must not be empty."
    if value in known:
        return None
    if value.startswith(CUSTOM_TYPE_PREFIX) and CUSTOM_TYPE_NAME.match(
        value[len(CUSTOM_TYPE_PREFIX) :]
    ):
        return None
    return (
        f"{value!r} is not {what}{' type' if typed else ''}: one of {', '.join(known)}, or "
        f"{CUSTOM_TYPE_PREFIX}<name> (lower-case letters, digits, _ and -, at most 64)."
    )


def entity_type(value: str | None) -> str | None:
    return _typed(value, ENTITY_TYPES, "an entity")


def perspective(value: str | None) -> str | None:
    """Whom a memory is for: one of PERSPECTIVES, or ``custom:<name>`` (None: not said)."""
    if value is None:
        return None
    return _typed(value, PERSPECTIVES, "a perspective", typed=False)


def source_kind(value: str | None) -> str | None:
    if value is None or value in SOURCE_KINDS:
        return None
    return f"{value!r} is not a source kind: one of {', '.join(SOURCE_KINDS)}."


def link_type(value: str | None) -> str | None:
    """A type a writer may give a link: ``supersedes`` and ``follows`` are the engine's (from
    ``supersedes`` on remember and from sessions)."""
    if value in DERIVED_LINK_TYPES:
        return (
            f"{value!r} links are made by the engine (supersedes: remember with `supersedes`; "
            "follows: the order of a session's memories)."
        )
    return _typed(value, tuple(t for t in LINK_TYPES if t not in DERIVED_LINK_TYPES), "a link")


def link_type_filter(value: str | None) -> str | None:
    """A link type to search by: any type, the engine's included."""
    return _typed(value, LINK_TYPES, "a link")


def entity_name(value: str | None) -> str | None:
    """An entity's name or alias, as a writer gives it (remember, bulk, the entities API, an
    imported file): not blank, storable, holding a letter or a digit, and within an entity
    row's columns once normalised too (casefolding makes "ß" two letters)."""
    text = (value or "").strip() if isinstance(value, str) else ""
    if not text:
        return "must not be empty."
    if len(value) > ENTITY_NAME_MAX:
        return f"must be at most {ENTITY_NAME_MAX} characters (got {len(value)})."
    if message := storable_text(text):
        return message
    key = normalize(text)
    if not key:
        return "must hold a letter or a digit."
    if len(key) > ENTITY_NAME_MAX:
        return f"must be at most {ENTITY_NAME_MAX} characters once normalised (got {len(key)})."
    return None


def public_id(value: object, what: str = "mem_id") -> str | None:
    """The shape of a ``mem_id``, an entity id or a link id: 16 hex characters."""
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{16}", value):
        article = "an" if what[0] in "aeiou" else "a"
        return f"{value!r} is not {article} {what} (16 hex characters)."
    return None


def mem_id(value: object) -> str | None:
    return public_id(value, "mem_id")


def mem_id_or_blank(value: object) -> str | None:
    return mem_id(value) if value else None


#: A name that holds a letter or a digit (``relations.normalize`` keeps something of it), and
#: no NUL: what the OpenAPI schema publishes for an entity's name and aliases.
NAME_PATTERN = r"^[^\x00]*[^\W_][^\x00]*$"


def min_connections(value: int | None) -> str | None:
    if value is not None and value < 0:
        return f"must be 0 or more (got {value})."
    return None


def entity_reference(value: str | None) -> str | None:
    """An entity to search by: its id, or a name or alias (at most ENTITY_NAME_MAX)."""
    if not value:
        return None
    if len(value) > ENTITY_NAME_MAX:
        return f"must be at most {ENTITY_NAME_MAX} characters (got {len(value)})."
    return storable_text(value)


def entity_type_or_blank(value: str | None) -> str | None:
    return entity_type(value) if value else None


PAGE_SIZE_DEFAULT = 20
PAGE_SIZE_MAX = 100


def page_number(value: int | None) -> str | None:
    if value is not None and value < 1:
        return f"must be 1 or more (got {value})."
    return None


def page_size(value: int | None) -> str | None:
    if value is not None and not 1 <= value <= PAGE_SIZE_MAX:
        return f"must be between 1 and {PAGE_SIZE_MAX} (got {value})."
    return None
