"""The one rule of validity at an instant, in the three forms the engine needs.

A memory is valid at ``t`` when ``valid_from`` ≤ ``t`` < ``valid_until``, either end open
(NULL). The window includes its start and excludes its end, so a memory superseded at ``t``
(its ``valid_until`` is its replacement's ``valid_from``) and its replacement are never valid
at the same instant.

* ``valid_at_sql``: a WHERE fragment for hand-written statements (search, the compiled file);
* ``valid_at_q``: a ``Q`` object for the ORM (the admin's filter, the dashboard);
* ``is_valid_at``: a Python predicate over a loaded memory (the search table's Eligible
  column).

``memories/tests/test_validity.py`` checks that the three agree on a table of cases.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from django.db.models import Q


class Windowed(Protocol):
    valid_from: datetime | None
    valid_until: datetime | None


def valid_at_sql(parameter: str, table: str = "") -> str:
    """``(valid_from ≤ %(parameter)s) AND (%(parameter)s < valid_until)``, open ends passing;
    ``table`` qualifies the columns (``"m"`` gives ``m.valid_from``)."""
    prefix = f"{table}." if table else ""
    return (
        f"({prefix}valid_from IS NULL OR {prefix}valid_from <= %({parameter})s)"
        f" AND ({prefix}valid_until IS NULL OR {prefix}valid_until > %({parameter})s)"
    )


def ended_by_sql(parameter: str) -> str:
    """The window closed at or before the instant (``currently_valid: false``)."""
    return f"valid_until <= %({parameter})s"


def valid_at_q(instant: datetime) -> Q:
    return (Q(valid_from__isnull=True) | Q(valid_from__lte=instant)) & (
        Q(valid_until__isnull=True) | Q(valid_until__gt=instant)
    )


def ended_by_q(instant: datetime) -> Q:
    return Q(valid_until__lte=instant)


def not_yet_valid_q(instant: datetime) -> Q:
    return Q(valid_from__gt=instant)


def is_valid_at(memory: Windowed, instant: datetime) -> bool:
    return (memory.valid_from is None or memory.valid_from <= instant) and (
        memory.valid_until is None or instant < memory.valid_until
    )
