"""Indexes built ``CONCURRENTLY`` that a rerun can always finish.

``CREATE INDEX CONCURRENTLY`` is not transactional: a build that crashes or is killed halfway
leaves an INVALID index behind, which the planner never uses, which writes still maintain, and
whose name blocks the next attempt (``relation "…" already exists``; with ``IF NOT EXISTS`` the
next attempt silently keeps the broken index). Every concurrent build of the engine goes through
:func:`create_index_concurrently`: an invalid leftover of the same name is dropped first, a valid
one is kept (a crashed migration that got that far needs no second build), and the result is
checked.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


def index_validity(cursor, name: str) -> bool | None:
    """True for a valid index of that name in the current schema, False for an invalid one
    (a failed concurrent build), None when there is none."""
    cursor.execute(
        "SELECT i.indisvalid AND i.indisready FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
        [name],
    )
    row = cursor.fetchone()
    return None if row is None else bool(row[0])


def drop_invalid_index(cursor, name: str) -> bool:
    """Drop an invalid index of that name (concurrently); True if there was one."""
    if index_validity(cursor, name) is not False:
        return False
    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {_quoted(name)}")
    return True


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class IndexBuildFailed(RuntimeError):
    pass


def build_index_once(cursor, name: str, build: Callable[[], object]) -> bool:
    """Call ``build`` (a concurrent build of index ``name``) unless a valid index of that name
    exists; an invalid one is dropped first, and the result is checked. True if it built."""
    drop_invalid_index(cursor, name)
    if index_validity(cursor, name):
        return False
    build()
    if not index_validity(cursor, name):
        raise IndexBuildFailed(f"index {name} is not valid after its build")
    return True


def create_index_concurrently(cursor, name: str, statement: str) -> bool:
    """Run ``statement``, a ``CREATE [UNIQUE] INDEX CONCURRENTLY`` of index ``name``, once."""
    return build_index_once(cursor, name, lambda: cursor.execute(statement))


class AddIndexConcurrentlyOnce(AddIndexConcurrently):
    """Django's ``AddIndexConcurrently`` that a rerun finishes: see the module docstring."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        forwards = super().database_forwards
        if schema_editor.collect_sql:  # sqlmigrate: show the statement, touch nothing
            return forwards(app_label, schema_editor, from_state, to_state)
        with schema_editor.connection.cursor() as cursor:
            build_index_once(
                cursor,
                self.index.name,
                lambda: forwards(app_label, schema_editor, from_state, to_state),
            )


class RunIndexSQLConcurrentlyOnce(migrations.RunSQL):
    """A ``CREATE … INDEX CONCURRENTLY`` in SQL (for what Django cannot say, e.g. a partial
    unique index it models as a constraint), finished by a rerun like the operation above."""

    def __init__(self, name: str, sql: str, **kwargs) -> None:
        self.index_name = name
        super().__init__(sql, **kwargs)

    def deconstruct(self):
        path, args, kwargs = super().deconstruct()
        kwargs["name"] = self.index_name
        return path, args, kwargs

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.collect_sql:  # sqlmigrate: show the statement, touch nothing
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        with schema_editor.connection.cursor() as cursor:
            create_index_concurrently(cursor, self.index_name, self.sql)
