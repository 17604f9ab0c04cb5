"""A Python client of the engine's REST API, sync and async (httpx)::

    from meaning_memory.client import MeaningMemory

    with MeaningMemory("http://127.0.0.1:8000", token="mm_…") as mm:
        stored = mm.remember("Zephyr renews its contract every March.", category="commitment")
        for hit in mm.search("When does Zephyr renew?").hits:
            print(hit.rank, hit.memory.mem_id, hit.memory.text)

``AsyncMeaningMemory`` has the same methods, awaited. Results are typed (``Memory``, ``Hit``,
``SearchResults``, ``BulkResult``, ``MemoryPage``, ``CompiledFile``, ``Readiness``), each
keeping the API's whole answer in ``raw``. An error answer raises ``MeaningMemoryError`` (or
its subclass for the status) carrying the API's body: a 400's ``errors`` maps each field to the
rules it broke.

A network failure is retried (``retries``, with a growing pause): reads always; ``remember``
and ``bulk_remember`` too, because the client gives each memory an ``idempotency_key`` when
the caller did not, so a write the engine stored before the connection broke is not stored
twice; feedback and forget only when the request never reached the engine (the connection
was refused or could not be made).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

DEFAULT_TIMEOUT = 60.0
#: Failures after which the request cannot have reached the engine.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


class MeaningMemoryError(Exception):
    """An error answer of the API: its status and body (``errors``: field → messages)."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        detail = body.get("detail") if isinstance(body, dict) else None
        self.errors: dict[str, list[str]] = (
            {k: v for k, v in body.items() if isinstance(v, list)}
            if isinstance(body, dict) and detail is None
            else {}
        )
        message = detail or "; ".join(f"{k}: {' '.join(v)}" for k, v in self.errors.items())
        super().__init__(f"{status}: {message or body}")


class InvalidInput(MeaningMemoryError):
    """400: the fields and the rules they broke are in ``errors``."""


class NotAuthorized(MeaningMemoryError):
    """401 or 403: a missing, wrong or revoked token, or what the token may not do."""


class NotFound(MeaningMemoryError):
    """404: unknown, or not visible to this agent (the API never tells the two apart); when
    the input named it (a memory to supersede, an entity to filter by), ``errors`` says which
    field."""


class Conflict(MeaningMemoryError):
    """409: a run in progress, or input that clashes with what is stored (``errors``)."""


class TooManyRequests(MeaningMemoryError):
    """429: ``retry_after`` seconds, when the engine said."""

    def __init__(self, status: int, body: Any, retry_after: float | None = None) -> None:
        super().__init__(status, body)
        self.retry_after = retry_after


class Unavailable(MeaningMemoryError):
    """5xx: the engine, its database or its embedder could not answer."""


ERRORS = {400: InvalidInput, 401: NotAuthorized, 403: NotAuthorized, 404: NotFound, 409: Conflict}


def _error(response: httpx.Response) -> MeaningMemoryError:
    try:
        body = response.json()
    except ValueError:
        body = {"detail": response.text}
    status = response.status_code
    if status == 429:
        after = response.headers.get("Retry-After")
        return TooManyRequests(status, body, float(after) if after else None)
    if status >= 500:
        return Unavailable(status, body)
    return ERRORS.get(status, MeaningMemoryError)(status, body)


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


@dataclass(frozen=True)
class Memory:
    mem_id: str
    text: str
    category: str
    memory_type: str
    source: str
    scope: str
    significance: float
    pinned: bool
    status: str
    created_at: datetime | None
    valid_from: datetime | None
    valid_until: datetime | None
    stare_scores: dict[str, float | None]
    perspective: str | None
    source_kind: str | None
    attributed_to: dict[str, str] | None
    metadata: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Memory:
        return cls(
            mem_id=data["mem_id"],
            text=data["text"],
            category=data["category"],
            memory_type=data["memory_type"],
            source=data["source"],
            scope=data["scope"],
            significance=data["significance"],
            pinned=data["pinned"],
            status=data["status"],
            created_at=_time(data.get("created_at")),
            valid_from=_time(data.get("valid_from")),
            valid_until=_time(data.get("valid_until")),
            stare_scores=data.get("stare_scores", {}),
            perspective=data.get("perspective"),
            source_kind=data.get("source_kind"),
            attributed_to=data.get("attributed_to"),
            metadata=data.get("metadata", {}),
            raw=data,
        )


@dataclass(frozen=True)
class Hit:
    rank: int
    memory: Memory
    eligible: str
    explanation: dict[str, Any]


@dataclass(frozen=True)
class SearchResults:
    hits: list[Hit]
    table: str
    raw: dict[str, Any] = field(repr=False)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)


@dataclass(frozen=True)
class BulkResult:
    stored: int
    existing: int
    mem_ids: list[str]
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class MemoryPage:
    memories: list[Memory]
    next: str | None  # the next page's URL (``list(cursor=…)`` takes it), None at the end


