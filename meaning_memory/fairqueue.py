"""The fair queue of the web processes (``meaning_memory.fairuse`` applies it): at most so
many requests run at once, the others wait in one queue per tenant, and a slot that comes free
goes to the tenant that has had least of them lately."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable

from meaning_memory.ledger import LocalLedger, SharedLedger

#: A tenant whose latest request came this many seconds ago or less still counts as active
#: when the slots are shared out (an agent pauses between its calls).
RECENT_SECONDS = 1.0
#: A tenant's cost (the seconds its requests held slots) halves every so many seconds.
COST_HALF_LIFE = 2.0
#: Past this many tenants with a cost, those whose cost has halved to under a millisecond
#: and have nothing running are forgotten.
FORGET_COSTS_PAST = 64
#: How often a process with waiting requests looks at a shared ledger for a slot another
#: process freed.
POLL_SECONDS = 0.005


class QueueFull(Exception):
    pass


class FairQueue:
    """At most ``slots`` requests run at once; the rest wait, one queue per tenant.

    A freed slot goes to a waiting tenant with the fewest requests running; among equals, to
    the one whose requests held slots for the fewest seconds lately (its cost: the seconds
    each request held its slot, halving every ``COST_HALF_LIFE`` seconds, so a long query or a
    bulk write counts for more than a short search), then in turn (round robin). While several
    tenants are active (a request running or waiting, or one that came in the last ``recent``
    seconds), none runs more than its share of the slots (``slots`` over the active tenants,
    at least one): a tenant that floods the process leaves a slot free for one that calls now
    and then, instead of making it wait behind requests that were running when it came.
    The counts are a ledger's (``meaning_memory.ledger``): the process's own, or, with
    ``MM_FAIR_LEDGER``, every web process's of the machine, so that ``slots`` and the shares
    hold across them; a process whose waiting tenants a slot freed in another process may
    serve looks again every ``POLL_SECONDS``. A process that runs its part of the slots while
    another has requests waiting leaves the next free slot to that one (``held_back``), so the
    running requests spread over the processes' cores. Used from the event loop only."""

    def __init__(
        self,
        *,
        slots: int,
        waiting_per_tenant: int,
        recent: float = RECENT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        half_life: float = COST_HALF_LIFE,
        ledger: LocalLedger | SharedLedger | None = None,
    ) -> None:
        self.slots = slots
        self.waiting_per_tenant = waiting_per_tenant
        self.recent, self.clock = recent, clock
        self.ledger = ledger or LocalLedger()
        self.queues: dict[str, deque[asyncio.Future[None]]] = {}
        self.turns: deque[str] = deque()  # tenants with someone waiting, in the order served
        self.half_life = half_life
        self._recheck: asyncio.TimerHandle | None = None

    # What the tests and the refusals read.
    @property
    def free(self) -> int:
        with self.ledger.locked() as ledger:
            return self.slots - ledger.total()

    @property
    def running(self) -> dict[str, int]:
        """This process's tenants' running requests (a local ledger's)."""
        return dict(getattr(self.ledger, "_running", {}))

    @property
    def spent(self) -> dict[str, tuple[float, float]]:
        return dict(getattr(self.ledger, "_spent", {}))

    def cost(self, tenant: str) -> float:
        """The seconds ``tenant``'s requests held slots, each halved per ``half_life`` since."""
        with self.ledger.locked() as ledger:
            return ledger.cost(tenant, self.clock(), self.half_life)

    def share(self) -> int:
        """How many slots one tenant may hold now."""
        with self.ledger.locked() as ledger:
            return self._share(ledger, self.clock())

    def _share(self, ledger, now: float) -> int:
        return max(1, math.ceil(self.slots / max(ledger.active(now - self.recent), 1)))

    def _first(self, ledger, tenant: str, share: int, now: float, held: frozenset[int]) -> bool:
        """Whether ``tenant`` may take a free slot before every tenant waiting anywhere (but
        in the processes ``held`` back, which may not take it)."""
        mine = (ledger.running(tenant), ledger.cost(tenant, now, self.half_life))
        best = ledger.best_waiting(share, now, self.half_life, skip=held)
        return best is None or mine <= best

    async def enter(self, tenant: str) -> None:
        """Wait for a slot (QueueFull if ``tenant`` already has its most waiting)."""
        if not self.slots:
            return
        with self.ledger.locked() as ledger:
            now = self.clock()
            ledger.mark_seen(tenant, now)
            share = self._share(ledger, now)
            held = ledger.held_back(self.slots, share)
            if (
                not self.turns
                and ledger.total() < self.slots
                and ledger.running(tenant) < share
                and ledger.pid not in held
                and self._first(ledger, tenant, share, now, held)
            ):
                ledger.add_running(tenant, 1)
                return
            queue = self.queues.setdefault(tenant, deque())
            if len(queue) >= self.waiting_per_tenant:
                if not queue:
                    del self.queues[tenant]
                raise QueueFull
            ledger.add_waiting(tenant, 1)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(turn)
        if tenant not in self.turns:
            self.turns.append(tenant)
        self._dispatch()  # a free slot that no one else may take now
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.leave(tenant)  # the slot was handed over just as the wait was cancelled
            else:
                self._forget(tenant, turn)
            raise

    def leave(self, tenant: str, seconds: float = 0.0) -> None:
        """A request of ``tenant`` left its slot after ``seconds``: hand it on, or free it."""
        if not self.slots:
            return
        with self.ledger.locked() as ledger:
            now = self.clock()
            ledger.add_cost(tenant, max(seconds, 0.0), now, self.half_life)
            ledger.add_running(tenant, -1)
            ledger.forget(now - self.recent, now, self.half_life, FORGET_COSTS_PAST)
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free slots to waiting tenants under their share, fewest running first."""
        while self.turns:
            with self.ledger.locked() as ledger:
                now = self.clock()
                if ledger.total() >= self.slots:
                    if self.ledger.shared:  # another process may free one
                        self._dispatch_later(POLL_SECONDS)
                    return
                share = self._share(ledger, now)
                held = ledger.held_back(self.slots, share)
                if ledger.pid in held:  # a request waiting in another process goes first
                    self._dispatch_later(POLL_SECONDS)
                    return
                eligible = [t for t in self.turns if ledger.running(t) < share]
                if not eligible:
                    # Every waiting tenant holds its share: the slot stays free for the others
                    # until a request leaves or their share grows (an idle tenant stops
                    # counting).
                    # (With a shared ledger a request may also leave in another process.)
                    self._dispatch_later(POLL_SECONDS if self.ledger.shared else self.recent)
                    return
                keys = {
                    t: (ledger.running(t), ledger.cost(t, now, self.half_life)) for t in eligible
                }
                tenant = min(eligible, key=keys.__getitem__)
                if not self._first(ledger, tenant, share, now, held):
                    self._dispatch_later(POLL_SECONDS)  # another process's tenant goes first
                    return
                self.turns.remove(tenant)
                queue = self.queues[tenant]
                turn = queue.popleft()
                if queue:
                    self.turns.append(tenant)  # back of the line for its next request
                else:
                    del self.queues[tenant]
                ledger.add_waiting(tenant, -1)
                if turn.done():
                    continue
                ledger.add_running(tenant, 1)
            turn.set_result(None)

    def _dispatch_later(self, delay: float) -> None:
        """Look again in ``delay`` seconds (or sooner, if a look is due sooner already)."""
        loop = asyncio.get_running_loop()
        if self._recheck is not None:
            if self._recheck.when() <= loop.time() + delay:
                return
            self._recheck.cancel()

        def recheck() -> None:
            self._recheck = None
            self._dispatch()

        self._recheck = loop.call_later(delay, recheck)

    def _forget(self, tenant: str, turn: asyncio.Future[None]) -> None:
        queue = self.queues.get(tenant)
        if queue is None or turn not in queue:
            return
        queue.remove(turn)
        with self.ledger.locked() as ledger:
            ledger.add_waiting(tenant, -1)
        if not queue:
            del self.queues[tenant]
            self.turns.remove(tenant)

    def waiting(self) -> int:
        return sum(len(queue) for queue in self.queues.values())
