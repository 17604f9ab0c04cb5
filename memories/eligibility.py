"""The search table's ``Eligible`` column: is this memory in the searching agent's compiled
memory file now (default budget and settings)?

``yes`` (in), ``protected`` (in, and protected), ``cut`` (active and valid, but the budget cut
it), ``-`` (not active, or not valid now). The answer compares the memory's place in the
compiler's order (``memories.compile.keys_of``, computed from its current significance, pin and
age) with where the budget cut the agent's file (``memories.compile.budget_line``): the
compiler's own selection, never a second one.

Where the budget cuts is kept per agent and process for ``MM_COMPILE_ELIGIBLE_TTL`` seconds
(default 300). Past that, a search still answers from the kept line and a background thread
computes a new one, so a search never waits for a compile except the first one of an agent in
a process (and every one with a TTL of 0, which computes it on every search).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memories.compile import (
    PROTECTED_SIGNIFICANCE,
    BudgetLine,
    CompileOptions,
    budget_line,
    compile_options,
    keys_of,
)
from memories.models import Memory
from memories.selectors.reader import Reader
from memories.temporal.validity import is_valid_at

#: Each answer in the words the dashboard shows.
ELIGIBLE_WORDS = {
    "yes": "in the compiled file",
    "protected": "in the compiled file, protected (pinned, or significance "
    f"{PROTECTED_SIGNIFICANCE:.2f} or more: first in, last cut)",
    "cut": "left out: over the compiled file's budget",
    "-": "not in it now: not active, or not valid now",
}

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EligibilityBoundary:
    line: BudgetLine
    options: CompileOptions

    def eligibility_of(self, memories: list[Memory], now: datetime) -> list[str]:
        """The Eligible value of each memory, in order: validity at ``now``, the place in the
        order at the instant the line was drawn (with decay on, every weight falls with time)."""
        keys = keys_of(memories, self.line.as_of, self.options.decay)
        return [self._one(memory, key, now) for memory, key in zip(memories, keys, strict=True)]

    def _one(self, memory: Memory, key: tuple, now: datetime) -> str:
        if not _active_and_valid(memory, now):
            return "-"
        line = self.line
        if memory.pk in line.too_long:
            return "cut"
        if line.everything_in or (line.last_in is not None and key <= line.last_in):
            return "yes" if key[0] else "protected"  # key[0]: not protected
        return "cut"


def _active_and_valid(memory: Memory, now: datetime) -> bool:
    return (
        memory.status == Memory.Status.ACTIVE
        and memory.created_at <= now
        and is_valid_at(memory, now)
    )


#: (agent id, options) → (when it goes stale, the line), least recently used first.
_kept: OrderedDict[tuple, tuple[float, EligibilityBoundary]] = OrderedDict()
_refreshing: set[tuple] = set()
_lock = threading.Lock()
_KEPT_MAX = 10_000


def eligibility_boundary(reader: Reader, now: datetime) -> EligibilityBoundary:
    """Where the budget cuts the compiled file of what ``reader`` sees: an agent's, or the
    whole workspace's (a team member's view; see the module docstring)."""
    options = compile_options()
    agent = reader.agent
    key = (
        ("agent", agent.pk, options)
        if agent is not None
        else ("workspace", reader.workspace_id, options)
    )
    with _lock:
        kept = _kept.get(key)
        if kept is not None:
            _kept.move_to_end(key)
        stale = kept is not None and kept[0] <= time.monotonic()
        refresh = stale and key not in _refreshing
        if refresh:
            _refreshing.add(key)
    if kept is None:
        return _compute(reader, now, options, key)
    if refresh:
        threading.Thread(
            target=_refresh,
            args=(reader, options, key),
            name="eligible-refresh",
            daemon=True,
        ).start()
    return kept[1]


def _compute(
    reader: Reader, now: datetime, options: CompileOptions, key: tuple
) -> EligibilityBoundary:
    boundary = EligibilityBoundary(line=budget_line(reader, now, options), options=options)
    ttl = float(settings.MM_COMPILE_ELIGIBLE_TTL)
    if ttl > 0:
        with _lock:
            _kept[key] = (time.monotonic() + ttl, boundary)
            _kept.move_to_end(key)
            while len(_kept) > _KEPT_MAX:
                _kept.popitem(last=False)
    return boundary


def _refresh(reader: Reader, options: CompileOptions, key: tuple) -> None:
    try:
        _compute(reader, timezone.now(), options, key)
    except Exception:  # the kept line stays; the next search past the TTL tries again
        logger.exception("could not compute the Eligible line %s", key[:2])
    finally:
        with _lock:
            _refreshing.discard(key)
        connection.close()  # this thread's own connection


def forget_boundaries() -> None:
    with _lock:
        _kept.clear()