@dataclass(frozen=True)
class CompiledFile:
    markdown: str
    tokens: int
    included: int
    cut: int
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Erasure:
    """What an erasure removed (never what the memories said)."""

    erased: list[str]
    episodes_rewritten: int
    entities_removed: int
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Erasure:
        return cls(data["erased"], data["episodes_rewritten"], data["entities_removed"], data)


@dataclass(frozen=True)
class Readiness:
    table: str
    capabilities: list[dict[str, Any]]


def _search(data: dict[str, Any]) -> SearchResults:
    hits = [
        Hit(h["rank"], Memory.from_api(h), h["eligible"], h["explanation"]) for h in data["results"]
    ]
    return SearchResults(hits, data.get("table", ""), data)


def _bulk(data: dict[str, Any]) -> BulkResult:
    return BulkResult(
        data["stored"], data["existing"], [r["mem_id"] for r in data["results"]], data
    )


def _page(data: dict[str, Any]) -> MemoryPage:
    return MemoryPage([Memory.from_api(m) for m in data["results"]], data.get("next"))


def _compiled(data: dict[str, Any]) -> CompiledFile:
    return CompiledFile(
        data["markdown"], data["tokens"], data["included_count"], data["cut_count"], data
    )


def _readiness(data: dict[str, Any]) -> Readiness:
    return Readiness(data["table"], data["capabilities"])


