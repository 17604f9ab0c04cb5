"""The counts fair use decides by (``meaning_memory.fairqueue``, ``meaning_memory.fairuse``):
each tenant's requests running and waiting, when its latest came, what its requests cost
lately, and each caller's requests in flight and rate bucket.

``LocalLedger`` keeps them in the process. ``SharedLedger`` keeps them in a file that every
web process of the machine maps into memory (``MM_FAIR_LEDGER``, which ``serve --web-workers
N`` sets), so that the slots, a tenant's share of them and a caller's limits hold across the
processes: a row per process and tenant (or caller), summed when read, under an exclusive lock
of the file (``flock``) held for microseconds. A process that dies (``kill -9``) leaves rows
whose process is gone; they are dropped the next time any process sweeps (each does every
``SWEEP_SECONDS``), so a dead process's requests never hold slots for long.

Both are used under ``with ledger.locked():`` (a no-op for the local one), from one thread.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import math
import mmap
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TENANT, CALLER, BUCKET = 1, 2, 3
#: Rows of a shared ledger: every process's tenants and callers with something counted.
ROWS = 8192
ROW = np.dtype(
    [
        ("pid", "<i4"),
        ("kind", "<i4"),
        ("key", "S16"),
        ("running", "<i4"),
        ("waiting", "<i4"),
        ("seen", "<f8"),
        ("cost", "<f8"),
        ("at", "<f8"),
    ],
    align=True,
)
HEADER = 64
MAGIC = b"mm-fair-ledger-1"
#: How often a process drops the rows of processes that are gone and its own idle rows.
SWEEP_SECONDS = 1.0


def _decayed(cost: np.ndarray | float, at, now: float, half_life: float):
    return cost * 0.5 ** ((now - at) / half_life)


class LocalLedger:
    """The counts of one process."""

    shared = False
    pid = 0

    def __init__(self) -> None:
        self._running: dict[str, int] = {}
        self._waiting: dict[str, int] = {}
        self._seen: dict[str, float] = {}
        self._spent: dict[str, tuple[float, float]] = {}
        self._in_flight: dict[str, int] = {}
        self._buckets: dict[str, tuple[float, float]] = {}

    @contextlib.contextmanager
    def locked(self) -> Iterator[LocalLedger]:
        yield self

    # Tenants.
    def running(self, tenant: str) -> int:
        return self._running.get(tenant, 0)

    def total(self) -> int:
        return sum(self._running.values())

    def active(self, horizon: float) -> int:
        recent = {t for t, when in self._seen.items() if when >= horizon}
        return len(recent | self._running.keys() | self._waiting.keys())

    def cost(self, tenant: str, now: float, half_life: float) -> float:
        cost, at = self._spent.get(tenant, (0.0, 0.0))
        return _decayed(cost, at, now, half_life) if cost else 0.0

    def held_back(self, slots: int, share: int) -> frozenset[int]:
        """No other process: none held back (``SharedLedger.held_back``)."""
        return frozenset()

    def best_waiting(
        self, share: int, now: float, half_life: float, skip: frozenset[int] = frozenset()
    ) -> tuple[int, float] | None:
        """The least (running, cost) of the waiting tenants under ``share``, or None."""
        keys = [
            (self.running(t), self.cost(t, now, half_life))
            for t in self._waiting
            if self.running(t) < share
        ]
        return min(keys, default=None)

    def mark_seen(self, tenant: str, now: float) -> None:
        self._seen[tenant] = now

    def add_running(self, tenant: str, delta: int) -> None:
        _add(self._running, tenant, delta)

    def add_waiting(self, tenant: str, delta: int) -> None:
        _add(self._waiting, tenant, delta)

    def add_cost(self, tenant: str, seconds: float, now: float, half_life: float) -> None:
        self._spent[tenant] = (self.cost(tenant, now, half_life) + seconds, now)

    def forget(self, horizon: float, now: float, half_life: float, past: int) -> None:
        """The tenants seen before ``horizon``; past ``past`` costs, the negligible ones."""
        for tenant in [t for t, when in self._seen.items() if when < horizon]:
            del self._seen[tenant]
        if len(self._spent) > past:
            for tenant in [
                t
                for t in self._spent
                if self.cost(t, now, half_life) < 1e-3 and t not in self._running
            ]:
                del self._spent[tenant]

    # Callers.
    def in_flight(self, caller: str) -> int:
        return self._in_flight.get(caller, 0)

    def add_in_flight(self, caller: str, delta: int) -> None:
        _add(self._in_flight, caller, delta)

    def bucket(self, caller: str) -> tuple[float, float] | None:
        return self._buckets.get(caller)

    def set_bucket(self, caller: str, tokens: float, updated: float) -> None:
        self._buckets[caller] = (tokens, updated)

    def callers(self) -> int:
        return len(self._buckets)

    def forget_full_buckets(self, full) -> None:
        for caller, (tokens, updated) in list(self._buckets.items()):
            if full(tokens, updated) and caller not in self._in_flight:
                del self._buckets[caller]


def _add(counts: dict[str, int], key: str, delta: int) -> None:
    value = counts.get(key, 0) + delta
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)


def _key(name: str) -> bytes:
    return hashlib.sha256(name.encode()).digest()[:16]


@dataclass
class _Tenants:
    """Every process's tenant rows summed by tenant (a key): what one look reads."""

    FIELDS = ("pid", "key", "running", "waiting", "seen", "cost", "at")

    running: dict[bytes, int] = field(default_factory=dict)
    #: The processes each tenant has requests waiting in.
    waiting_in: dict[bytes, set[int]] = field(default_factory=dict)
    #: When each tenant was seen last, in any process.
    seen: dict[bytes, float] = field(default_factory=dict)
    #: Each tenant's costs and when they were counted (one per process).
    spent: dict[bytes, list[tuple[float, float]]] = field(default_factory=dict)
    #: The requests each process with tenants runs.
    processes: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, pids, keys, running, waiting, seen, cost, at) -> _Tenants:
        summed = cls()
        for pid, key, runs, waits, when, spent, spent_at in zip(
            pids, keys, running, waiting, seen, cost, at, strict=True
        ):
            summed.running[key] = summed.running.get(key, 0) + runs
            summed.processes[pid] = summed.processes.get(pid, 0) + runs
            if waits > 0:
                summed.waiting_in.setdefault(key, set()).add(pid)
            summed.seen[key] = max(summed.seen.get(key, when), when)
            if spent:
                summed.spent.setdefault(key, []).append((spent, spent_at))
        return summed

    def cost(self, key: bytes, now: float, half_life: float) -> float:
        return sum(_decayed(cost, at, now, half_life) for cost, at in self.spent.get(key, ()))


