"""Fair use of a web process: no caller takes more than its share of the threads, the database
connections and the CPU.

A caller is an agent (its Bearer token), a signed-in person (their session cookie) or, for
anything else, the client's address. In each web process a caller may have at most
``MM_RATE_CONCURRENT`` requests in flight, and may make ``MM_RATE_PER_MINUTE`` requests a
minute with bursts of ``MM_RATE_BURST`` (a token bucket). Beyond either, the answer is a 429
with ``Retry-After`` and a body that names the limit, before any database work or embedding.
``/healthz``, ``/readyz`` and static files are not counted.

It is ASGI middleware around the whole app, so the API, the MCP endpoint and the pages share
it. The counts live in the process (no database round trip per request): with several web
processes, each applies the limits on its own.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

#: Paths no limit applies to: health checks, and static files (a page's style sheet and script
#: arrive with it).
EXEMPT_PREFIXES = ("/healthz", "/readyz", "/static/")
#: Past this many callers tracked, those with nothing in flight and a full bucket are forgotten.
MAX_TRACKED = 10_000

CALLER_KIND = {"agent": "agent", "session": "signed-in session", "address": "client address"}


@dataclass
class Refusal:
    retry_after: int
    detail: str


@dataclass
class _Bucket:
    tokens: float
    updated: float


class Limiter:
    """The counts of one process (used from its event loop only: no locks)."""

    def __init__(
        self,
        *,
        concurrent: int,
        per_minute: int,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.concurrent = concurrent
        self.rate = per_minute / 60.0  # tokens per second
        self.per_minute = per_minute
        self.burst = burst
        self.clock = clock
        self.in_flight: dict[str, int] = {}
        self.buckets: dict[str, _Bucket] = {}

    def acquire(self, key: str) -> Refusal | None:
        """Count a request of ``key`` in, or say why not (then nothing is counted)."""
        kind = CALLER_KIND[key.partition(":")[0]]
        if self.concurrent and self.in_flight.get(key, 0) >= self.concurrent:
            return Refusal(
                1,
                f"too many requests at once: at most {self.concurrent} in flight per {kind} "
                "(MM_RATE_CONCURRENT); wait for an answer before sending more.",
            )
        if self.per_minute:
            now = self.clock()
            bucket = self.buckets.get(key)
            if bucket is None:
                bucket = self.buckets[key] = _Bucket(float(self.burst), now)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.rate)
            bucket.updated = now
            if bucket.tokens < 1:
                wait = math.ceil((1 - bucket.tokens) / self.rate)
                return Refusal(
                    wait,
                    f"too many requests: at most {self.per_minute:,} a minute per {kind} "
                    f"(MM_RATE_PER_MINUTE, bursts of MM_RATE_BURST={self.burst}); "
                    f"retry after {wait} s.",
                )
            bucket.tokens -= 1
        self.in_flight[key] = self.in_flight.get(key, 0) + 1
        if len(self.buckets) > MAX_TRACKED:
            self._forget_idle()
        return None

    def release(self, key: str) -> None:
        left = self.in_flight.get(key, 0) - 1
        if left > 0:
            self.in_flight[key] = left
        else:
            self.in_flight.pop(key, None)

    def _forget_idle(self) -> None:
        now = self.clock()
        for key, bucket in list(self.buckets.items()):
            full = bucket.tokens + (now - bucket.updated) * self.rate >= self.burst
            if full and key not in self.in_flight:
                del self.buckets[key]


def caller_key(scope: dict) -> str:
    """``agent:…`` (a hash of the Bearer token), ``session:…`` (of the session cookie), or
    ``address:…`` (the client's address)."""
    headers: dict[bytes, bytes] = {}
    for name, value in scope.get("headers") or []:
        headers.setdefault(name.lower(), value)
    scheme, _, token = headers.get(b"authorization", b"").partition(b" ")
    if scheme.lower() == b"bearer" and token.strip():
        return "agent:" + _digest(token.strip())
    session = _cookie(headers.get(b"cookie", b""), settings.SESSION_COOKIE_NAME.encode())
    if session:
        return "session:" + _digest(session)
    client = scope.get("client") or ("unknown", 0)
    return f"address:{client[0]}"


def _digest(secret: bytes) -> str:
    return hashlib.sha256(secret).hexdigest()[:32]


def _cookie(header: bytes, name: bytes) -> bytes | None:
    for part in header.split(b";"):
        key, _, value = part.strip().partition(b"=")
        if key == name and value:
            return value
    return None


class FairUse:
    """ASGI middleware applying a ``Limiter`` (see the module docstring)."""

    def __init__(self, app, limiter: Limiter | None = None) -> None:
        self.app = app
        self.limiter = limiter or Limiter(
            concurrent=settings.MM_RATE_CONCURRENT,
            per_minute=settings.MM_RATE_PER_MINUTE,
            burst=settings.MM_RATE_BURST,
        )

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(EXEMPT_PREFIXES):
            await self.app(scope, receive, send)
            return
        key = caller_key(scope)
        refusal = self.limiter.acquire(key)
        if refusal is not None:
            await _too_many(send, path, refusal)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.limiter.release(key)


async def _too_many(send, path: str, refusal: Refusal) -> None:
    if path.startswith(("/api/", "/mcp")):
        body = json.dumps({"detail": refusal.detail}).encode()
        content_type = b"application/json"
    else:
        body = f"Too many requests: {refusal.detail}\n".encode()
        content_type = b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", content_type),
                (b"retry-after", str(refusal.retry_after).encode()),
                (b"x-content-type-options", b"nosniff"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
