"""The gate and the order of ``memories.search`` (steps 3 and 4) applied in Python, for the
steps that re-compute relevance after the ranking statement (``memories.search.graph``,
``memories.search.learned``)."""

from __future__ import annotations

from dataclasses import replace

from memories.search.hydration import SearchHit
from memories.search.recipe import Recipe


def gated(
    hits: list[SearchHit], limit: int, *, keep: int | None = None, recipe: Recipe | None = None
) -> list[SearchHit]:
    """The gate and the order of ``memories.search`` (steps 3 and 4), on the new relevance, for
    a search of ``limit``; the first ``keep`` (``limit`` unless given)."""
    recipe = recipe or Recipe.default()
    gate_size = int(max(limit, recipe.gate_k))
    by_relevance = sorted(hits, key=lambda hit: (-hit.relevance, hit.memory.pk))
    best = by_relevance[0].relevance
    passed = {
        hit.memory.pk
        for hit in by_relevance[:gate_size]
        if hit.relevance >= recipe.gate_ratio * best
    }
    marked = [replace(hit, gated=hit.memory.pk in passed) for hit in hits]
    marked.sort(
        key=lambda hit: (
            not hit.gated,
            -(hit.score if hit.gated else 0.0),
            -hit.relevance,
            -hit.memory.created_at.timestamp(),
            hit.memory.pk,
        )
    )
    return marked[: keep or limit]


def scored(hit: SearchHit, relevance: float) -> float:
    """The score of step 4 for ``hit`` with a new ``relevance``: relevance × significance × the
    age factor (× the A factor when ``MM_ASYMMETRY_RANKING`` is on, as in the statement)."""
    significance = 0.0 if hit.memory.significance < 1e-12 else hit.memory.significance
    return relevance * significance * hit.age_factor * hit.asymmetry_factor
