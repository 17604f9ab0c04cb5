"""What the client gives back besides the answers generated from the schema (``answers``):
the errors, one for each kind of error answer, and the two answers that do more than hold
their fields (a search's hits iterated, a bulk write's ids)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from meaning_memory.client.answers import Bulk, Search, SearchHit

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


class SearchResults(Search):
    """A search's answer: its hits best first (``results``, each a ``SearchHit``: the memory's
    fields, ``rank``, ``eligible`` and ``explanation``) and ``table``; iterating it gives the
    hits and ``len`` counts them."""

    def __iter__(self) -> Iterator[SearchHit]:  # type: ignore[override]
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


class BulkResult(Bulk):
    """A bulk write's answer; ``mem_ids`` are its memories' ids in the order sent."""

    @property
    def mem_ids(self) -> list[str]:
        return [item.mem_id for item in self.results]
