"""What both clients send (sans I/O): each call is (method, path, body or query, how to retry,
the answer's model: the schema's shape of the operation's success answer, or ``markdown``)."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from meaning_memory.client.answers import (
    Compiled,
    Divergence,
    DivergencePage,
    Entity,
    EntityDetail,
    EntityPage,
    Erasure,
    History,
    MemoryDetail,
    MemoryPage,
    Path,
    Readiness,
    Run,
    Saga,
    SourceDetail,
    SourcePage,
    StoredLink,
    Traversal,
)
from meaning_memory.client.results import BulkResult, SearchResults


def _fields(**given: Any) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


def _with_key(item: dict[str, Any]) -> dict[str, Any]:
    """A memory to write, with an idempotency key of its own unless it has one."""
    return item if item.get("idempotency_key") else {**item, "idempotency_key": uuid.uuid4().hex}


def _with_content_key(item: dict[str, Any]) -> dict[str, Any]:
    """A batch's memory, with a key derived from what it says unless it has one: a batch sent
    again (a retry, a script run twice) stores nothing new, as the raw API's batch without keys
    does; two items alike in every field are one memory."""
    if item.get("idempotency_key"):
        return item
    canonical = json.dumps(
        {k: v for k, v in item.items() if k != "idempotency_key"},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return {**item, "idempotency_key": "content-" + hashlib.sha256(canonical.encode()).hexdigest()}


def _query_value(value: Any) -> Any:
    """A filter as the query string takes it: true/false, and the metadata filter (an
    object) as JSON text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value


