"""The readiness checks that can run here, and ``run_checks`` which records their evidence.

Each check writes its data into a workspace of its own inside a transaction that is rolled
back: nothing it wrote stays, only the evidence row (recorded after the rollback).

``sandbox`` is that transaction; ``synthetic`` and ``stories`` are the checks on data they
plant (``SYNTHETIC``); ``gated`` and ``conversations`` the checks on outside data; ``runner``
runs them all and records their evidence under one evaluation run.
"""

from readiness.checks.conversations import locomo_checks
from readiness.checks.gated import NotMeasurable, liar_checks, pairs_checks, read_data
from readiness.checks.runner import run_checks
from readiness.checks.sandbox import Result, _sandboxed
from readiness.checks.stories import saga_as_documented, threads_as_documented
from readiness.checks.synthetic import (
    SYNTHETIC,
    as_of_finds_the_valid_memory,
    asymmetry_as_documented,
    divergence_as_documented,
    links_filter_as_documented,
    reply_found_by_its_episode,
    significance_orders,
    traversal_as_documented,
)

__all__ = [
    "SYNTHETIC",
    "NotMeasurable",
    "Result",
    "_sandboxed",
    "as_of_finds_the_valid_memory",
    "asymmetry_as_documented",
    "divergence_as_documented",
    "liar_checks",
    "links_filter_as_documented",
    "locomo_checks",
    "pairs_checks",
    "read_data",
    "reply_found_by_its_episode",
    "run_checks",
    "saga_as_documented",
    "significance_orders",
    "threads_as_documented",
    "traversal_as_documented",
]
