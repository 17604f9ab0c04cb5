"""The three forms of "valid at this instant" (SQL, Q, Python) agree on every case."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from memories.models import Memory
from memories.operations import memory_remember
from memories.temporal.validity import (
    ended_by_q,
    ended_by_sql,
    is_valid_at,
    not_yet_valid_q,
    valid_at_q,
    valid_at_sql,
)

T = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)
MICRO = timedelta(microseconds=1)

#: (valid_from, valid_until, instant, valid?)
CASES = [
    (None, None, T, True),
    (T, None, T, True),  # the start belongs to the window
    (T, None, T - MICRO, False),
    (T, None, T + SECOND, True),
    (None, T, T, False),  # the end does not
    (None, T, T - MICRO, True),
    (None, T, T + SECOND, False),
    (T, T + SECOND, T, True),
    (T, T + SECOND, T + SECOND - MICRO, True),
    (T, T + SECOND, T + SECOND, False),
    (T - timedelta(days=30), T - timedelta(days=1), T, False),
    (T + timedelta(days=1), T + timedelta(days=30), T, False),
]


@pytest.fixture
def windows(alice):
    stored = []
    for n, (valid_from, valid_until, _, _) in enumerate(CASES):
        memory = memory_remember(
            agent=alice.agent,
            text=f"Case {n} of the validity table.",
            valid_from=valid_from,
            valid_until=valid_until,
        ).memory
        stored.append(memory)
    return stored


def matches_sql(memory, fragment: str, instant) -> bool:
    """Whether ``memory``'s row passes the WHERE ``fragment`` (parameter ``at``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {Memory._meta.db_table} WHERE id = %(id)s AND {fragment}",
            {"id": memory.pk, "at": instant},
        )
        return cursor.fetchone()[0] == 1


def test_sql_q_and_python_agree_on_every_case(windows):
    for memory, (_, _, instant, expected) in zip(windows, CASES, strict=True):
        by_sql = matches_sql(memory, valid_at_sql("at"), instant)
        by_q = Memory.objects.filter(valid_at_q(instant), pk=memory.pk).exists()
        by_python = is_valid_at(memory, instant)
        assert (by_sql, by_q, by_python) == (expected,) * 3, (memory.text, instant)


def test_a_qualified_fragment_names_the_table(windows):
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id FROM {table} m WHERE m.id = ANY(%(ids)s) AND {valid_at_sql('at', 'm')}",
            {"ids": [m.pk for m in windows], "at": T},
        )
        found = {row[0] for row in cursor.fetchall()}
    expected = {
        m.pk
        for m, (_, _, instant, valid) in zip(windows, CASES, strict=True)
        if valid and instant == T
    }
    assert expected <= found
    assert found == {m.pk for m in windows if is_valid_at(m, T)}


def test_ended_and_not_yet_valid_agree_with_the_window(windows):
    """A window has ended by an instant when its end is at or before it; it is not yet valid
    when its start is after it; valid, ended and not yet valid never overlap."""
    for memory, (valid_from, valid_until, instant, valid) in zip(windows, CASES, strict=True):
        ended_by_sql_ = matches_sql(memory, ended_by_sql("at"), instant)
        ended = Memory.objects.filter(ended_by_q(instant), pk=memory.pk).exists()
        not_yet = Memory.objects.filter(not_yet_valid_q(instant), pk=memory.pk).exists()
        assert ended == ended_by_sql_ == (valid_until is not None and valid_until <= instant)
        assert not_yet == (valid_from is not None and valid_from > instant)
        assert [valid, ended, not_yet].count(True) == 1, (memory.text, instant)
