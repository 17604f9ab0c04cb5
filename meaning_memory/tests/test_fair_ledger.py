"""Fair use counted across web processes (``meaning_memory.ledger.SharedLedger``): two
processes' queues and limiters on one ledger file keep the slots, a tenant's share, a caller's
requests in flight and its rate bucket together; a slot freed in one process goes to a tenant
waiting in the other, before the flooding tenant's next request; a process that runs its part
of the slots leaves the next one to a request waiting in the other; the rows of a process that
died are dropped."""

from __future__ import annotations

import asyncio
import os
import subprocess

import pytest

from meaning_memory import ledger as ledger_module
from meaning_memory.fairqueue import FairQueue
from meaning_memory.fairuse import Limiter
from meaning_memory.ledger import SharedLedger


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def two_processes(path, clock=None):
    """Two ledgers on one file, as two live processes (this one and its parent)."""
    kwargs = {} if clock is None else {"clock": clock}
    return SharedLedger(path, pid=os.getpid(), **kwargs), SharedLedger(
        path, pid=os.getppid(), **kwargs
    )


def queues(path, slots=2, clock=None):
    first, second = two_processes(path, clock)
    extra = {} if clock is None else {"clock": clock}
    return (
        FairQueue(slots=slots, waiting_per_tenant=10, ledger=first, **extra),
        FairQueue(slots=slots, waiting_per_tenant=10, ledger=second, **extra),
    )


def test_the_slots_are_counted_across_processes(tmp_path):
    async def scenario():
        a, b = queues(tmp_path / "ledger", slots=2)
        await a.enter("T")
        await b.enter("T")
        assert a.free == b.free == 0
        third = asyncio.ensure_future(a.enter("T"))
        await asyncio.sleep(0.02)
        assert not third.done()  # each process alone would have had a slot free
        b.leave("T", 0.01)  # freed in the other process
        await asyncio.wait_for(third, 1)
        a.leave("T")
        a.leave("T")
        assert a.free == b.free == 2

    asyncio.run(scenario())


def test_a_neighbour_waiting_in_one_process_gets_the_slot_freed_in_the_other(tmp_path):
    async def scenario():
        a, b = queues(tmp_path / "ledger", slots=2)
        await a.enter("flood")
        await a.enter("flood")
        flood_next = asyncio.ensure_future(a.enter("flood"))  # waits in process a
        await asyncio.sleep(0.01)
        neighbour = asyncio.ensure_future(b.enter("neighbour"))  # waits in process b
        await asyncio.sleep(0.01)
        assert not flood_next.done() and not neighbour.done()
        a.leave("flood", 0.5)  # process a frees a slot: its own flood waits, b's neighbour goes
        await asyncio.wait_for(neighbour, 1)
        await asyncio.sleep(0.02)
        assert not flood_next.done()  # the flood holds its share (one of two)
        b.leave("neighbour", 0.01)
        # The neighbour counts as active for a second after its request (an agent pauses
        # between calls): then the flood's share is both slots again.
        await asyncio.wait_for(flood_next, 3)

    asyncio.run(scenario())


def test_the_running_requests_spread_over_the_processes_while_both_have_some_waiting(tmp_path):
    """One tenant's requests in both processes (its connections landed in each): the slot
    process a frees goes to the request waiting in b while a already runs its part (one of
    two), and back to a's own when b runs its part; a process alone takes every slot."""

    async def scenario():
        a, b = queues(tmp_path / "ledger", slots=2)
        await a.enter("T")
        await a.enter("T")  # b has no requests: a may run both
        in_b = asyncio.ensure_future(b.enter("T"))
        await asyncio.sleep(0.01)
        in_a = asyncio.ensure_future(a.enter("T"))
        await asyncio.sleep(0.01)
        assert not in_b.done() and not in_a.done()
        a.leave("T", 0.01)  # a still runs one, its part: b's request goes, not a's own
        await asyncio.wait_for(in_b, 1)
        await asyncio.sleep(0.02)
        assert not in_a.done()
        b.leave("T", 0.01)  # a slot b frees goes to a's
        await asyncio.wait_for(in_a, 1)
        a.leave("T")
        a.leave("T")
        assert a.free == 2 and a.ledger.held_back(2, 2) == frozenset()

    asyncio.run(scenario())


def test_a_neighbour_runs_at_once_beside_a_flood_held_to_its_share_in_both_processes(tmp_path):
    """The flood runs one request in process a and waits in b (its share is one slot of two
    while the neighbour is active): the neighbour's request in a takes the free slot at once,
    though a runs its part, since b's waiting request may not run anyway."""

    async def scenario():
        a, b = queues(tmp_path / "ledger", slots=2)
        with a.ledger.locked() as ledger:
            ledger.mark_seen("neighbour", a.clock())  # it called a moment ago
        await a.enter("flood")
        flood_b = asyncio.ensure_future(b.enter("flood"))
        await asyncio.sleep(0.01)
        assert not flood_b.done()  # its share (one) runs in a
        await asyncio.wait_for(a.enter("neighbour"), 0.05)
        a.leave("neighbour")
        a.leave("flood")
        await asyncio.wait_for(flood_b, 1)
        b.leave("flood")

    asyncio.run(scenario())


