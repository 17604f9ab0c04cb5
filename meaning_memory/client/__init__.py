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

from meaning_memory.client.calls import PLAIN, _Calls, _Plain, markdown
from meaning_memory.client.results import (
    NOT_SENT,
    BulkResult,
    CompiledFile,
    Conflict,
    Erasure,
    Hit,
    InvalidInput,
    MeaningMemoryError,
    Memory,
    MemoryPage,
    NotAuthorized,
    NotFound,
    Readiness,
    SearchResults,
    TooManyRequests,
    Unavailable,
    _error,
)

__all__ = [
    "AsyncMeaningMemory",
    "BulkResult",
    "CompiledFile",
    "Conflict",
    "Erasure",
    "Hit",
    "InvalidInput",
    "MeaningMemory",
    "MeaningMemoryError",
    "Memory",
    "MemoryPage",
    "NotAuthorized",
    "NotFound",
    "Readiness",
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


def _answer(response: httpx.Response, make: Any) -> Any:
    if response.is_success:
        return make(response.text if make is markdown else response.json())
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
