"""A LangGraph store (``langgraph.store.base.BaseStore``) whose items are the engine's memories,
written and read through the Python client with one agent's token (docs/frameworks.md).

What maps to what:

* An item is one active memory. Its ``metadata`` holds the item's place and its value:
  ``lg.namespace`` (the namespace's labels joined with ``.``, which LangGraph forbids inside a
  label, so the join is unambiguous), ``lg.key``, ``lg.prefix.1`` … ``lg.prefix.N`` (the first
  1 … N labels joined: a namespace prefix is an equality filter on one of them, since the
  engine's filter has no string prefix), ``lg.created_at`` (when the item was first put), and
  each top-level field of the value as ``value.<field>``: the value is read back from those.
* The memory's text is what the engine embeds and searches: the texts at the store's
  ``fields`` (LangGraph's path syntax, or the put's ``index`` list) when given; else the
  value's ``text`` or ``content`` field when it is non-blank text; else the value as JSON. It
  is cut at ``max_text_chars`` (the engine's default ``MM_MAX_TEXT_CHARS``); the value is kept
  whole in the metadata, which the engine holds to 65,536 bytes as JSON.
* ``put`` of a (namespace, key) that has an item writes a new memory that ``supersedes`` it:
  the old one stays, ``superseded``, in the history (``GET /api/v1/memories/<mem_id>``), and
  is no longer read. ``delete`` (a put of ``None``) is ``forget``: a soft delete, the memory
  and its history kept. Neither erases anything; ``MeaningMemory.erase`` does.
* ``get`` reads the current memory of (namespace, key) with the metadata filter. ``search``
  with a query is the engine's search (its rank order; ``score`` is the engine's score),
  without one the memory list (newest first); both filter on the namespace prefix and on
  ``filter`` (the value's top-level fields: a plain value is equality, ``$eq``, ``$ne``,
  ``$gt``, ``$gte``, ``$lt``, ``$lte`` and ``$in`` are the engine's operators).
  ``list_namespaces`` reads every item's namespace, page after page.
* Reads of a batch see the store as it was before the batch; its puts then run in order, the
  last of several to one (namespace, key) only (as LangGraph's in-memory store does).

The agent's token decides what the store sees: its workspace only, its private scope and the
shared scopes it belongs to. ``scope`` writes new items to a shared scope instead. TTLs are not
supported (``supports_ttl`` is false).
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable, Mapping
from contextlib import suppress
from datetime import datetime
from itertools import takewhile
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    _validate_namespace,
    get_text_at_path,
    validate_op_namespace,
)

from meaning_memory.client import (
    AsyncMeaningMemory,
    Conflict,
    MeaningMemory,
    MeaningMemoryError,
    NotFound,
)

__all__ = ["MeaningMemoryStore"]

NAMESPACE = "lg.namespace"
KEY = "lg.key"
CREATED = "lg.created_at"
PREFIX = "lg.prefix."
VALUE = "value."
SEPARATOR = "."
#: The engine's bounds: a memory's metadata as JSON, a list page, a memory's text by default.
METADATA_MAX_BYTES = 65_536
PAGE = 100
MAX_TEXT_CHARS = 10_000
#: LangGraph's filter operators and the engine's.
OPERATORS = {
    "$eq": "eq",
    "$ne": "ne",
    "$gt": "gt",
    "$gte": "gte",
    "$lt": "lt",
    "$lte": "lte",
    "$in": "in",
}
#: How often a put looks again when another writer replaced the item at the same moment.
PUT_TRIES = 3

#: One call of the client: its method's name, positional and keyword arguments.
Call = tuple[str, tuple, dict]
Work = Generator[Call, Any, Any]


def _joined(labels: tuple[str, ...]) -> str:
    return SEPARATOR.join(labels)


def _place(namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    return {NAMESPACE: _joined(namespace), KEY: key}


def _prefix_filter(prefix: tuple[str, ...]) -> dict[str, Any]:
    """The memories of the store under ``prefix`` (all of them for the empty prefix)."""
    if not prefix:
        return {NAMESPACE: {"exists": True}}
    return {f"{PREFIX}{len(prefix)}": _joined(prefix)}


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | bool | int | float)


def _value_filter(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """A SearchOp's ``filter`` as the engine's metadata filter on the value's fields."""
    if not given:
        return {}
    if not isinstance(given, Mapping):
        raise ValueError(f"filter: must be a dict of the value's fields (got {given!r}).")
    found: dict[str, Any] = {}
    for field, wanted in given.items():
        if isinstance(wanted, Mapping):
            conditions = {}
            for operator, operand in wanted.items():
                if operator not in OPERATORS:
                    raise ValueError(
                        f"filter.{field}: {operator!r} is not an operator; use one of "
                        f"{', '.join(OPERATORS)}."
                    )
                conditions[OPERATORS[operator]] = operand
            found[VALUE + str(field)] = conditions
        elif _plain(wanted):
            found[VALUE + str(field)] = wanted
        else:
            raise ValueError(
                f"filter.{field}: compares a field's plain value (text, a number, true, false "
                f"or null), not a {type(wanted).__name__}."
            )
    return found