class SharedLedger:
    """The counts of every web process mapping ``path`` (the module's docstring)."""

    shared = True

    def __init__(self, path: Path, pid: int | None = None, clock=time.monotonic) -> None:
        self.path, self.pid, self.clock = Path(path), pid or os.getpid(), clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        size = HEADER + ROWS * ROW.itemsize
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            if os.fstat(self._fd).st_size != size or os.pread(self._fd, 16, 0) != MAGIC:
                os.ftruncate(self._fd, 0)
                os.ftruncate(self._fd, size)
                os.pwrite(self._fd, MAGIC, 0)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._map = mmap.mmap(self._fd, size)
        self.rows = np.frombuffer(self._map, dtype=ROW, count=ROWS, offset=HEADER)
        self._names: dict[str, bytes] = {}
        self._summed: _Tenants | None = None  # the tenant rows summed, until a change
        self._mine: dict[tuple[int, bytes], int] = {}  # this process's rows, where they are
        self._swept = 0.0
        self._depth = 0
        with self.locked():  # a dead process whose id this one now has left its counts
            mine = self.rows["pid"] == self.pid
            self.rows["pid"][mine & (self.rows["kind"] != BUCKET)] = 0

    @contextlib.contextmanager
    def locked(self) -> Iterator[SharedLedger]:
        if self._depth:  # already held by this process's caller
            yield self
            return
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        self._depth += 1
        try:
            if self.clock() - self._swept > SWEEP_SECONDS:
                self._sweep()
            yield self
        finally:
            self._depth -= 1
            self._summed = None  # other processes change the rows once the lock is let go
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _key(self, name: str) -> bytes:
        key = self._names.get(name)
        if key is None:
            if len(self._names) > ROWS:
                self._names.clear()
            # (stripped as numpy reads a key back: a digest may end in a zero byte)
            key = self._names[name] = _key(name).rstrip(b"\0")
        return key

    def _of(self, kind: int, name: str) -> np.ndarray:
        rows = self.rows
        return (rows["kind"] == kind) & (rows["key"] == self._key(name)) & (rows["pid"] != 0)

    def _own(self, kind: int, name: str, pid: int | None = None) -> int:
        """This process's row of ``name`` (made if need be); its counts are about to change."""
        self._summed = None
        rows, pid, key = self.rows, self.pid if pid is None else pid, self._key(name)
        row = self._mine.get((kind, key), -1) if pid == self.pid else -1
        if row >= 0 and (rows["pid"][row], rows["kind"][row], rows["key"][row]) == (pid, kind, key):
            return row
        found = np.flatnonzero(self._of(kind, name) & (rows["pid"] == pid))
        if found.size:
            if pid == self.pid:
                if len(self._mine) > ROWS:
                    self._mine.clear()
                self._mine[(kind, key)] = int(found[0])
            return int(found[0])
        free = np.flatnonzero(rows["pid"] == 0)
        if not free.size:
            self._sweep(everything=True)
            free = np.flatnonzero(rows["pid"] == 0)
        if not free.size:
            # Full of callers seen once (say, a cookie made up for each request): the idle row
            # of any process seen longest ago goes, a full rate bucket first.
            idle = np.flatnonzero((rows["running"] == 0) & (rows["waiting"] == 0))
            if not idle.size:
                raise RuntimeError(f"the fair use ledger {self.path} is full ({ROWS} rows)")
            order = np.lexsort((rows["seen"][idle], rows["kind"][idle] != BUCKET))
            free = idle[order[:1]]
        row = int(free[0])
        rows[row] = (pid, kind, self._key(name), 0, 0, 0.0, 0.0, 0.0)
        return row

    # Tenants: read from one sum of every process's rows (``_tenants``) per look.
    def _tenants(self) -> _Tenants:
        if self._summed is None:
            rows = self.rows
            used = np.flatnonzero((rows["kind"] == TENANT) & (rows["pid"] != 0))
            self._summed = _Tenants.of(*(rows[name][used].tolist() for name in _Tenants.FIELDS))
        return self._summed

    def running(self, tenant: str) -> int:
        return self._tenants().running.get(self._key(tenant), 0)

    def total(self) -> int:
        return sum(self._tenants().running.values())

    def active(self, horizon: float) -> int:
        tenants = self._tenants()
        return sum(
            1
            for key, seen in tenants.seen.items()
            if seen >= horizon or tenants.running.get(key) or key in tenants.waiting_in
        )

    def cost(self, tenant: str, now: float, half_life: float) -> float:
        return self._tenants().cost(self._key(tenant), now, half_life)

    def held_back(self, slots: int, share: int) -> frozenset[int]:
        """The processes that run their part of ``slots`` (shared out among the processes with
        tenants) or more while another process has a request waiting that may run (its tenant
        under ``share``): a slot freed goes to that request, so that the requests running are
        spread over the processes (each runs Python on one core at a time) instead of queueing
        for one's lock."""
        tenants = self._tenants()
        if len(tenants.processes) < 2:
            return frozenset()
        ready = {  # the processes with a request waiting that may run
            pid
            for key, pids in tenants.waiting_in.items()
            if tenants.running.get(key, 0) < share
            for pid in pids
        }
        if not ready:
            return frozenset()
        part = math.ceil(slots / len(tenants.processes))
        return frozenset(
            pid for pid, running in tenants.processes.items() if running >= part and ready - {pid}
        )

    def best_waiting(
        self, share: int, now: float, half_life: float, skip: frozenset[int] = frozenset()
    ) -> tuple[int, float] | None:
        """The least (running, cost) of the tenants waiting in any process under ``share``,
        not counting those waiting only in the processes ``skip``."""
        tenants = self._tenants()
        return min(
            (
                (tenants.running.get(key, 0), tenants.cost(key, now, half_life))
                for key, pids in tenants.waiting_in.items()
                if tenants.running.get(key, 0) < share and pids - skip
            ),
            default=None,
        )

    def mark_seen(self, tenant: str, now: float) -> None:
        self.rows["seen"][self._own(TENANT, tenant)] = now

    def add_running(self, tenant: str, delta: int) -> None:
        self.rows["running"][self._own(TENANT, tenant)] += delta

    def add_waiting(self, tenant: str, delta: int) -> None:
        self.rows["waiting"][self._own(TENANT, tenant)] += delta

    def add_cost(self, tenant: str, seconds: float, now: float, half_life: float) -> None:
        row = self._own(TENANT, tenant)
        rows = self.rows
        rows["cost"][row] = _decayed(rows["cost"][row], rows["at"][row], now, half_life) + seconds
        rows["at"][row] = now

    def forget(self, horizon: float, now: float, half_life: float, past: int) -> None:
        """Nothing to do at once: idle rows are dropped by the sweep."""

    # Callers.
    def in_flight(self, caller: str) -> int:
        return int(self.rows["running"][self._of(CALLER, caller)].sum())

    def add_in_flight(self, caller: str, delta: int) -> None:
        self.rows["running"][self._own(CALLER, caller)] += delta

    def bucket(self, caller: str) -> tuple[float, float] | None:
        found = np.flatnonzero(self._of(BUCKET, caller))
        if not found.size:
            return None
        row = self.rows[int(found[0])]
        return float(row["cost"]), float(row["at"])

    def set_bucket(self, caller: str, tokens: float, updated: float) -> None:
        # One bucket per caller for every process: held by the first process that made it,
        # then by whoever sweeps that process away.
        found = np.flatnonzero(self._of(BUCKET, caller))
        row = int(found[0]) if found.size else self._own(BUCKET, caller)
        self.rows["cost"][row], self.rows["at"][row] = tokens, updated

    def callers(self) -> int:
        rows = self.rows
        return int(((rows["kind"] == BUCKET) & (rows["pid"] != 0)).sum())

    def forget_full_buckets(self, full) -> None:
        """Nothing to do at once: full buckets are dropped by the sweep (``bucket_full``)."""

    #: Set by ``fairuse.Limiter``: whether a bucket's tokens, as counted at ``at``, are full now.
    bucket_full = None

    def _sweep(self, everything: bool = False) -> None:
        """Drop the rows of processes that are gone, and this process's idle ones."""
        self._summed = None
        self._swept = now = self.clock()
        rows = self.rows
        for pid in np.unique(rows["pid"][rows["pid"] != 0]):
            if int(pid) != self.pid and not _alive(int(pid)):
                gone = rows["pid"] == pid
                # A caller's bucket outlives the process that held it.
                buckets = gone & (rows["kind"] == BUCKET)
                rows["pid"][buckets] = self.pid
                rows["pid"][gone & ~buckets] = 0
        mine = rows["pid"] == self.pid
        idle = (
            mine
            & (rows["kind"] != BUCKET)
            & (rows["running"] == 0)
            & (rows["waiting"] == 0)
            & (rows["seen"] < now - 60.0)
            & (_decayed(rows["cost"], rows["at"], now, 2.0) < 1e-3)
        )
        rows["pid"][idle] = 0
        if self.bucket_full is not None:
            full = mine & (rows["kind"] == BUCKET)
            for row in np.flatnonzero(full):
                if self.bucket_full(float(rows["cost"][row]), float(rows["at"][row])):
                    key = bytes(rows["key"][row])
                    busy = (rows["kind"] == CALLER) & (rows["key"] == key) & (rows["running"] > 0)
                    if not busy.any():
                        rows["pid"][row] = 0
        if everything:
            rows["pid"][
                mine
                & (rows["kind"] != BUCKET)
                & (rows["seen"] < now - 1.0)
                & (rows["running"] == 0)
                & (rows["waiting"] == 0)
            ] = 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
