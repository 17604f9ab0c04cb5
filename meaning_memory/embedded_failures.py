"""A command's failure explained when it comes from the embedded database: the server could
not start, or a server process died under it (the message comes from its log)."""

from __future__ import annotations

import time

from meaning_memory.embedded import EmbeddedDatabaseError, EmbeddedServer, configured_server


def _database_errors() -> tuple[type[BaseException], ...]:
    import psycopg
    from django.db import utils as db_utils

    return (db_utils.OperationalError, db_utils.InterfaceError, psycopg.OperationalError)


#: How long a failing command waits for the server's log to say that a server process died: the
#: client sees the connection close before the postmaster has reaped the process and written it.
CRASH_LOG_WAIT_SECONDS = 5.0


def _connection_lost(error: BaseException) -> bool:
    """A connection the server closed or refused (no SQLSTATE: the client saw it), or one it
    ended (class 08, 57P): what a dying server process looks like from here."""
    sqlstate = getattr(getattr(error, "__cause__", None), "sqlstate", None) or getattr(
        error, "sqlstate", None
    )
    return sqlstate is None or sqlstate.startswith(("08", "57P"))


def _crash_shows(server: EmbeddedServer, *, wait: bool) -> bool:
    deadline = time.monotonic() + (CRASH_LOG_WAIT_SECONDS if wait else 0)
    while True:
        if server.crash_evidence() or not server.postmaster_alive():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def failure_message(exc: BaseException) -> str | None:
    """One message for a person when ``exc`` comes from the embedded database failing (it
    could not start, or a server process died), else None."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    for error in chain:
        if isinstance(error, EmbeddedDatabaseError):
            return str(error)
    try:
        server = configured_server()
    except Exception:  # settings themselves failed: not ours to explain
        return None
    if server is None or not server.attached:
        return None
    errors = _database_errors()
    database_error = next((e for e in chain if isinstance(e, errors)), None)
    if database_error is None:
        return None
    if not _crash_shows(server, wait=_connection_lost(database_error)):
        return None
    first = str(database_error).strip().splitlines()[0] if str(database_error).strip() else ""
    headline = "The embedded PostgreSQL failed" + (f": {first}" if first else ".")
    if not server.postmaster_alive():
        headline += " Its server is no longer running."
    return server.explain(headline)
