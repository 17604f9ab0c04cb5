"""Fair use of a web process: no caller and no tenant takes more than its share of the threads,
the database connections and the CPU.

A caller is an agent (its Bearer token), a signed-in person (their session cookie) or, for
anything else, the client's address; an agent's tenant is its workspace, anyone else is their
own tenant. In each web process:

* a caller may have at most ``MM_RATE_CONCURRENT`` requests in flight, and may make
  ``MM_RATE_PER_MINUTE`` requests a minute with bursts of ``MM_RATE_BURST`` (a token bucket);
  beyond either, a 429 with ``Retry-After`` and a body that names the limit (``Limiter``),
  sent when one of the caller's requests ends or after ``PACE_SECONDS`` (one refusal per
  request that ends): a client that sends again the moment it is refused costs the process a
  few refusals a second, not hundreds, and its next try finds a place free;
* at most ``MM_FAIR_SLOTS`` requests run at once; the others wait in one queue per tenant
  (``meaning_memory.fairqueue``): a slot that comes free goes to the waiting tenant with the
  fewest running, then the least cost lately (the seconds its requests held slots: a long
  query or a bulk write costs more than a short search), and while other tenants are active
  none runs more than its share, so a tenant that floods the engine waits behind itself and
  leaves a slot for the others. A tenant with ``MM_FAIR_QUEUE`` requests waiting gets a 429
  for the next.

All of it happens before any database work or embedding. ``/healthz``, ``/readyz`` and static
files are not counted. It is ASGI middleware around the whole app, so the API, the MCP endpoint
and the pages share it. The counts are kept in a ledger (``meaning_memory.ledger``; the only
database work is finding a token's workspace, once a minute per token): the process's own, or,
with ``MM_FAIR_LEDGER`` (``serve --web-workers N``), every web process's of the machine, so the
limits and the slots hold across them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from asgiref.sync import sync_to_async
from django.conf import settings

from meaning_memory.fairqueue import FairQueue, QueueFull
from meaning_memory.ledger import LocalLedger, SharedLedger
from meaning_memory.middleware import body_too_large

#: Paths no limit applies to: health checks, and static files (a page's style sheet and script
#: arrive with it).
EXEMPT_PREFIXES = ("/healthz", "/readyz", "/static/")
#: Past this many callers tracked, those with nothing in flight and a full bucket are forgotten.
MAX_TRACKED = 10_000

#: The longest a refusal of the limiter waits for one of the caller's requests to end.
PACE_SECONDS = 1.0

CALLER_KIND = {"agent": "agent", "session": "signed-in session", "address": "client address"}


@dataclass
class Refusal:
    retry_after: int
    detail: str


class Limiter:
    """The callers' counts, in a ledger (``meaning_memory.ledger``: the process's own, or every
    web process's with ``MM_FAIR_LEDGER``); used from the event loop only."""

    def __init__(
        self,
        *,
        concurrent: int,
        per_minute: int,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        ledger: LocalLedger | SharedLedger | None = None,
    ) -> None:
        self.concurrent = concurrent
        self.rate = per_minute / 60.0  # tokens per second
        self.per_minute = per_minute
        self.burst = burst
        self.clock = clock
        self.ledger = ledger or LocalLedger()
        if self.ledger.shared:
            self.ledger.bucket_full = self._full

    @property
    def in_flight(self) -> dict[str, int]:
        """This process's callers' requests in flight (a local ledger's)."""
        return dict(getattr(self.ledger, "_in_flight", {}))

    @property
    def buckets(self) -> dict[str, tuple[float, float]]:
        return dict(getattr(self.ledger, "_buckets", {}))

    def _full(self, tokens: float, updated: float) -> bool:
        return tokens + (self.clock() - updated) * self.rate >= self.burst

    def acquire(self, key: str) -> Refusal | None:
        """Count a request of ``key`` in, or say why not (then nothing is counted)."""
        kind = CALLER_KIND[key.partition(":")[0]]
        with self.ledger.locked() as ledger:
            if self.concurrent and ledger.in_flight(key) >= self.concurrent:
                return Refusal(
                    1,
                    f"too many requests at once: at most {self.concurrent} in flight per "
                    f"{kind} (MM_RATE_CONCURRENT); wait for an answer before sending more.",
                )
            if self.per_minute:
                now = self.clock()
                tokens, updated = ledger.bucket(key) or (float(self.burst), now)
                tokens = min(self.burst, tokens + (now - updated) * self.rate)
                if tokens < 1:
                    ledger.set_bucket(key, tokens, now)
                    wait = math.ceil((1 - tokens) / self.rate)
                    return Refusal(
                        wait,
                        f"too many requests: at most {self.per_minute:,} a minute per {kind} "
                        f"(MM_RATE_PER_MINUTE, bursts of MM_RATE_BURST={self.burst}); "
                        f"retry after {wait} s.",
                    )
                ledger.set_bucket(key, tokens - 1, now)
            ledger.add_in_flight(key, 1)
            if ledger.callers() > MAX_TRACKED:
                ledger.forget_full_buckets(self._full)
        return None

    def release(self, key: str) -> None:
        with self.ledger.locked() as ledger:
            ledger.add_in_flight(key, -1)


