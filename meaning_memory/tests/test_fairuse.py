"""Fair use (``meaning_memory.fairuse``): the limiter's arithmetic on a clock the test moves, and
the ASGI middleware around an app that records what reached it. (The served engine under a
flood: ``test_fair_use_served.py``.)"""

from __future__ import annotations

import asyncio
import json

import pytest

from meaning_memory.fairuse import (
    FairQueue,
    FairUse,
    Limiter,
    QueueFull,
    Tenants,
    caller_key,
    caller_of,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limiter(concurrent=4, per_minute=60, burst=3) -> tuple[Limiter, Clock]:
    clock = Clock()
    return Limiter(concurrent=concurrent, per_minute=per_minute, burst=burst, clock=clock), clock


def test_a_caller_may_have_so_many_requests_in_flight():
    limits, _ = limiter(concurrent=2, per_minute=0)
    assert limits.acquire("agent:a") is None
    assert limits.acquire("agent:a") is None

    refused = limits.acquire("agent:a")

    assert refused is not None and refused.retry_after == 1
    assert "at most 2 in flight per agent (MM_RATE_CONCURRENT)" in refused.detail
    assert limits.acquire("agent:b") is None  # another caller is not affected
    limits.release("agent:a")
    assert limits.acquire("agent:a") is None


def test_the_rate_allows_a_burst_then_one_request_per_interval():
    limits, clock = limiter(concurrent=0, per_minute=60, burst=3)
    for _ in range(3):
        assert limits.acquire("session:s") is None
        limits.release("session:s")

    refused = limits.acquire("session:s")

    assert refused is not None and refused.retry_after == 1
    assert "at most 60 a minute per signed-in session (MM_RATE_PER_MINUTE" in refused.detail
    clock.now += 1.0  # one second: one request's worth at 60 a minute
    assert limits.acquire("session:s") is None
    assert limits.acquire("session:s") is not None


def test_retry_after_says_how_long_until_the_next_request_is_allowed():
    limits, clock = limiter(concurrent=0, per_minute=6, burst=1)  # one every 10 s
    assert limits.acquire("address:1.2.3.4") is None
    clock.now += 4
    refused = limits.acquire("address:1.2.3.4")
    assert refused.retry_after == 6  # 10 s minus the 4 already waited
    assert "per client address" in refused.detail


def test_a_refused_request_is_not_counted():
    limits, _ = limiter(concurrent=1, per_minute=60, burst=2)
    assert limits.acquire("agent:a") is None
    assert limits.acquire("agent:a") is not None  # in flight: refused, no token spent
    limits.release("agent:a")
    assert limits.acquire("agent:a") is None  # the second token is still there
    assert limits.in_flight == {"agent:a": 1}


def test_zero_turns_the_limits_off():
    limits, _ = limiter(concurrent=0, per_minute=0)
    assert all(limits.acquire("agent:a") is None for _ in range(1000))


def test_idle_callers_are_forgotten_past_the_bound(monkeypatch):
    monkeypatch.setattr("meaning_memory.fairuse.MAX_TRACKED", 10)
    limits, clock = limiter(concurrent=0, per_minute=60, burst=3)
    for n in range(10):
        limits.acquire(f"address:{n}")
        limits.release(f"address:{n}")
    clock.now += 60  # every bucket full again
    limits.acquire("address:busy")  # in flight: kept

    limits.acquire("address:new")

    assert set(limits.buckets) == {"address:busy", "address:new"}


def scope(path="/api/v1/search", headers=(), client=("10.0.0.1", 5000)):
    return {"type": "http", "path": path, "headers": list(headers), "client": client}


def test_the_caller_is_the_token_else_the_session_else_the_address():
    bearer = scope(headers=[(b"authorization", b"Bearer secret-1")])
    other = scope(headers=[(b"authorization", b"Bearer secret-2")])
    session = scope(headers=[(b"cookie", b"csrftoken=x; sessionid=abc")])

    assert caller_key(bearer).startswith("agent:")
    assert "secret-1" not in caller_key(bearer)  # a hash, never the token itself
    assert caller_key(bearer) != caller_key(other)
    assert caller_key(session).startswith("session:")
    assert caller_key(scope()) == "address:10.0.0.1"


def no_tenants() -> Tenants:
    async def nobody(token_hash):
        return None

    return Tenants(lookup=nobody)


class Recorder:
    """An ASGI app that answers 200 once ``release`` is set, and counts who got through."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.reached = 0

    async def __call__(self, scope, receive, send) -> None:
        self.reached += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


async def answer(app, request_scope) -> tuple[int, dict[bytes, bytes], bytes]:
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app(request_scope, receive, send)
    start = sent[0]
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_the_middleware_answers_429_in_json_with_retry_after_and_lets_others_through():
    async def scenario():
        inner = Recorder()
        limits, _ = limiter(concurrent=2, per_minute=0)
        app = FairUse(inner, limits, FairQueue(slots=0, waiting_per_tenant=1), no_tenants())
        flooding = scope(headers=[(b"authorization", b"Bearer flood")])
        first = [asyncio.create_task(answer(app, flooding)) for _ in range(2)]
        await asyncio.sleep(0)
        status, headers, body = await answer(app, flooding)  # a third at once
        assert (status, inner.reached) == (429, 2)
        assert headers[b"content-type"] == b"application/json"
        assert headers[b"retry-after"] == b"1"
        assert "MM_RATE_CONCURRENT" in json.loads(body)["detail"]

        other = asyncio.create_task(
            answer(app, scope(headers=[(b"authorization", b"Bearer calm")]))
        )
        health = asyncio.create_task(
            answer(app, scope(path="/healthz", headers=flooding["headers"]))
        )
        await asyncio.sleep(0)
        assert inner.reached == 4  # the other agent and the health check got through
        inner.release.set()
        results = await asyncio.gather(*first, other, health)
        assert [r[0] for r in results] == [200, 200, 200, 200]
        assert limits.in_flight == {}  # every request released its place

    asyncio.run(scenario())


def test_a_refusal_is_answered_when_one_of_the_callers_requests_ends_one_each():
    """A client that sends again the moment it is refused is told no more often than its
    requests end (or once per ``pace``), and its next try finds a place."""

    async def scenario():
        inner = Recorder()
        limits, _ = limiter(concurrent=1, per_minute=0)
        app = FairUse(
            inner, limits, FairQueue(slots=0, waiting_per_tenant=1), no_tenants(), pace=30
        )
        flooding = scope(headers=[(b"authorization", b"Bearer flood")])
        first = asyncio.create_task(answer(app, flooding))
        await asyncio.sleep(0)
        refused = [asyncio.create_task(answer(app, flooding)) for _ in range(2)]
        await asyncio.sleep(0.05)
        assert not any(task.done() for task in refused)  # nothing ended: no answer yet
        assert inner.reached == 1
        inner.release.set()
        status, _, _ = await first
        assert status == 200
        done, pending = await asyncio.wait(refused, timeout=0.2)
        assert len(done) == 1 and len(pending) == 1  # one end, one refusal
        status, headers, body = done.pop().result()
        assert status == 429 and headers[b"retry-after"] == b"1"
        assert "MM_RATE_CONCURRENT" in json.loads(body)["detail"]
        assert await answer(app, flooding) == (200, {}, b"{}")  # the next try gets in ...
        status, _, _ = await pending.pop()  # ... and its end answers the other refusal
        assert status == 429
        assert app.refused == {} and limits.in_flight == {}

    asyncio.run(scenario())


def test_a_refusal_with_nothing_in_flight_is_answered_after_the_pace():
    async def scenario():
        limits, _ = limiter(concurrent=0, per_minute=60, burst=1)
        app = FairUse(
            Recorder(), limits, FairQueue(slots=0, waiting_per_tenant=1), no_tenants(), pace=0.1
        )
        limits.acquire(caller_key(scope()))  # the burst is spent
        loop = asyncio.get_running_loop()
        began = loop.time()
        status, _, body = await answer(app, scope())
        assert status == 429 and b"MM_RATE_PER_MINUTE" in body
        assert 0.09 <= loop.time() - began < 1.0
        assert app.refused == {}  # nothing kept for a caller that went

    asyncio.run(scenario())


def test_a_freed_slot_goes_to_the_tenant_whose_requests_cost_least_lately():
    async def scenario():
        clock = Clock()
        queue = FairQueue(slots=1, waiting_per_tenant=10, recent=0.5, clock=clock, half_life=2)
        for tenant, seconds in (("A", 3.0), ("B", 0.1)):  # A ran a bulk write, B a search
            await queue.enter(tenant)
            queue.leave(tenant, seconds)
        assert queue.cost("A") == pytest.approx(3.0) and queue.cost("B") == pytest.approx(0.1)
        clock.now += 2  # halved
        assert queue.cost("A") == pytest.approx(1.5)
        await queue.enter("C")  # holds the slot while A, then B, come
        admitted: list[str] = []

        async def request(tenant: str) -> None:
            await queue.enter(tenant)
            admitted.append(tenant)

        a = asyncio.create_task(request("A"))
        await asyncio.sleep(0)
        b = asyncio.create_task(request("B"))
        await asyncio.sleep(0)
        queue.leave("C", 0.01)
        await asyncio.sleep(0)
        assert admitted == ["B"]  # came second, cost least
        queue.leave("B", 0.01)
        await asyncio.gather(a, b)
        assert admitted == ["B", "A"]
        queue.leave("A", 0.01)
        clock.now += 60  # long quiet: costs halved to nothing are forgotten past a bound
        for n in range(70):
            await queue.enter(f"T{n}")
            queue.leave(f"T{n}")
        assert len(queue.spent) < 10

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("path", "content_type"),
    [("/mcp", b"application/json"), ("/w/acme/", b"text/plain; charset=utf-8")],
)
def test_the_refusal_is_json_for_agents_and_text_for_pages(path, content_type):
    async def scenario():
        limits, _ = limiter(concurrent=0, per_minute=60, burst=1)
        app = FairUse(Recorder(), limits, FairQueue(slots=0, waiting_per_tenant=1), no_tenants())
        limits.acquire(caller_key(scope(path=path)))
        status, headers, body = await answer(app, scope(path=path))
        assert status == 429 and headers[b"content-type"] == content_type
        assert b"MM_RATE_PER_MINUTE" in body

    asyncio.run(scenario())


def test_slots_are_handed_to_the_waiting_tenants_in_turn():
    async def scenario():
        queue = FairQueue(slots=1, waiting_per_tenant=10)
        admitted: list[str] = []
        await queue.enter("A")  # A's first request runs

        async def request(tenant: str, name: str) -> None:
            await queue.enter(tenant)
            admitted.append(name)

        waiting = [asyncio.create_task(request("A", f"A{n}")) for n in (1, 2, 3)]
        await asyncio.sleep(0)
        waiting.append(asyncio.create_task(request("B", "B1")))  # arrives after A's three
        await asyncio.sleep(0)
        assert queue.waiting() == 4 and admitted == []
        for leaving in ("A", "A", "B", "A"):  # each time, the request admitted last leaves
            queue.leave(leaving)
            await asyncio.sleep(0)
        await asyncio.gather(*waiting)
        assert admitted == ["A1", "B1", "A2", "A3"]  # B waited for one request of A's, not three
        queue.leave("A")
        assert queue.free == 1 and queue.waiting() == 0 and queue.running == {}

    asyncio.run(scenario())


def test_a_tenant_with_its_most_waiting_is_refused_and_a_cancelled_wait_leaves_no_trace():
    async def scenario():
        queue = FairQueue(slots=1, waiting_per_tenant=2)
        await queue.enter("A")
        first = asyncio.create_task(queue.enter("A"))
        second = asyncio.create_task(queue.enter("A"))
        await asyncio.sleep(0)
        with pytest.raises(QueueFull):
            await queue.enter("A")
        other = asyncio.create_task(queue.enter("B"))  # another tenant still queues
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.sleep(0)
        assert queue.waiting() == 2
        queue.leave("A")
        await asyncio.sleep(0)
        assert second.done() and not other.done()
        queue.leave("A")
        await asyncio.sleep(0)
        assert other.done()
        queue.leave("B")
        assert queue.free == 1 and queue.running == {} and queue.queues == {}

    asyncio.run(scenario())


def test_a_tenant_that_floods_leaves_a_slot_for_one_that_calls_now_and_then():
    async def scenario():
        clock = Clock()
        queue = FairQueue(slots=2, waiting_per_tenant=10, recent=1.0, clock=clock)
        await queue.enter("A")
        await queue.enter("A")  # alone, A may use both slots
        flood = [asyncio.create_task(queue.enter("A")) for _ in range(3)]
        b = asyncio.create_task(queue.enter("B"))
        await asyncio.sleep(0)
        assert queue.waiting() == 4

        queue.leave("A")  # B has nothing running: the slot is B's, though A came first
        await asyncio.sleep(0)
        assert b.done() and not any(t.done() for t in flood)

        queue.leave("B")  # B called a moment ago: A, holding its share (one), gets no second
        await asyncio.sleep(0)
        assert queue.free == 1 and not any(t.done() for t in flood)
        await queue.enter("B")  # so B's next request runs at once
        assert queue.running == {"A": 1, "B": 1}

        clock.now += 1.5  # B falls quiet: A has every slot again as they come free
        queue.leave("B")
        await asyncio.sleep(0)
        assert sum(t.done() for t in flood) == 1
        queue.leave("A")
        await asyncio.sleep(0)
        assert sum(t.done() for t in flood) == 2 and queue.running == {"A": 2}

    asyncio.run(scenario())


def test_a_slot_kept_for_a_quiet_tenant_is_handed_on_once_it_stops_counting():
    async def scenario():
        queue = FairQueue(slots=2, waiting_per_tenant=10, recent=0.05)
        await queue.enter("B")
        await queue.enter("A")
        waiting = asyncio.create_task(queue.enter("A"))
        queue.leave("B")  # B is still recent: A's second request waits beside a free slot
        await asyncio.sleep(0)
        assert not waiting.done() and queue.free == 1
        await asyncio.sleep(0.3)  # no request leaves; B stops counting after 0.05 s
        assert waiting.done() and queue.running == {"A": 2}

    asyncio.run(scenario())


def test_an_agents_tenant_is_its_workspace_looked_up_once_a_minute():
    async def scenario():
        lookups = []

        async def lookup(token_hash):
            lookups.append(token_hash)
            return 7 if token_hash == caller_of(agent_scope("known")).token_hash else None

        clock = Clock()
        tenants = Tenants(lookup=lookup, clock=clock)
        known, unknown = caller_of(agent_scope("known")), caller_of(agent_scope("unknown"))
        assert await tenants.of(known) == "workspace:7"
        assert await tenants.of(known) == "workspace:7"
        assert await tenants.of(unknown) == unknown.key  # a token of no agent: on its own
        assert len(lookups) == 2
        clock.now += 61
        await tenants.of(known)
        assert len(lookups) == 3
        session = caller_of(scope(headers=[(b"cookie", b"sessionid=abc")]))
        assert await tenants.of(session) == session.key  # no lookup for people

    asyncio.run(scenario())


def agent_scope(token: str) -> dict:
    return scope(headers=[(b"authorization", f"Bearer {token}".encode())])


def test_a_slow_body_holds_no_slot_and_an_oversized_one_is_413(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10

    async def scenario():
        inner = Recorder()
        inner.release.set()
        queue = FairQueue(slots=1, waiting_per_tenant=5)
        limits, _ = limiter(concurrent=4, per_minute=0)
        app = FairUse(inner, limits, queue, no_tenants())
        never = asyncio.Event()

        async def slow_receive():
            await never.wait()

        async def no_send(message):
            pass

        slow = asyncio.create_task(app(agent_scope("slow"), slow_receive, no_send))
        await asyncio.sleep(0)
        status, _, _ = await answer(app, agent_scope("other"))
        assert status == 200 and queue.free == 1  # the slow body never took the slot
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)  # its place is given back

        async def big_receive():
            return {"type": "http.request", "body": b"x" * 11, "more_body": False}

        sent = []

        async def record(message):
            sent.append(message)

        await app(agent_scope("big"), big_receive, record)
        assert sent[0]["status"] == 413
        assert "MM_MAX_BODY_BYTES" in json.loads(sent[1]["body"])["detail"]
        assert limits.in_flight == {}

    asyncio.run(scenario())
