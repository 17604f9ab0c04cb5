"""What a failing database means for the caller: ``unavailable(exc)`` turns the errors that say
"not now" (no free connection, a statement cut by its timeout, the server away) into
``Unavailable``, which every adapter answers as a 503 with Retry-After; anything else is a bug
and stays a 500."""

from __future__ import annotations

import psycopg
import psycopg_pool
from django.conf import settings
from django.db import DatabaseError

from memories.errors import Unavailable


def unavailable(exc: BaseException) -> Unavailable | None:
    """The ``Unavailable`` that ``exc`` (raised by database work) stands for, or None."""
    if isinstance(exc, Unavailable):
        return exc
    cause = exc.__cause__ if isinstance(exc, DatabaseError) else exc
    if isinstance(cause, psycopg_pool.PoolTimeout):
        return Unavailable(
            "the database is busy: no connection came free within "
            f"{settings.MM_DB_POOL_TIMEOUT:g} s (MM_DB_POOL_TIMEOUT, MM_DB_POOL_SIZE); "
            "try again shortly.",
            retry_after=2,
        )
    if isinstance(cause, psycopg.errors.QueryCanceled):
        return Unavailable(
            "the database work took longer than "
            f"{settings.MM_STATEMENT_TIMEOUT_MS:,} ms (MM_STATEMENT_TIMEOUT_MS) and was cut; "
            "try again, or narrow the request.",
            retry_after=2,
        )
    if isinstance(cause, psycopg.OperationalError | psycopg.InterfaceError):
        # The server went away (restart, crash, network), refused the connection, or is out of
        # a resource (SQLSTATE classes 08, 53, 57, 58): nothing the request did wrong.
        return Unavailable(
            "the database is unavailable (restarting, unreachable or out of resources); "
            "try again shortly.",
            retry_after=2,
        )
    return None
