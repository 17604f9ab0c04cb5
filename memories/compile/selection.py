"""Which memories a compiled file considers, their weight, protection and order."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memories import metadata_filter
from memories.models import Memory
from memories.reading import reader
from memories.temporal.decay import DecayPolicy
from memories.temporal.validity import valid_at_sql

PROTECTED_SIGNIFICANCE = 0.90
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class Candidates:
    """Columns of the candidate memories, as arrays in one total order (see memories.compile)."""

    ids: np.ndarray
    significance: np.ndarray
    created: np.ndarray  # seconds since the epoch
    weight: np.ndarray
    protected: np.ndarray
    #: Their workspace (every statement that reads them again names it).
    workspace_id: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    def key(self, index: int) -> tuple[bool, float, float, float, int]:
        """The sort key of one memory: smaller comes first."""
        return (
            not bool(self.protected[index]),
            -float(self.weight[index]),
            -float(self.significance[index]),
            -float(self.created[index]),
            int(self.ids[index]),
        )


def _weigh(
    significance: np.ndarray,
    pinned: np.ndarray,
    created: np.ndarray,
    half_life: np.ndarray,
    as_of: datetime,
) -> tuple[np.ndarray, np.ndarray]:
    """Weight and protection of memories (one implementation for files and for Eligible).
    Protection follows the stored significance, so decay re-orders protected memories among
    themselves but never takes their protection away."""
    age_days = np.maximum(as_of.timestamp() - created, 0.0) / SECONDS_PER_DAY
    factor = np.where(pinned, 1.0, np.power(0.5, age_days / half_life))
    weight = significance * factor
    return weight, pinned | (significance >= PROTECTED_SIGNIFICANCE)


def _weighed(
    ids: np.ndarray,
    significance: np.ndarray,
    pinned: np.ndarray,
    created: np.ndarray,
    half_life: np.ndarray,
    as_of: datetime,
) -> Candidates:
    weight, protected = _weigh(significance, pinned, created, half_life, as_of)
    return Candidates(
        ids=ids, significance=significance, created=created, weight=weight, protected=protected
    )


def _ordered(candidates: Candidates) -> Candidates:
    """The same columns in the order of ``Candidates.key`` (lexsort sorts by its last key
    first)."""
    c = candidates
    order = np.lexsort((c.ids, -c.created, -c.significance, -c.weight, ~c.protected))
    return Candidates(
        ids=c.ids[order],
        significance=c.significance[order],
        created=c.created[order],
        weight=c.weight[order],
        protected=c.protected[order],
        workspace_id=c.workspace_id,
    )


_CANDIDATES_SQL = f"""
    SELECT id, significance, pinned, extract(epoch FROM created_at)::float8, category
    FROM {Memory._meta.db_table}
    WHERE workspace_id = %(workspace)s AND status = 'active' AND created_at <= %(as_of)s
        AND {valid_at_sql("as_of")}
"""


def candidates_of(
    workspace_id: int,
    scope_ids: list[int] | None,
    as_of: datetime,
    policy: DecayPolicy,
    metadata: metadata_filter.Filter | None = None,
) -> Candidates:
    """The memories a file of these scopes (None: every one) considers, ordered; ``metadata``:
    only those whose metadata match the filter."""
    sql, params = _CANDIDATES_SQL, {"workspace": workspace_id, "as_of": as_of}
    if scope_ids is not None:
        sql += " AND scope_id = ANY(%(scopes)s)"
        params["scopes"] = scope_ids
    if metadata is not None:
        sql += " AND " + metadata_filter.named(metadata, "metadata", params)
    with reader.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    count = len(rows)
    # One object array, then a typed column each: much faster than transposing the tuples.
    table = np.array(rows, dtype=object).reshape(count, 5)
    half_life = np.full(count, math.inf)
    if not policy.is_off:
        for category in Memory.Category.values:
            if math.isfinite(days := policy.half_life_days(category)):
                half_life[table[:, 4] == category] = days
    weighed = _weighed(
        table[:, 0].astype(np.int64),
        table[:, 1].astype(float),
        table[:, 2].astype(bool),
        table[:, 3].astype(float),
        half_life,
        as_of,
    )
    return _ordered(dataclasses.replace(weighed, workspace_id=workspace_id))


def keys_of(memories: list[Memory], as_of: datetime, policy: DecayPolicy) -> list[tuple]:
    """Each memory's place in the compiled file's order (smaller comes first), computed as the
    selection computes it, from the memory's current fields."""
    weighed = _weighed(
        np.array([m.pk for m in memories], dtype=np.int64),
        np.array([m.significance for m in memories], dtype=float),
        np.array([m.pinned for m in memories], dtype=bool),
        np.array([m.created_at.timestamp() for m in memories], dtype=float),
        np.array([policy.half_life_days(m.category) for m in memories], dtype=float),
        as_of,
    )
    return [weighed.key(index) for index in range(len(memories))]
