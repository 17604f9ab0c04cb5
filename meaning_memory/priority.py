"""The worker's work runs at a lower CPU priority than the web processes' requests.

A consolidation run (queued by a bulk import, or by the schedule) reads and writes a whole
workspace's new memories; on a machine whose cores the web processes share, it took CPU from
the searches of every other workspace. The worker process lowers its own priority by
``MM_WORKER_NICE`` before it forks its processes (they inherit it), and, when the database is
the embedded one, lowers the priority of each PostgreSQL backend it connects to as well: those
backends do most of a run's work. A backend is reniced only when it is a child of the embedded
server's postmaster (the same user's process on this machine); with ``DATABASE_URL`` the
server's processes are the operator's to schedule.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, Self

import psutil
import psycopg
from django.conf import settings

logger = logging.getLogger(__name__)


def lower_worker_priority(increment: int | None = None) -> int:
    """Lower this process's priority by ``increment`` (default ``MM_WORKER_NICE``; its forked
    processes inherit it), and, with the embedded database, each new connection's backend's;
    returns the increment applied (0: none). Call before the process opens its connection
    pool."""
    increment = int(settings.MM_WORKER_NICE if increment is None else increment)
    if increment <= 0 or not hasattr(os, "nice"):  # Windows has no niceness
        return 0
    os.nice(increment)
    from meaning_memory.embedded import configured_server

    server = configured_server()
    if server is not None:
        # Every connection the pool opens, before it is handed out.
        settings.DATABASES["default"]["OPTIONS"]["pool"]["connection_class"] = type(
            "WorkerConnection", (_LowerBackend,), {"postmaster": server.postmaster_pid}
        )
    return increment


class _LowerBackend(psycopg.Connection):
    """A connection whose backend gets this process's niceness as it connects (libpq knows the
    backend's pid: no query)."""

    postmaster: Callable[[], int | None]

    @classmethod
    def connect(cls, *args: Any, **kwargs: Any) -> Self:
        conn = super().connect(*args, **kwargs)
        lower_backend(conn.info.backend_pid, cls.postmaster())
        return conn


def lower_backend(pid: int, postmaster: int | None) -> bool:
    """Give backend ``pid`` this process's niceness if it is a child of ``postmaster`` (a
    backend already nicer keeps its own)."""
    try:
        backend = psutil.Process(pid)
        if postmaster is None or backend.ppid() != postmaster:
            return False
        mine = psutil.Process().nice()
        if backend.nice() < mine:
            backend.nice(mine)
        return True
    except (psutil.Error, OSError) as exc:  # gone, or not ours to change
        logger.info("backend %s keeps its priority: %s", pid, exc)
        return False
