"""The operations as code and the adapters call them: arguments checked by the operation's
input shape (``memories.serializers``: types, bounds and every rule that needs no stored
state), the typed command built from them (``memories.commands``), the service run with it.

A request's arguments are checked here once, whoever calls: an adapter passes them as they came
(``arguments``), code as keyword arguments. The services check only what depends on stored
state.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from memories.commands import Remember, Search, message_memories
from memories.errors import ValidationFailed
from memories.models import Agent
from memories.search import SearchHit, search
from memories.search.recipe import Recipe
from memories.selectors.reader import Reader
from memories.serializers import (
    MessagesInput,
    RememberInput,
    SearchInput,
    parse,
    parse_bulk,
    parse_items,
)
from memories.services.bulk import BulkResult, remember_many
from memories.services.remember import RememberResult, remember


def remember_command(arguments: Any, *, from_text: bool = False) -> Remember:
    """The command of remember's raw arguments (ValidationFailed naming each broken rule)."""
    return Remember.from_values(parse(RememberInput, arguments, from_text=from_text))


def memory_remember(*, agent: Agent, **arguments: Any) -> RememberResult:
    """Store a memory for ``agent`` (see ``services.remember.remember``): code's keyword
    arguments, each checked as given (``Remember.checked``)."""
    return remember(agent, Remember.checked(**arguments))


def remember_commands(items: Sequence[Any], *, request: bool = False) -> list[Remember]:
    """Each item's command; ``request``: ``items`` is a bulk request's body
    (``{"memories": [...]}``, at most ``MM_BULK_MAX_ITEMS``)."""
    values = parse_bulk(items) if request else parse_items(list(items))
    return [Remember.from_values(item) for item in values]


def memory_remember_bulk(
    *, agent: Agent, items: Sequence[Any], now: datetime | None = None
) -> list[BulkResult]:
    """Store many memories (each item the remember arguments; see ``services.bulk``), as code
    does: no consolidation run is queued after them (benchmarks and checks run their own)."""
    return remember_many(agent=agent, commands=remember_commands(items), now=now, announce=False)


def memory_search(
    reader: Reader,
    *,
    arguments: Any = None,
    from_text: bool = False,
    now: datetime | None = None,
    query_vector: np.ndarray | None = None,
    exact: bool = False,
    every_candidate: bool = False,
    recipe: Recipe | None = None,
    **given: Any,
) -> list[SearchHit]:
    """Search what ``reader`` sees (``memories.search``) with the arguments ``SearchInput``
    declares (``query``, ``limit``, the filters), given as ``arguments`` (a request's raw
    values, as they came) or as keyword arguments (code); ``from_text`` when the values came as
    text (a command line, a page's query string), otherwise each must have its JSON type.
    ``now``, ``query_vector``, ``exact``, ``every_candidate`` and ``recipe`` are for code only
    (see ``memories.search.ranking.search``)."""
    if arguments is None:
        arguments = given
    elif given:
        raise TypeError("memory_search takes arguments or keyword arguments, not both")
    command = Search.from_values(parse(SearchInput, arguments, from_text=from_text))
    return search(
        command,
        reader,
        now=now,
        query_vector=query_vector,
        exact=exact,
        every_candidate=every_candidate,
        recipe=recipe,
    )


def message_commands(arguments: Any, *, from_text: bool = False) -> list[Remember]:
    """The memories of a conversation's raw arguments (``MessagesInput``; ValidationFailed
    naming each broken rule as ``messages[i].field``)."""
    return message_memories(parse(MessagesInput, arguments, from_text=from_text))


def messages_remember(
    *, agent: Agent, arguments: Any, from_text: bool = False, announce: bool = True
) -> list[BulkResult]:
    """Store a conversation, a memory per message (``commands.message_memories``), as a bulk
    write: all or nothing, each message once; a consolidation run is queued after it (its
    extraction phase finds the facts in them when an extraction model is configured).
    What depends on stored state is named as the conversation's field (``scope``) or the
    message's (``messages[i].name`` for its speaker)."""
    commands = message_commands(arguments, from_text=from_text)
    try:
        return remember_many(agent=agent, commands=commands, announce=announce)
    except ValidationFailed as exc:
        raise type(exc)(
            {_message_field(name): messages for name, messages in exc.errors.items()}
        ) from None


#: A bulk write's field of an item, as a conversation names it.
_MESSAGE_FIELDS = {"text": "content", "attributed_to": "name", "created_at": "at"}


def _message_field(name: str) -> str:
    index, _, field = name.removeprefix("memories[").partition("].")
    if field in ("scope", "category", "session", "metadata"):
        return field
    return f"messages[{index}].{_MESSAGE_FIELDS.get(field, field)}"