def _list_params(cursor: str | None, filters: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The list's URL and query: a ``next`` link as given, or the filters."""
    if cursor and cursor.startswith(("http://", "https://")):
        return cursor, {}
    params = {k: _query_value(v) for k, v in filters.items()}
    if cursor:
        params["cursor"] = cursor
    return "/api/v1/memories", _fields(**params)


class _Calls:
    """What both clients send: each call is (method, path, body or query, how to retry, the
    answer's model)."""

    @staticmethod
    def remember(text: str, **fields: Any) -> tuple:
        body = _with_key({"text": text, **_fields(**fields)})
        return "POST", "/api/v1/memories", {"json": body}, "always", MemoryDetail

    @staticmethod
    def bulk_remember(memories: list[dict[str, Any]]) -> tuple:
        body = {"memories": [_with_content_key(dict(item)) for item in memories]}
        return "POST", "/api/v1/memories/bulk", {"json": body}, "always", BulkResult

    @staticmethod
    def remember_messages(session: str, messages: list[dict[str, Any]], **fields: Any) -> tuple:
        # Each message is stored once (its id, or what it says): a retry stores nothing new.
        body = {"session": session, "messages": messages, **_fields(**fields)}
        return "POST", "/api/v1/messages", {"json": body}, "always", BulkResult

    @staticmethod
    def erase_matching(
        entity: str | None, metadata: dict[str, Any] | None, reason: str, dry_run: bool
    ) -> tuple:
        body = _fields(entity=entity, metadata=metadata, reason=reason, dry_run=dry_run)
        retry = "always" if dry_run else "unsent"  # a preview changes nothing
        return "POST", "/api/v1/memories/erase", {"json": body}, retry, Erasure

    @staticmethod
    def search(query: str, **filters: Any) -> tuple:
        body = {"query": query, **_fields(**filters)}
        return "POST", "/api/v1/search", {"json": body}, "always", SearchResults

    @staticmethod
    def get(mem_id: str) -> tuple:
        return "GET", f"/api/v1/memories/{mem_id}", {}, "always", MemoryDetail

    @staticmethod
    def feedback(mem_id: str, action: str, reason: str) -> tuple:
        body = {"action": action, "reason": reason}
        path = f"/api/v1/memories/{mem_id}/feedback"
        return "POST", path, {"json": body}, "unsent", MemoryDetail

    @staticmethod
    def forget(mem_id: str, reason: str) -> tuple:
        path = f"/api/v1/memories/{mem_id}/forget"
        return "POST", path, {"json": {"reason": reason}}, "unsent", MemoryDetail

    @staticmethod
    def erase(mem_id: str, reason: str) -> tuple:
        path = f"/api/v1/memories/{mem_id}/erase"
        return "POST", path, {"json": {"reason": reason}}, "unsent", Erasure

    @staticmethod
    def list(cursor: str | None, filters: dict[str, Any]) -> tuple:
        url, params = _list_params(cursor, filters)
        # No params at all for a next link: httpx would replace its query with empty ones.
        return "GET", url, {"params": params} if params else {}, "always", MemoryPage

    @staticmethod
    def compiled(**options: Any) -> tuple:
        params = {"format": "json", **{k: _query_value(v) for k, v in _fields(**options).items()}}
        return "GET", "/api/v1/compiled", {"params": params}, "always", Compiled

    @staticmethod
    def readiness() -> tuple:
        return "GET", "/api/v1/readiness", {}, "always", Readiness

    @staticmethod
    def readiness_history(capability: str | None, runs: int | None) -> tuple:
        params = _fields(capability=capability, runs=runs)
        return "GET", "/api/v1/readiness/history", {"params": params}, "always", History


def markdown(text: str) -> str:
    """An answer that is Markdown, not JSON (the client reads its text)."""
    return text


def _query(**given: Any) -> dict[str, Any]:
    return {"params": _fields(**given)} if _fields(**given) else {}


class _Plain:
    """The rest of the API, each answer its model too: the methods of both clients are made
    from these (``meaning_memory.client``), named as here."""

    @staticmethod
    def consolidate(phases: list[str] | None = None, dry_run: bool | None = None) -> tuple:
        """Queue a consolidation run of your workspace (202, the run)."""
        body = _fields(phases=phases, dry_run=dry_run)
        return "POST", "/api/v1/consolidate", {"json": body}, "unsent", Run

    @staticmethod
    def consolidation_run(run_id: str) -> tuple:
        """A consolidation run: its state, phases and counts."""
        return "GET", f"/api/v1/consolidate/{run_id}", {}, "always", Run

    @staticmethod
    def compiled_kept() -> tuple:
        """The compiled file the last consolidation run kept for you: its Markdown."""
        return "GET", "/api/v1/compiled/kept", {}, "always", markdown

    @staticmethod
    def saga(**arguments: Any) -> tuple:
        """A story across sessions (``query`` or ``thread_id``, ``limit``; off by default)."""
        return "POST", "/api/v1/saga", {"json": _fields(**arguments)}, "always", Saga

    @staticmethod
    def entities(**filters: Any) -> tuple:
        """The entities you may know of (``query``, ``type``, ``page``, ``page_size``)."""
        return "GET", "/api/v1/entities", _query(**filters), "always", EntityPage

    @staticmethod
    def entity(entity_id: str, **page: Any) -> tuple:
        """An entity and the memories you see that mention it (``page``, ``page_size``)."""
        return "GET", f"/api/v1/entities/{entity_id}", _query(**page), "always", EntityDetail

    @staticmethod
    def declare_entity(name: str, type: str, aliases: list[str] | None = None) -> tuple:  # noqa: A002
        """Put an entity in the workspace's gazetteer (its name and aliases then found in
        every text written)."""
        body = _fields(name=name, type=type, aliases=aliases)
        return "POST", "/api/v1/entities", {"json": body}, "unsent", Entity

    @staticmethod
    def link(mem_id: str, **fields: Any) -> tuple:
        """Link a memory to another (``to``) or to an entity (``entity``), with ``type``."""
        path = f"/api/v1/memories/{mem_id}/links"
        return "POST", path, {"json": _fields(**fields)}, "unsent", StoredLink

    @staticmethod
    def unlink(mem_id: str, link_id: str, reason: str) -> tuple:
        """Remove a link (its row kept, with who and why)."""
        path = f"/api/v1/memories/{mem_id}/links/{link_id}/remove"
        return "POST", path, {"json": {"reason": reason}}, "unsent", StoredLink

    @staticmethod
    def sources(**filters: Any) -> tuple:
        """The sources of the memories you see, each with its record."""
        return "GET", "/api/v1/sources", _query(**filters), "always", SourcePage

    @staticmethod
    def source(kind: str, key: str) -> tuple:
        """One source's record and the events behind it."""
        return "GET", f"/api/v1/sources/{kind}/{key}", {}, "always", SourceDetail

    @staticmethod
    def traverse(**arguments: Any) -> tuple:
        """Follow links from a memory or an entity (``from``, ``depth``, …; opt-in)."""
        return "POST", "/api/v1/traverse", {"json": _fields(**arguments)}, "always", Traversal

    @staticmethod
    def explain_path(**arguments: Any) -> tuple:
        """The shortest path between two nodes (``from``, ``to``, ``depth``; opt-in)."""
        return "POST", "/api/v1/explain-path", {"json": _fields(**arguments)}, "always", Path

    @staticmethod
    def divergences(**filters: Any) -> tuple:
        """Memories by different writers that disagree (``status``, ``page``; off by
        default)."""
        return "GET", "/api/v1/divergences", _query(**filters), "always", DivergencePage

    @staticmethod
    def divergence(divergence_id: str) -> tuple:
        """One divergence and its two memories."""
        return "GET", f"/api/v1/divergences/{divergence_id}", {}, "always", Divergence


#: The plain calls, by the name of the clients' methods.
PLAIN = [name for name in vars(_Plain) if not name.startswith("_")]