def _text(value: Mapping[str, Any], fields: list[str] | None, max_chars: int) -> str:
    """What the engine embeds and searches for ``value`` (the module's docstring)."""
    whole = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if fields is not None:
        parts = [part for path in fields for part in get_text_at_path(dict(value), path)]
    else:
        named = [value.get(name) for name in ("text", "content")]
        parts = [next((t for t in named if isinstance(t, str) and t.strip()), whole)]
    text = "\n".join(part.strip() for part in parts if part.strip()) or whole
    return text[:max_chars]


def _metadata(op: PutOp, created_at: str | None) -> dict[str, Any]:
    metadata = _place(op.namespace, op.key)
    for depth in range(1, len(op.namespace) + 1):
        metadata[f"{PREFIX}{depth}"] = _joined(op.namespace[:depth])
    if created_at:
        metadata[CREATED] = created_at
    metadata.update({VALUE + field: part for field, part in op.value.items()})
    size = len(json.dumps(metadata, ensure_ascii=False).encode("utf-8"))
    if size > METADATA_MAX_BYTES:
        raise ValueError(
            f"value: must be at most {METADATA_MAX_BYTES} bytes as JSON once stored with its "
            f"namespace and key (got {size})."
        )
    return metadata


def _is_item(memory: Any) -> bool:
    metadata = memory.metadata
    return isinstance(metadata.get(NAMESPACE), str) and isinstance(metadata.get(KEY), str)


def _first_put(memory: Any) -> datetime:
    created = memory.metadata.get(CREATED)
    if isinstance(created, str):
        try:
            return datetime.fromisoformat(created)
        except ValueError:
            pass
    return memory.created_at


def _item(memory: Any, *, searched: bool = False, score: float | None = None) -> Item:
    """The LangGraph item a memory (a listed ``Memory`` or a ``SearchHit``) holds."""
    metadata = memory.metadata
    fields = {
        "namespace": tuple(metadata[NAMESPACE].split(SEPARATOR)),
        "key": metadata[KEY],
        "value": {name[len(VALUE) :]: v for name, v in metadata.items() if name.startswith(VALUE)},
        "created_at": _first_put(memory),
        "updated_at": memory.created_at,
    }
    return SearchItem(**fields, score=score) if searched else Item(**fields)


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"match_conditions: unknown match_type {condition.match_type!r}.")
    return all(wanted in ("*", label) for label, wanted in pairs)


