"""The fair queue of a web process (``meaning_memory.fairuse`` applies it): at most so many
requests run at once, the others wait in one queue per tenant, and a slot that comes free goes
to the tenant that has had least of them lately."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable

#: A tenant whose latest request came this many seconds ago or less still counts as active
#: when the slots are shared out (an agent pauses between its calls).
RECENT_SECONDS = 1.0
#: A tenant's cost (the seconds its requests held slots) halves every so many seconds.
COST_HALF_LIFE = 2.0
#: Past this many tenants with a cost, those whose cost has halved to under a millisecond
#: and have nothing running are forgotten.
FORGET_COSTS_PAST = 64


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
    Used from the event loop only."""

    def __init__(
        self,
        *,
        slots: int,
        waiting_per_tenant: int,
        recent: float = RECENT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        half_life: float = COST_HALF_LIFE,
    ) -> None:
        self.slots = slots
        self.free = slots
        self.waiting_per_tenant = waiting_per_tenant
        self.recent, self.clock = recent, clock
        self.queues: dict[str, deque[asyncio.Future[None]]] = {}
        self.turns: deque[str] = deque()  # tenants with someone waiting, in the order served
        self.running: dict[str, int] = {}
        self.seen: dict[str, float] = {}  # when each tenant's latest request came
        self.half_life = half_life
        self.spent: dict[str, tuple[float, float]] = {}  # tenant: (cost, when counted)
        self._recheck: asyncio.TimerHandle | None = None

    def share(self) -> int:
        """How many slots one tenant may hold now."""
        horizon = self.clock() - self.recent
        for tenant in [t for t, when in self.seen.items() if when < horizon]:
            del self.seen[tenant]
        active = len(self.seen.keys() | self.running.keys() | self.queues.keys())
        return max(1, math.ceil(self.slots / max(active, 1)))

    async def enter(self, tenant: str) -> None:
        """Wait for a slot (QueueFull if ``tenant`` already has its most waiting)."""
        if not self.slots:
            return
        self.seen[tenant] = self.clock()
        if self.free > 0 and not self.turns and self.running.get(tenant, 0) < self.share():
            self._take(tenant)
            return
        queue = self.queues.setdefault(tenant, deque())
        if len(queue) >= self.waiting_per_tenant:
            if not queue:
                del self.queues[tenant]
            raise QueueFull
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

    def cost(self, tenant: str) -> float:
        """The seconds ``tenant``'s requests held slots, each halved per ``half_life`` since."""
        cost, when = self.spent.get(tenant, (0.0, 0.0))
        return cost * 0.5 ** ((self.clock() - when) / self.half_life) if cost else 0.0

    def leave(self, tenant: str, seconds: float = 0.0) -> None:
        """A request of ``tenant`` left its slot after ``seconds``: hand it on, or free it."""
        if not self.slots:
            return
        self.spent[tenant] = (self.cost(tenant) + max(seconds, 0.0), self.clock())
        if len(self.spent) > FORGET_COSTS_PAST:
            for quiet in [t for t in self.spent if self.cost(t) < 1e-3 and t not in self.running]:
                del self.spent[quiet]
        self.running[tenant] -= 1
        if not self.running[tenant]:
            del self.running[tenant]
        self.free += 1
        self._dispatch()

    def _take(self, tenant: str) -> None:
        self.free -= 1
        self.running[tenant] = self.running.get(tenant, 0) + 1

    def _dispatch(self) -> None:
        """Hand free slots to waiting tenants under their share, fewest running first."""
        while self.free > 0 and self.turns:
            share = self.share()
            eligible = [t for t in self.turns if self.running.get(t, 0) < share]
            if not eligible:
                # Every waiting tenant holds its share: the slot stays free for the others
                # until a request leaves or their share grows (an idle tenant stops counting).
                self._dispatch_later()
                return
            tenant = min(eligible, key=lambda t: (self.running.get(t, 0), self.cost(t)))
            self.turns.remove(tenant)
            queue = self.queues[tenant]
            turn = queue.popleft()
            if queue:
                self.turns.append(tenant)  # back of the line for its next request
            else:
                del self.queues[tenant]
            if not turn.done():
                self._take(tenant)
                turn.set_result(None)

    def _dispatch_later(self) -> None:
        if self._recheck is None:

            def recheck() -> None:
                self._recheck = None
                self._dispatch()

            self._recheck = asyncio.get_running_loop().call_later(self.recent, recheck)

    def _forget(self, tenant: str, turn: asyncio.Future[None]) -> None:
        queue = self.queues.get(tenant)
        if queue is None or turn not in queue:
            return
        queue.remove(turn)
        if not queue:
            del self.queues[tenant]
            self.turns.remove(tenant)

    def waiting(self) -> int:
        return sum(len(queue) for queue in self.queues.values())
