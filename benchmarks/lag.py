"""How far behind the writes their enrichment runs, in a served engine (``load.py``).

A write under ``serve`` is answered before its entities, links and A score are stored; the
enricher records, for each memory, the seconds from its write to its enrichment
(``mm_enrich_lag_seconds`` on ``/metrics``). A row's lag percentiles are read from that
histogram's counts before and after the row (interpolated within a bucket, as Prometheus's
``histogram_quantile`` does), and the memories still pending when the row ends, with how long
the enricher then took to finish them, say whether it kept up."""

from __future__ import annotations

import math
import time
import urllib.request

METRIC = "mm_enrich_lag_seconds_bucket"


def scrape(bases: list[str]) -> dict[float, float]:
    """The lag histogram's cumulative counts by upper bound, summed over the engines."""
    counts: dict[float, float] = {}
    for base in bases:
        with urllib.request.urlopen(base + "/metrics", timeout=30) as answer:
            text = answer.read().decode()
        for line in text.splitlines():
            if not line.startswith(METRIC + "{"):
                continue
            labels, value = line.rsplit(" ", 1)
            bound = labels.split('le="', 1)[1].split('"', 1)[0]
            le = math.inf if bound == "+Inf" else float(bound)
            counts[le] = counts.get(le, 0.0) + float(value)
    return counts


def quantile(before: dict[float, float], after: dict[float, float], q: float) -> float | None:
    """The ``q`` quantile (0-1) of the lags observed between the two scrapes, in seconds
    (None: none observed; past the last finite bound: that bound)."""
    bounds = sorted(after)
    deltas = [after[b] - before.get(b, 0.0) for b in bounds]
    total = deltas[-1] if deltas else 0.0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, count in zip(bounds, deltas, strict=True):
        if count >= rank:
            if math.isinf(bound):
                return lower
            inside = count - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, count
    return lower


def observed(before: dict[float, float], after: dict[float, float]) -> int:
    return int(after.get(math.inf, 0.0) - before.get(math.inf, 0.0))


def pending() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memoryenrichment WHERE state = 'pending'")
        return cursor.fetchone()[0]


def drained(timeout: float = 600.0) -> tuple[int, float]:
    """The memories pending now, and the seconds until none is (the timeout if never)."""
    started = time.perf_counter()
    waiting = first = pending()
    while waiting and time.perf_counter() - started < timeout:
        time.sleep(0.1)
        waiting = pending()
    return first, time.perf_counter() - started


def lag_row(bases: list[str], before: dict[float, float]) -> dict:
    """A row's lag figures, once the enricher has finished the row's writes: how many it
    enriched since ``before`` (a scrape at the row's start), p50 and p95 in ms, and whether
    it kept up (pending at the row's end, seconds to finish them). Run in a thread of its own:
    its database connection goes back to the pool at the end."""
    from django.db import connection

    try:
        left, seconds = drained()
    finally:
        connection.close()
    after = scrape(bases)
    p50, p95 = quantile(before, after, 0.5), quantile(before, after, 0.95)
    return {
        "enriched": observed(before, after),
        "p50_ms": None if p50 is None else p50 * 1000,
        "p95_ms": None if p95 is None else p95 * 1000,
        "pending_at_end": left,
        "drain_s": seconds,
    }


def cell(lag: dict | None) -> str:
    if not lag or lag["p50_ms"] is None:
        return "–"
    return (
        f"{lag['p50_ms']:.0f} / {lag['p95_ms']:.0f} ({lag['enriched']:,}); "
        f"{lag['pending_at_end']:,} left, {lag['drain_s']:.1f} s"
    )