def _check(op: Op, index: int) -> None:
    """The namespace rules LangGraph's own methods apply, for ops given to ``batch`` too."""
    if not isinstance(op, GetOp | PutOp | SearchOp | ListNamespacesOp):
        raise ValueError(f"ops[{index}]: not a LangGraph store operation ({type(op).__name__}).")
    validate_op_namespace(op)
    if isinstance(op, PutOp) and op.value is not None:
        _validate_namespace(op.namespace)
        if not isinstance(op.value, Mapping):
            raise ValueError(
                f"ops[{index}].value: must be a dict with text keys "
                f"(got {type(op.value).__name__})."
            )
        for field in op.value:
            if not isinstance(field, str):
                raise ValueError(f"ops[{index}].value: its keys must be text (got {field!r}).")
    if isinstance(op, PutOp) and op.ttl is not None:
        raise NotImplementedError(
            f"ops[{index}].ttl: this store keeps items until they are deleted (no TTL)."
        )


class MeaningMemoryStore(BaseStore):
    """LangGraph's long-term memory store on a served engine, as one agent (its token).

    ``client`` serves ``batch`` and the sync methods, ``async_client`` ``abatch`` and the
    ``a…`` methods; give the ones you use. ``scope`` writes new items to a shared scope the
    agent belongs to (default: its private scope); ``category`` is their category (default
    ``fact``); ``fields`` are the value's paths whose text the engine embeds and searches.
    """

    supports_ttl = False

    def __init__(
        self,
        client: MeaningMemory | None = None,
        *,
        async_client: AsyncMeaningMemory | None = None,
        scope: str | None = None,
        category: str | None = None,
        fields: list[str] | None = None,
        max_text_chars: int = MAX_TEXT_CHARS,
        reason: str = "deleted through the LangGraph store",
    ) -> None:
        if client is None and async_client is None:
            raise TypeError("client, async_client: MeaningMemoryStore needs one of them (or both).")
        if max_text_chars < 1:
            raise ValueError(f"max_text_chars: must be at least 1 (got {max_text_chars}).")
        if not reason.strip():
            raise ValueError("reason: must not be blank (a forget records why).")
        self.client, self.async_client = client, async_client
        self.scope, self.category, self.fields = scope, category, fields
        self.max_text_chars, self.reason = max_text_chars, reason

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:
            raise TypeError(
                "MeaningMemoryStore.batch: this store has no client; give "
                "MeaningMemoryStore(client=MeaningMemory(url, token))."
            )
        return _drive(self.client, self._batch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.async_client is None:
            raise TypeError(
                "MeaningMemoryStore.abatch: this store has no async_client; give "
                "MeaningMemoryStore(async_client=AsyncMeaningMemory(url, token))."
            )
        return await _adrive(self.async_client, self._batch(list(ops)))

    # The work, written once for both clients: each step yields the client call it needs and
    # gets its answer back (or its error thrown in).

    def _batch(self, ops: list[Op]) -> Work:
        for index, op in enumerate(ops):
            _check(op, index)
        results: list[Result] = [None] * len(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for index, op in enumerate(ops):
            if isinstance(op, GetOp):
                results[index] = yield from self._get(op)
            elif isinstance(op, SearchOp):
                results[index] = yield from self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[index] = yield from self._namespaces(op)
            else:
                puts.pop((op.namespace, str(op.key)), None)
                puts[(op.namespace, str(op.key))] = op
        for op in puts.values():
            yield from self._put(op)
        return results

    def _current(self, namespace: tuple[str, ...], key: str, limit: int) -> Work:
        """The active memories of (namespace, key), newest first: one, unless two writers put
        it at the same moment."""
        page = yield ("list", (), {"metadata": _place(namespace, key), "limit": limit})
        return [memory for memory in page.results if _is_item(memory)]

    def _get(self, op: GetOp) -> Work:
        found = yield from self._current(op.namespace, str(op.key), 1)
        return _item(found[0]) if found else None

    def _put(self, op: PutOp) -> Work:
        key = str(op.key)
        if op.value is None:
            for memory in (yield from self._current(op.namespace, key, PAGE)):
                yield from self._forget(memory.mem_id, self.reason)
            return None
        fields = self.fields if op.index is None or op.index is False else op.index
        text = _text(op.value, fields, self.max_text_chars)
        for attempt in range(PUT_TRIES):
            old = yield from self._current(op.namespace, key, PAGE)
            first = _first_put(old[0]).isoformat() if old else None
            written = {"metadata": _metadata(op._replace(key=key), first)}
            if self.category:
                written["category"] = self.category
            if old:
                written["supersedes"] = old[0].mem_id  # the new one goes into its scope
            elif self.scope:
                written["scope"] = self.scope
            try:
                yield ("remember", (text,), written)
            except (Conflict, NotFound):
                # Another writer replaced or deleted it since it was read: read it again.
                if attempt == PUT_TRIES - 1:
                    raise
                continue
            for extra in old[1:]:
                yield from self._forget(extra.mem_id, "replaced through the LangGraph store")
            return None

    def _forget(self, mem_id: str, reason: str) -> Work:
        # Forgotten or replaced by another writer meanwhile: gone all the same.
        with suppress(Conflict, NotFound):
            yield ("forget", (mem_id, reason), {})

    def _search(self, op: SearchOp) -> Work:
        if op.limit <= 0:
            return []
        metadata = {**_prefix_filter(op.namespace_prefix), **_value_filter(op.filter)}
        if op.query:
            wanted = {"metadata": metadata, "limit": op.offset + op.limit}
            found = yield ("search", (op.query,), wanted)
            hits = [hit for hit in found if _is_item(hit)][op.offset :]
            return [_item(hit, searched=True, score=hit.explanation.score) for hit in hits]
        memories = yield from self._listed(metadata, op.offset + op.limit)
        return [_item(memory, searched=True) for memory in memories[op.offset :]]

    def _listed(self, metadata: dict[str, Any], wanted: int | None) -> Work:
        """The store's memories the filter keeps, newest first: ``wanted`` of them, or all."""
        limit = PAGE if wanted is None else max(1, min(PAGE, wanted))
        page = yield ("list", (), {"metadata": metadata, "limit": limit})
        memories = [memory for memory in page.results if _is_item(memory)]
        while page.next and (wanted is None or len(memories) < wanted):
            page = yield ("list", (page.next,), {})
            memories += [memory for memory in page.results if _is_item(memory)]
        return memories if wanted is None else memories[:wanted]

    def _namespaces(self, op: ListNamespacesOp) -> Work:
        conditions = op.match_conditions or ()
        metadata = _prefix_filter(())
        for condition in conditions:
            fixed = tuple(takewhile(lambda label: label != "*", condition.path))
            if condition.match_type == "prefix" and fixed:
                metadata = _prefix_filter(fixed)  # the engine narrows; the rest is read here
        found = {
            tuple(memory.metadata[NAMESPACE].split(SEPARATOR))
            for memory in (yield from self._listed(metadata, None))
        }
        kept = {ns for ns in found if all(_matches(c, ns) for c in conditions)}
        if op.max_depth is not None:
            kept = {ns[: op.max_depth] for ns in kept}
        return sorted(kept)[op.offset : op.offset + op.limit]


def _drive(client: MeaningMemory, work: Work) -> Any:
    """Run ``work`` with the sync client: each call it yields made, its answer sent back."""
    try:
        call = next(work)
        while True:
            name, args, kwargs = call
            try:
                answer = getattr(client, name)(*args, **kwargs)
            except MeaningMemoryError as error:
                call = work.throw(error)
            else:
                call = work.send(answer)
    except StopIteration as done:
        return done.value


async def _adrive(client: AsyncMeaningMemory, work: Work) -> Any:
    """The same with the async client, each call awaited."""
    try:
        call = next(work)
        while True:
            name, args, kwargs = call
            try:
                answer = await getattr(client, name)(*args, **kwargs)
            except MeaningMemoryError as error:
                call = work.throw(error)
            else:
                call = work.send(answer)
    except StopIteration as done:
        return done.value
