"""Reads on a streaming replica (``DATABASE_REPLICA_URL``), without an agent missing its own
writes.

Search, the compiled memory file and the memories list, over REST and MCP, run through
``read_as(agent, work)``, which picks the database ``work`` reads from:

- no replica configured: the primary, and nothing else happens here;
- the replica cannot be reached, or is not a standby: the primary (tried again after
  ``MM_REPLICA_RETRY_SECONDS``);
- the replica is further behind than ``MM_REPLICA_MAX_LAG_SECONDS``: the primary, for everyone;
- the agent wrote within ``MM_READ_YOUR_WRITES_SECONDS``, or after the replica's *horizon*:
  the primary;
- otherwise the replica. If it fails while reading (it went away, or cancelled the statement
  for a conflict with recovery), ``work`` runs again on the primary: a read changes nothing, so
  running it twice is safe.

**The horizon** is an instant before which every committed transaction is on the replica. A
probe finds it, at most every ``MM_REPLICA_CHECK_SECONDS`` per process: first the primary's WAL
position and clock, then the replica's replayed position and the commit time of the last
transaction it replayed. A replica that has replayed up to the primary's position holds
everything committed before the probe began; one behind holds everything up to its last
replayed commit, or up to an earlier probe whose position it has since passed. Each agent's
last write (``Agent.wrote_at``) is stamped after its transaction commits, by the primary's
clock, as the horizon is (commit times travel in the WAL), so no two machines' clocks are
compared. The probe is a cache whose staleness is bounded by its interval, and it errs one
way: an older horizon sends more reads to the primary, never a read to a replica that lacks
the agent's write.

Inside ``work``, every ORM read goes to the chosen database (``ReadRouter``), and the statements
the core writes by hand use ``reader``, the chosen database's connection, where they would use
``django.db.connection``. Writes always go to the primary.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import psycopg
import psycopg_pool
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction
from django.db.models.functions import Now

from memories.metrics import READS, REPLICA_LAG
from memories.models import Agent

logger = logging.getLogger(__name__)

#: The replica's alias in ``settings.DATABASES`` (present when ``DATABASE_REPLICA_URL`` is set).
REPLICA = "replica"

T = TypeVar("T")

_alias: ContextVar[str] = ContextVar("mm_read_alias", default=DEFAULT_DB_ALIAS)


class _Reader:
    """``django.db.connection`` for reads: the connection of the database the current read goes
    to (the primary's outside ``read_as``)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(connections[_alias.get()], name)


#: Use as ``django.db.connection`` in the statements a read runs by hand.
reader = _Reader()


class ReadRouter:
    """Django's database router: reads inside ``read_as`` go where it chose, everything else to
    the primary; migrations run on the primary only (a standby cannot be written)."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        return _alias.get()

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, first: Any, second: Any, **hints: Any) -> bool:
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


@contextlib.contextmanager
def _reading_from(alias: str) -> Iterator[None]:
    """Reads inside the block go to ``alias``."""
    token = _alias.set(alias)
    try:
        yield
    finally:
        _alias.reset(token)


@dataclass
class _Probe:
    """What the last probe found. ``horizon`` and ``primary_now`` are the primary's clock;
    ``taken`` this process's monotonic clock, so that the replica's lag keeps growing between
    probes as it would if nothing were replayed."""

    taken: float
    horizon: datetime | None = None  # None: the replica is unusable (``why`` says why)
    primary_now: datetime | None = None
    why: str = ""

    def primary_clock(self) -> datetime:
        return self.primary_now + timedelta(seconds=time.monotonic() - self.taken)

    def lag(self) -> float:
        """Seconds the replica may lack, now: from its horizon to the primary's clock."""
        return (self.primary_clock() - self.horizon).total_seconds()


_lock = threading.Lock()
_probe = _Probe(taken=float("-inf"), why="not probed yet")
#: The latest probe at which the replica had replayed everything the primary had written:
#: (the primary's clock then, its WAL position then).
_caught_up: tuple[datetime, int] | None = None


def _probed() -> _Probe:
    """The current probe, probing again when it is due (one thread probes; the others go on
    with the probe before it)."""
    global _probe
    probe = _probe
    interval = (
        settings.MM_REPLICA_CHECK_SECONDS
        if probe.horizon is not None
        else settings.MM_REPLICA_RETRY_SECONDS
    )
    if time.monotonic() - probe.taken < interval or not _lock.acquire(blocking=False):
        return probe
    try:
        _probe = probe = _probe_now()
    finally:
        _lock.release()
    if probe.horizon is not None:
        REPLICA_LAG.set(max(probe.lag(), 0.0))
    return probe


def _probe_now() -> _Probe:
    global _caught_up
    taken = time.monotonic()
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, now()")
        primary_lsn, primary_now = cursor.fetchone()
    try:
        with connections[REPLICA].cursor() as cursor:
            cursor.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn() - '0/0'::pg_lsn,"
                " pg_last_xact_replay_timestamp()"
            )
            in_recovery, replayed_lsn, replayed_at = cursor.fetchone()
    except DatabaseError as error:
        return _down(taken, error)
    if not in_recovery or replayed_lsn is None:
        why = "the replica is not a standby (promoted, or the primary itself)"
        logger.warning("reads stay on the primary: %s", why)
        return _Probe(taken=taken, why=why)
    horizon = replayed_at
    if replayed_lsn >= primary_lsn:
        _caught_up = (primary_now, primary_lsn)
    if _caught_up is not None and replayed_lsn >= _caught_up[1]:
        horizon = _caught_up[0] if horizon is None else max(horizon, _caught_up[0])
    if horizon is None:  # never caught up, and nothing replayed since the standby started
        return _Probe(taken=taken, why="the replica has not caught up with the primary yet")
    return _Probe(taken=taken, horizon=horizon, primary_now=primary_now)


