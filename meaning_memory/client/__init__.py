"""A Python client of the engine's REST API, sync and async (httpx)::

    from meaning_memory.client import MeaningMemory

    with MeaningMemory("http://127.0.0.1:8000", token="mm_…") as mm:
        stored = mm.remember("Zephyr renews its contract every March.", category="commitment")
        for hit in mm.search("When does Zephyr renew?"):
            print(hit.rank, hit.mem_id, hit.text)

``AsyncMeaningMemory`` has the same methods, awaited. Each answer is the pydantic model of its
shape in the engine's OpenAPI schema (``meaning_memory.client.answers``, generated from it:
``MemoryDetail``, ``MemoryPage``, ``Compiled``, ``Erasure``, ``Readiness``, ``History``,
``Run``, ``EntityPage`` …), validated when it arrives, its fields named as the API names them
(``from`` is ``from_``); a search's is ``SearchResults`` (its hits iterated) and a bulk
write's ``BulkResult`` (with ``mem_ids``), the same models with those conveniences. Nothing of
an answer is dropped (what ``raw`` held before): a field the schema does not declare (a newer
engine's) is kept in the model's ``model_extra``, and
``model_dump(mode="json", by_alias=True, exclude_unset=True)`` gives the whole answer back as
JSON data (its times spelt ``Z`` for UTC). An answer that does not have its declared shape
raises pydantic's ``ValidationError``. An error answer raises ``MeaningMemoryError`` (or its
subclass for the status) carrying the API's body: a 400's ``errors`` maps each field to the
rules it broke.

A network failure is retried (``retries``, with a growing pause): reads always; ``remember``
and ``bulk_remember`` too, because the client gives each memory an ``idempotency_key`` when
the caller did not (a batch's derived from what each item says, so a batch sent again stores
nothing new), so a write the engine stored before the connection broke is not stored twice;
feedback and forget only when the request never reached the engine (the connection was refused
or could not be made).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterator
from typing import Any

import httpx

from meaning_memory.client.answers import (
    Compiled,
    Erasure,
    History,
    Memory,
    MemoryDetail,
    MemoryPage,
    Readiness,
    SearchHit,
)
from meaning_memory.client.calls import PLAIN, _Calls, _Plain, markdown
from meaning_memory.client.results import (
    NOT_SENT,
    BulkResult,
    Conflict,
    InvalidInput,
    MeaningMemoryError,
    NotAuthorized,
    NotFound,
    SearchResults,
    TooManyRequests,
    Unavailable,
    _error,
)

__all__ = [
    "AsyncMeaningMemory",
    "BulkResult",
    "Compiled",
    "Conflict",
    "Erasure",
    "History",
    "InvalidInput",
    "MeaningMemory",
    "MeaningMemoryError",
    "Memory",
    "MemoryDetail",
    "MemoryPage",
    "NotAuthorized",
    "NotFound",
    "Readiness",
    "SearchHit",
    "SearchResults",
    "TooManyRequests",
    "Unavailable",
]

DEFAULT_TIMEOUT = 60.0


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


def _answer(response: httpx.Response, answer: Any) -> Any:
    """The success answer as its model (validated), or its text if Markdown; else the error."""
    if not response.is_success:
        raise _error(response)
    return response.text if answer is markdown else answer.model_validate_json(response.content)


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
        method, path, options, retry, answer = call
        for attempt in range(self.retries + 1):
            try:
                response = self._http.request(method, path, **options)
            except httpx.TransportError as exc:
                pause = _pause(exc, retry, attempt, self.retries, self.backoff)
                if pause is None:
                    raise
                time.sleep(pause)
                continue
            return _answer(response, answer)
        raise AssertionError("unreachable")

    def remember(self, text: str, **fields: Any) -> MemoryDetail:
        """Store one memory (the API's remember arguments as keywords)."""
        return self._call(_Calls.remember(text, **fields))

    def bulk_remember(self, memories: list[dict[str, Any]]) -> BulkResult:
        return self._call(_Calls.bulk_remember(memories))

    def remember_messages(
        self, session: str, messages: list[dict[str, Any]], **fields: Any
    ) -> BulkResult:
        """Store a conversation: a memory per message (``{"role", "name", "content", "at"}``),
        each once (``POST /api/v1/messages``; ``scope``, ``category``, ``metadata``)."""
        return self._call(_Calls.remember_messages(session, messages, **fields))

    def erase_matching(
        self,
        *,
        entity: str | None = None,
        metadata: dict[str, Any] | None = None,
        reason: str = "",
        dry_run: bool = False,
    ) -> Erasure:
        """Erase for good every memory you see that mentions ``entity`` or matches the
        ``metadata`` filter; ``dry_run``: only list them (``erased``)."""
        return self._call(_Calls.erase_matching(entity, metadata, reason, dry_run))

    def search(self, query: str, **filters: Any) -> SearchResults:
        return self._call(_Calls.search(query, **filters))

    def get(self, mem_id: str) -> MemoryDetail:
        return self._call(_Calls.get(mem_id))

    def feedback(self, mem_id: str, action: str, reason: str) -> MemoryDetail:
        """important, demote, pin, unpin or forget, with the reason."""
        return self._call(_Calls.feedback(mem_id, action, reason))

    def forget(self, mem_id: str, reason: str) -> MemoryDetail:
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
        yield from page.results
        while page.next:
            page = self.list(cursor=page.next)
            yield from page.results

    def compiled(self, **options: Any) -> Compiled:
        return self._call(_Calls.compiled(**options))

    def readiness(self) -> Readiness:
        return self._call(_Calls.readiness())

    def readiness_history(self, capability: str | None = None, runs: int | None = None) -> History:
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
        method, path, options, retry, answer = call
        for attempt in range(self.retries + 1):
            try:
                response = await self._http.request(method, path, **options)
            except httpx.TransportError as exc:
                pause = _pause(exc, retry, attempt, self.retries, self.backoff)
                if pause is None:
                    raise
                await asyncio.sleep(pause)
                continue
            return _answer(response, answer)
        raise AssertionError("unreachable")

    async def remember(self, text: str, **fields: Any) -> MemoryDetail:
        return await self._call(_Calls.remember(text, **fields))

    async def bulk_remember(self, memories: list[dict[str, Any]]) -> BulkResult:
        return await self._call(_Calls.bulk_remember(memories))

    async def remember_messages(
        self, session: str, messages: list[dict[str, Any]], **fields: Any
    ) -> BulkResult:
        return await self._call(_Calls.remember_messages(session, messages, **fields))

    async def erase_matching(
        self,
        *,
        entity: str | None = None,
        metadata: dict[str, Any] | None = None,
        reason: str = "",
        dry_run: bool = False,
    ) -> Erasure:
        return await self._call(_Calls.erase_matching(entity, metadata, reason, dry_run))

    async def search(self, query: str, **filters: Any) -> SearchResults:
        return await self._call(_Calls.search(query, **filters))

    async def get(self, mem_id: str) -> MemoryDetail:
        return await self._call(_Calls.get(mem_id))

    async def feedback(self, mem_id: str, action: str, reason: str) -> MemoryDetail:
        return await self._call(_Calls.feedback(mem_id, action, reason))

    async def forget(self, mem_id: str, reason: str) -> MemoryDetail:
        return await self._call(_Calls.forget(mem_id, reason))

    async def erase(self, mem_id: str, reason: str) -> Erasure:
        return await self._call(_Calls.erase(mem_id, reason))

    async def list(self, cursor: str | None = None, **filters: Any) -> MemoryPage:
        return await self._call(_Calls.list(cursor, filters))

    async def compiled(self, **options: Any) -> Compiled:
        return await self._call(_Calls.compiled(**options))

    async def readiness(self) -> Readiness:
        return await self._call(_Calls.readiness())

    async def readiness_history(
        self, capability: str | None = None, runs: int | None = None
    ) -> History:
        return await self._call(_Calls.readiness_history(capability, runs))


def _sync_method(call: Any) -> Any:
    @functools.wraps(call)
    def method(self: MeaningMemory, *args: Any, **kwargs: Any) -> Any:
        return self._call(call(*args, **kwargs))

    return method


def _async_method(call: Any) -> Any:
    @functools.wraps(call)
    async def method(self: AsyncMeaningMemory, *args: Any, **kwargs: Any) -> Any:
        return await self._call(call(*args, **kwargs))

    return method


# The rest of the API (``calls._Plain``), on both clients alike.
for _name in PLAIN:
    setattr(MeaningMemory, _name, _sync_method(getattr(_Plain, _name)))
    setattr(AsyncMeaningMemory, _name, _async_method(getattr(_Plain, _name)))