def test_a_tenant_whose_key_ends_in_a_zero_byte_is_counted_as_any_other(tmp_path):
    """A tenant's key is a digest; numpy reads one ending in zero bytes back without them."""
    name = next(f"tenant-{i}" for i in range(100_000) if ledger_module._key(f"tenant-{i}")[-1] == 0)
    a, b = two_processes(tmp_path / "ledger")
    with a.locked() as ledger:
        ledger.add_running(name, 1)
        ledger.add_waiting(name, 1)
        ledger.add_running(name, 1)  # its own row found again, not a second one
    with b.locked() as ledger:
        ledger.add_running(name, 1)
        assert (ledger.running(name), ledger.total(), ledger.active(0.0)) == (3, 3, 1)
        assert ledger.best_waiting(4, 0.0, 2.0) == (3, 0.0)
    assert int((a.rows["pid"] != 0).sum()) == 2


def test_a_callers_requests_in_flight_and_its_rate_are_counted_across_processes(tmp_path):
    clock = Clock()
    first, second = two_processes(tmp_path / "ledger", clock)
    a = Limiter(concurrent=2, per_minute=60, burst=3, clock=clock, ledger=first)
    b = Limiter(concurrent=2, per_minute=60, burst=3, clock=clock, ledger=second)
    assert a.acquire("agent:x") is None
    assert b.acquire("agent:x") is None
    refused = a.acquire("agent:x")
    assert refused is not None and "MM_RATE_CONCURRENT" in refused.detail
    b.release("agent:x")
    assert a.acquire("agent:x") is None  # the third of the burst of 3
    a.release("agent:x")
    a.release("agent:x")
    refused = b.acquire("agent:x")  # the bucket is empty in every process
    assert refused is not None and "MM_RATE_PER_MINUTE" in refused.detail
    clock.now += 1.0  # one token a second
    assert b.acquire("agent:x") is None
    assert b.acquire("agent:y") is None  # another caller has its own


def test_the_rows_of_a_process_that_died_are_dropped(tmp_path, monkeypatch):
    clock = Clock()
    dead = subprocess.Popen(["true"])
    dead.wait()
    path = tmp_path / "ledger"
    gone = SharedLedger(path, pid=dead.pid, clock=clock)
    with gone.locked() as ledger:
        ledger.add_running("T", 2)  # it died holding both slots
        ledger.add_in_flight("agent:x", 2)
    alive = SharedLedger(path, pid=os.getpid(), clock=clock)
    queue = FairQueue(slots=2, waiting_per_tenant=10, ledger=alive, clock=clock)
    limiter = Limiter(concurrent=2, per_minute=0, burst=1, clock=clock, ledger=alive)

    async def scenario():
        clock.now += ledger_module.SWEEP_SECONDS + 0.1
        await asyncio.wait_for(queue.enter("T"), 1)
        assert queue.free == 1
        assert limiter.acquire("agent:x") is None

    asyncio.run(scenario())


def test_a_ledger_file_of_another_shape_is_started_again(tmp_path):
    path = tmp_path / "ledger"
    path.write_bytes(b"not a ledger")
    ledger = SharedLedger(path, pid=os.getpid())
    with ledger.locked() as counts:
        assert counts.total() == 0
        counts.add_running("T", 1)
    assert SharedLedger(path, pid=os.getppid()).running("T") == 1  # another process reads it
    # A process that opens it under this process's id (a dead one's, reused) starts clean.
    assert SharedLedger(path, pid=os.getpid()).running("T") == 0


def test_a_full_ledger_makes_room_from_idle_rows_and_says_so_when_none_is_idle(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(ledger_module, "ROWS", 4)
    clock = Clock()
    ledger = SharedLedger(tmp_path / "ledger", pid=os.getpid(), clock=clock)
    with ledger.locked() as counts:
        for n in range(4):  # callers seen once each, nothing in flight, within the second
            clock.now += 0.1
            counts.mark_seen(f"T{n}", clock.now)
        counts.add_running("T4", 1)  # the oldest idle row (T0) made room
        assert counts.running("T4") == 1
        assert counts.active(0.0) == 4  # T1, T2, T3 and T4
        for n in range(1, 4):
            counts.add_running(f"T{n}", 1)
        with pytest.raises(RuntimeError, match="is full"):
            counts.add_running("T5", 1)  # every row has a request running