def _down(taken: float, error: BaseException) -> _Probe:
    connections[REPLICA].close()
    logger.warning("reads go to the primary: the replica failed (%s)", error)
    return _Probe(taken=taken, why=f"the replica failed: {error}")


def _replica_failed(error: DatabaseError) -> bool:
    """Whether ``error`` is the replica failing (away, unreachable, or cancelling a statement
    for a conflict with recovery), as opposed to a statement that would fail anywhere."""
    cause = error.__cause__
    if isinstance(cause, psycopg.errors.QueryCanceled):  # the statement timeout: a slow read
        return False
    return isinstance(
        cause,
        psycopg_pool.PoolTimeout
        | psycopg.OperationalError
        | psycopg.InterfaceError
        | psycopg.errors.SerializationFailure,
    )


def _wrote_at(agent: Agent) -> datetime | None:
    return (
        Agent.objects.using(DEFAULT_DB_ALIAS)
        .filter(pk=agent.pk)
        .values_list("wrote_at", flat=True)
        .first()
    )


def read_from(agent: Agent) -> tuple[str, str]:
    """The database an agent's read goes to, and why: ``(alias, reason)``."""
    probe = _probed()
    if probe.horizon is None:
        return DEFAULT_DB_ALIAS, "unavailable"
    if probe.lag() > settings.MM_REPLICA_MAX_LAG_SECONDS:
        return DEFAULT_DB_ALIAS, "behind"
    wrote_at = _wrote_at(agent)
    if wrote_at is not None:
        window = timedelta(seconds=settings.MM_READ_YOUR_WRITES_SECONDS)
        if wrote_at >= probe.horizon or probe.primary_clock() - wrote_at < window:
            return DEFAULT_DB_ALIAS, "own_writes"
    return REPLICA, "caught_up"


def read_as(agent: Agent, work: Callable[[], T]) -> T:
    """``work()`` (a read for ``agent``) on the replica when it holds what the agent wrote and is
    not too far behind, otherwise on the primary (see the module's docstring)."""
    if not replica_configured():
        return work()
    alias, reason = read_from(agent)
    if alias == DEFAULT_DB_ALIAS:
        READS.labels(database="primary", reason=reason).inc()
        return work()
    try:
        with _reading_from(REPLICA):
            result = work()
    except DatabaseError as error:
        if not _replica_failed(error):
            raise
        global _probe
        _probe = _down(time.monotonic(), error)
        READS.labels(database="primary", reason="failed").inc()
        return work()
    READS.labels(database="replica", reason=reason).inc()
    return result


def note_writes(agent_ids: Iterable[int | None]) -> None:
    """Stamp the agents' last write once the current transaction commits (with a replica
    configured; without one nothing reads the stamp)."""
    ids = sorted({pk for pk in agent_ids if pk is not None})
    if ids and replica_configured():
        transaction.on_commit(
            lambda: Agent.objects.filter(pk__in=ids).update(wrote_at=Now()),
            using=DEFAULT_DB_ALIAS,
        )
