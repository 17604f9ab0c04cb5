"""Prepared statements for the queries every search runs (see ``prepared_cursor``)."""

from __future__ import annotations

from typing import Any

import psycopg
from django.conf import settings
from django.db.backends.utils import CursorDebugWrapper

#: psycopg's ``prepare_threshold`` while a prepared cursor runs a statement (it prepares at
#: once, since it asks to): any number but None, which turns preparing off.
_WHILE_PREPARING = 2**31 - 1


class _PreparingCursor(psycopg.Cursor):
    """A cursor with server-side binding whose every statement is prepared.

    Connections otherwise keep psycopg's ``prepare_threshold`` at None (Django's default), and
    that matters: with any other value psycopg counts *every* statement a connection runs,
    keyed by its text with the values bound in, in a table of up to ``prepared_max`` entries
    (``MM_SEARCH_PREPARED_MAX``). A bulk write's INSERT is megabytes of text, so each pooled
    connection kept the last couple of hundred such texts, and a served engine grew with every
    bulk write (``benchmarks/memory.py``). So the threshold is set only while a prepared
    statement runs (and put back as it was), and what psycopg keeps is the prepared statements
    alone."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        if prepare is False or not settings.MM_SEARCH_PREPARED:
            return super().execute(query, params, prepare=False, binary=binary)
        kept = self.connection.prepare_threshold
        self.connection.prepare_threshold = _WHILE_PREPARING
        try:
            return super().execute(query, params, prepare=True, binary=binary)
        finally:
            self.connection.prepare_threshold = kept


def prepared_cursor(connection: Any) -> Any:
    """A cursor on Django's ``connection`` whose statements are prepared on the server and kept
    (at most ``MM_SEARCH_PREPARED_MAX`` per connection; the least recently used go first).

    A statement run a second time on the same connection skips parsing and planning: with
    ``plan_cache_mode=force_generic_plan`` (``meaning_memory.db.search_options``) it runs the
    plan made the first time, with the new parameter values. So a statement prepared this way
    must carry in its text whatever its plan should depend on (for a search: the workspace,
    whose partial indexes a plan can use only when its id is a constant, and the LIMITs).
    Queries go through Django's cursor wrapper, so they are logged and seen by execute
    wrappers like any other.
    Without prepared statements (``MM_SEARCH_PREPARED`` off) the statements are planned on
    every execution, as Django's are.
    """
    connection.ensure_connection()
    connection.validate_thread_sharing()
    connection.connection.prepared_max = settings.MM_SEARCH_PREPARED_MAX
    cursor = _PreparingCursor(connection.connection)
    if connection.queries_logged:
        return _PreparedDebugWrapper(cursor, connection)
    return connection.make_cursor(cursor)


class _PreparedDebugWrapper(CursorDebugWrapper):
    """Django's query log for a prepared statement: its text with placeholders (psycopg keeps
    no text with the values bound in for a prepared statement)."""

    def execute(self, sql, params=None):
        with self.debug_sql(sql, params):
            return self._execute_with_wrappers(sql, params, many=False, executor=self._execute)
