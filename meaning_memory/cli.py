"""``meaning-memory <command>``: the same commands as ``python manage.py <command>``.

When the embedded PostgreSQL cannot start or one of its processes dies under a command, the
command ends with one message that says why
(``meaning_memory.embedded_failures.failure_message``), not with a traceback through Django's
internals.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

from meaning_memory import remote
from meaning_memory.remote import REMOTE_COMMANDS, remote_target


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "meaning_memory.settings")
    from django.core.management import execute_from_command_line

    argv = argv if argv is not None else sys.argv
    if argv[1:2] and argv[1] in REMOTE_COMMANDS:
        url, rest = remote_target(argv[2:])
        if url is not None:  # an agent command for a served engine, over its API
            sys.exit(remote.run(argv[1], rest, url))
    try:
        if argv[1:2] == ["qcluster"]:
            _attach_before_forking()
        elif argv[1:2] == ["enrich"] and "--follow" in argv[2:]:
            _enricher_priority()
        else:
            # A command queues work for the worker (a purge, a consolidation run): the worker
            # library's "Enqueued [...] 5" lines are not the command's output.
            logging.getLogger("django-q").setLevel(logging.WARNING)
        execute_from_command_line(argv)
    except Exception as exc:
        from meaning_memory.embedded_failures import failure_message

        message = failure_message(exc) or _not_migrated(exc)
        if message is None:
            raise
        _quiet_database_pools()
        sys.stderr.write(f"Error: {message}\n")
        sys.exit(1)


def _not_migrated(exc: Exception) -> str | None:
    """What to run when a command met a table that is not there because the database has
    migrations to apply (a fresh database, or an engine upgraded), not a traceback."""
    from django.db import DEFAULT_DB_ALIAS, connections
    from django.db.migrations.executor import MigrationExecutor
    from django.db.utils import ProgrammingError

    if not isinstance(exc, ProgrammingError):
        return None
    try:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception:  # noqa: BLE001 (the original error stands)
        return None
    if not pending:
        return None
    return (
        f"the database has {len(pending)} migrations to apply: run `meaning-memory migrate` "
        "(`meaning-memory serve` migrates by itself), then this command again."
    )


def _attach_before_forking() -> None:
    """The worker cluster forks its processes, which end without running exit handlers: the
    parent holds the embedded server for them, and releases it after they are gone. The
    cluster and its processes run at a lower priority than the web (``priority``)."""
    import django

    django.setup()
    from meaning_memory.embedded import configured_server
    from meaning_memory.priority import lower_worker_priority

    server = configured_server()
    if server is not None:
        server.ensure_started()  # a server this process starts keeps the web's priority
    lower_worker_priority()


def _enricher_priority() -> None:
    """The enricher (``enrich --follow``) runs ``MM_ENRICH_NICE`` below the web, and so do the
    embedded backends it connects to (``priority``), set before its first connection."""
    import django

    django.setup()
    from django.conf import settings

    from meaning_memory.embedded import configured_server
    from meaning_memory.priority import lower_worker_priority

    server = configured_server()
    if server is not None:
        server.ensure_started()  # a server this process starts keeps the web's priority
    lower_worker_priority(settings.MM_ENRICH_NICE)


def _quiet_database_pools() -> None:
    """Close the connection pools, whose workers would otherwise go on reconnecting to the
    dead server (and logging each attempt) while the process exits."""
    import logging

    from django.db import connections

    logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)
    for connection in connections.all(initialized_only=True):
        # Only a pool that exists: asking for ``connection.pool`` would make one (and connect).
        if connection.alias in getattr(connection, "_connection_pools", {}):
            with contextlib.suppress(Exception):  # exiting anyway
                connection.close_pool()