#: How long a token's workspace is remembered (a revoked agent is refused by the app itself).
TENANT_TTL_SECONDS = 60.0


class Tenants:
    """The tenant of a caller: ``workspace:<id>`` for an agent's token, the caller otherwise.
    A token's workspace is looked up once per ``TENANT_TTL_SECONDS``."""

    def __init__(
        self,
        lookup: Callable[[str], Awaitable[int | None]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lookup = lookup or _workspace_of_token_hash
        self.clock = clock
        self.known: dict[str, tuple[str, float]] = {}

    async def of(self, caller: Caller) -> str:
        if caller.token_hash is None:
            return caller.key
        now = self.clock()
        known = self.known.get(caller.key)
        if known is not None and known[1] > now:
            return known[0]
        try:
            workspace = await self.lookup(caller.token_hash)
        except Exception:  # the database is away: the app answers that; queue on its own
            return caller.key
        tenant = caller.key if workspace is None else f"workspace:{workspace}"
        if len(self.known) >= MAX_TRACKED:
            self.known.clear()
        self.known[caller.key] = (tenant, now + TENANT_TTL_SECONDS)
        return tenant


async def _workspace_of_token_hash(token_hash: str) -> int | None:
    return await sync_to_async(_lookup_and_close, thread_sensitive=False)(token_hash)


def _lookup_and_close(token_hash: str) -> int | None:
    from django.db import connection

    from memories.services import workspace_of_token_hash

    try:
        return workspace_of_token_hash(token_hash)
    finally:
        connection.close()  # back to the pool: this thread serves no request


@dataclass(frozen=True)
class Caller:
    key: str
    token_hash: str | None = None  # sha256 of an agent's token


def caller_of(scope: dict) -> Caller:
    """``agent:…`` (with the hash of the Bearer token), ``session:…`` (a hash of the session
    cookie), or ``address:…`` (the client's address)."""
    headers: dict[bytes, bytes] = {}
    for name, value in scope.get("headers") or []:
        headers.setdefault(name.lower(), value)
    scheme, _, token = headers.get(b"authorization", b"").partition(b" ")
    if scheme.lower() == b"bearer" and token.strip():
        token_hash = hashlib.sha256(token.strip()).hexdigest()
        return Caller("agent:" + token_hash[:32], token_hash)
    session = _cookie(headers.get(b"cookie", b""), settings.SESSION_COOKIE_NAME.encode())
    if session:
        return Caller("session:" + hashlib.sha256(session).hexdigest()[:32])
    client = scope.get("client") or ("unknown", 0)
    return Caller(f"address:{client[0]}")


def caller_key(scope: dict) -> str:
    return caller_of(scope).key


def _cookie(header: bytes, name: bytes) -> bytes | None:
    for part in header.split(b";"):
        key, _, value = part.strip().partition(b"=")
        if key == name and value:
            return value
    return None


class FairUse:
    """ASGI middleware applying a ``Limiter`` and a ``FairQueue`` (see the module docstring)."""

    def __init__(
        self,
        app,
        limiter: Limiter | None = None,
        queue: FairQueue | None = None,
        tenants: Tenants | None = None,
        pace: float = PACE_SECONDS,
    ) -> None:
        self.app = app
        self.pace = pace
        self.refused: dict[str, deque[asyncio.Future[None]]] = {}  # waiting to be told, by caller
        # One ledger for both: with MM_FAIR_LEDGER, every web process's of the machine.
        ledger = SharedLedger(Path(settings.MM_FAIR_LEDGER)) if settings.MM_FAIR_LEDGER else None
        self.limiter = limiter or Limiter(
            concurrent=settings.MM_RATE_CONCURRENT,
            per_minute=settings.MM_RATE_PER_MINUTE,
            burst=settings.MM_RATE_BURST,
            ledger=ledger,
        )
        self.queue = queue or FairQueue(
            slots=settings.MM_FAIR_SLOTS, waiting_per_tenant=settings.MM_FAIR_QUEUE, ledger=ledger
        )
        self.tenants = tenants or Tenants()

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(EXEMPT_PREFIXES):
            await self.app(scope, receive, send)
            return
        caller = caller_of(scope)
        refusal = self.limiter.acquire(caller.key)
        if refusal is not None:
            await self._paced(caller.key)
            await _too_many(send, path, refusal)
            return
        try:
            # The body first: a client that sends it slowly holds its own places, never a slot.
            received = await _body(receive, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
            if received is None:
                await _refuse(send, path, 413, body_too_large())
                return
            tenant = await self.tenants.of(caller)
            try:
                await self.queue.enter(tenant)
            except QueueFull:
                await _too_many(send, path, self._queue_full(tenant))
                return
            began = time.monotonic()
            try:
                await self.app(scope, _replay(received, receive), send)
            finally:
                self.queue.leave(tenant, time.monotonic() - began)
        finally:
            self.limiter.release(caller.key)
            self._ended(caller.key)

    async def _paced(self, key: str) -> None:
        """Until one of ``key``'s requests ends (one refusal each) or ``pace`` seconds pass."""
        if self.pace <= 0:
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = self.refused.setdefault(key, deque())
        waiting.append(turn)
        try:
            await asyncio.wait_for(asyncio.shield(turn), self.pace)
        except TimeoutError:
            pass
        finally:
            if not turn.done():
                turn.cancel()
                if turn in waiting:
                    waiting.remove(turn)
                if not waiting and self.refused.get(key) is waiting:
                    del self.refused[key]

    def _ended(self, key: str) -> None:
        waiting = self.refused.get(key)
        while waiting:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                break
        if waiting is not None and not waiting:
            del self.refused[key]

    def _queue_full(self, tenant: str) -> Refusal:
        whose = "workspace" if tenant.startswith("workspace:") else "caller"
        return Refusal(
            1,
            f"too many requests waiting: this {whose} already has "
            f"{self.queue.waiting_per_tenant} waiting for one of the {self.queue.slots} "
            "places (MM_FAIR_QUEUE, MM_FAIR_SLOTS); wait for answers before sending more.",
        )


async def _body(receive, limit: int) -> list[dict] | None:
    """The request's messages up to the end of its body (or a disconnect); None for a body
    over ``limit`` bytes (not kept)."""
    messages, size = [], 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if size > limit:
            return None
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            return messages


def _replay(messages: list[dict], receive):
    """``receive`` for the app: the messages read already, then the connection's own."""
    pending = deque(messages)

    async def replay() -> dict:
        if pending:
            return pending.popleft()
        return await receive()

    return replay


async def _too_many(send, path: str, refusal: Refusal) -> None:
    await _refuse(send, path, 429, refusal.detail, retry_after=refusal.retry_after)


async def _refuse(
    send, path: str, status: int, detail: str, *, retry_after: int | None = None
) -> None:
    """JSON for agents (the API and MCP), text for pages."""
    if path.startswith(("/api/", "/mcp")):
        body = json.dumps({"detail": detail}).encode()
        content_type = b"application/json"
    else:
        phrase = "Too many requests" if status == 429 else "Refused"
        body = f"{phrase}: {detail}\n".encode()
        content_type = b"text/plain; charset=utf-8"
    headers = [
        (b"content-type", content_type),
        (b"x-content-type-options", b"nosniff"),
        (b"content-length", str(len(body)).encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