def _capabilities(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data["capabilities"]


def _fields(**given: Any) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


def _with_key(item: dict[str, Any]) -> dict[str, Any]:
    """A memory to write, with an idempotency key of its own unless it has one."""
    return item if item.get("idempotency_key") else {**item, "idempotency_key": uuid.uuid4().hex}


def _list_params(cursor: str | None, filters: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The list's URL and query: a ``next`` link as given, or the filters."""
    if cursor and cursor.startswith(("http://", "https://")):
        return cursor, {}
    params = {k: str(v).lower() if isinstance(v, bool) else v for k, v in filters.items()}
    if cursor:
        params["cursor"] = cursor
    return "/api/v1/memories", _fields(**params)


class _Calls:
    """What both clients send: each call is (method, path, body or query, how to retry, what
    to make of the answer)."""

    @staticmethod
    def remember(text: str, **fields: Any) -> tuple:
        body = _with_key({"text": text, **_fields(**fields)})
        return "POST", "/api/v1/memories", {"json": body}, "always", Memory.from_api

    @staticmethod
    def bulk_remember(memories: list[dict[str, Any]]) -> tuple:
        body = {"memories": [_with_key(dict(item)) for item in memories]}
        return "POST", "/api/v1/memories/bulk", {"json": body}, "always", _bulk

    @staticmethod
    def search(query: str, **filters: Any) -> tuple:
        body = {"query": query, **_fields(**filters)}
        return "POST", "/api/v1/search", {"json": body}, "always", _search

    @staticmethod
    def get(mem_id: str) -> tuple:
        return "GET", f"/api/v1/memories/{mem_id}", {}, "always", Memory.from_api

    @staticmethod
    def feedback(mem_id: str, action: str, reason: str) -> tuple:
        body = {"action": action, "reason": reason}
        path = f"/api/v1/memories/{mem_id}/feedback"
        return "POST", path, {"json": body}, "unsent", Memory.from_api

    @staticmethod
    def forget(mem_id: str, reason: str) -> tuple:
        path = f"/api/v1/memories/{mem_id}/forget"
        return "POST", path, {"json": {"reason": reason}}, "unsent", Memory.from_api

    @staticmethod
    def erase(mem_id: str, reason: str) -> tuple:
        path = f"/api/v1/memories/{mem_id}/erase"
        return "POST", path, {"json": {"reason": reason}}, "unsent", Erasure.from_api

    @staticmethod
    def list(cursor: str | None, filters: dict[str, Any]) -> tuple:
        url, params = _list_params(cursor, filters)
        # No params at all for a next link: httpx would replace its query with empty ones.
        return "GET", url, {"params": params} if params else {}, "always", _page

    @staticmethod
    def compiled(**options: Any) -> tuple:
        params = {"format": "json", **_fields(**options)}
        return "GET", "/api/v1/compiled", {"params": params}, "always", _compiled

    @staticmethod
    def readiness() -> tuple:
        return "GET", "/api/v1/readiness", {}, "always", _readiness

    @staticmethod
    def readiness_history(capability: str | None, runs: int | None) -> tuple:
        params = _fields(capability=capability, runs=runs)
        return "GET", "/api/v1/readiness/history", {"params": params}, "always", _capabilities


def _http_options(base_url: str, token: str, timeout: float, transport: Any) -> dict[str, Any]:
    return {
        "base_url": base_url.rstrip("/"),
        "headers": {"Authorization": f"Bearer {token}"},
        "timeout": timeout,
        "transport": transport,
    }


def _pause(exc: httpx.TransportError, retry: str, attempt: int, retries: int, backoff: float):
    """Seconds to wait before sending again after ``exc``, or None: give up (raise it)."""
    if attempt == retries or (retry == "unsent" and not isinstance(exc, NOT_SENT)):
        return None
    return backoff * 2**attempt


def _answer(response: httpx.Response, make: Any) -> Any:
    if response.is_success:
        return make(response.json())
    raise _error(response)


class MeaningMemory:
    """The engine's REST API for one agent (its token), synchronously."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.retries, self.backoff = retries, backoff
        self._http = httpx.Client(**_http_options(base_url, token, timeout, transport))

    def __enter__(self) -> MeaningMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, call: tuple) -> Any:
        method, path, options, retry, make = call
        for attempt in range(self.retries + 1):
            try:
                response = self._http.request(method, path, **options)
            except httpx.TransportError as exc:
                pause = _pause(exc, retry, attempt, self.retries, self.backoff)
                if pause is None:
                    raise
                time.sleep(pause)
                continue
            return _answer(response, make)
        raise AssertionError("unreachable")

    def remember(self, text: str, **fields: Any) -> Memory:
        """Store one memory (the API's remember arguments as keywords)."""
        return self._call(_Calls.remember(text, **fields))

    def bulk_remember(self, memories: list[dict[str, Any]]) -> BulkResult:
        return self._call(_Calls.bulk_remember(memories))

    def search(self, query: str, **filters: Any) -> SearchResults:
        return self._call(_Calls.search(query, **filters))

    def get(self, mem_id: str) -> Memory:
        return self._call(_Calls.get(mem_id))

    def feedback(self, mem_id: str, action: str, reason: str) -> Memory:
        """important, demote, pin, unpin or forget, with the reason."""
        return self._call(_Calls.feedback(mem_id, action, reason))

    def forget(self, mem_id: str, reason: str) -> Memory:
        return self._call(_Calls.forget(mem_id, reason))

    def erase(self, mem_id: str, reason: str) -> Erasure:
        """Erase a memory for good (``forget`` keeps it); a tombstone keeps who, when, why."""
        return self._call(_Calls.erase(mem_id, reason))

    def list(self, cursor: str | None = None, **filters: Any) -> MemoryPage:
        """One page of memories without a query (``cursor``: the previous page's ``next``)."""
        return self._call(_Calls.list(cursor, filters))

    def list_all(self, **filters: Any) -> Iterator[Memory]:
        """Every memory the filters keep, page after page."""
        page = self.list(**filters)
        yield from page.memories
        while page.next:
            page = self.list(cursor=page.next)
            yield from page.memories

    def compiled(self, **options: Any) -> CompiledFile:
        return self._call(_Calls.compiled(**options))

    def readiness(self) -> Readiness:
        return self._call(_Calls.readiness())

    def readiness_history(
        self, capability: str | None = None, runs: int | None = None
    ) -> list[dict[str, Any]]:
        """Each capability's evidence over time (``GET /api/v1/readiness/history``)."""
        return self._call(_Calls.readiness_history(capability, runs))


class AsyncMeaningMemory:
    """The same client for asyncio: every method awaited."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.retries, self.backoff = retries, backoff
        self._http = httpx.AsyncClient(**_http_options(base_url, token, timeout, transport))

    async def __aenter__(self) -> AsyncMeaningMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _call(self, call: tuple) -> Any:
        method, path, options, retry, make = call
        for attempt in range(self.retries + 1):
            try:
                response = await self._http.request(method, path, **options)
            except httpx.TransportError as exc:
                pause = _pause(exc, retry, attempt, self.retries, self.backoff)
                if pause is None:
                    raise
                await asyncio.sleep(pause)
                continue
            return _answer(response, make)
        raise AssertionError("unreachable")

    async def remember(self, text: str, **fields: Any) -> Memory:
        return await self._call(_Calls.remember(text, **fields))

    async def bulk_remember(self, memories: list[dict[str, Any]]) -> BulkResult:
        return await self._call(_Calls.bulk_remember(memories))

    async def search(self, query: str, **filters: Any) -> SearchResults:
        return await self._call(_Calls.search(query, **filters))

    async def get(self, mem_id: str) -> Memory:
        return await self._call(_Calls.get(mem_id))

    async def feedback(self, mem_id: str, action: str, reason: str) -> Memory:
        return await self._call(_Calls.feedback(mem_id, action, reason))

    async def forget(self, mem_id: str, reason: str) -> Memory:
        return await self._call(_Calls.forget(mem_id, reason))

    async def erase(self, mem_id: str, reason: str) -> Erasure:
        return await self._call(_Calls.erase(mem_id, reason))

    async def list(self, cursor: str | None = None, **filters: Any) -> MemoryPage:
        return await self._call(_Calls.list(cursor, filters))

    async def compiled(self, **options: Any) -> CompiledFile:
        return await self._call(_Calls.compiled(**options))

    async def readiness(self) -> Readiness:
        return await self._call(_Calls.readiness())

    async def readiness_history(
        self, capability: str | None = None, runs: int | None = None
    ) -> list[dict[str, Any]]:
        return await self._call(_Calls.readiness_history(capability, runs))
