"""What the client gives back: the errors, one for each kind of answer, and typed results
(each keeping the API's whole answer in ``raw``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

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
