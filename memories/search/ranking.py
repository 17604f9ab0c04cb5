"""The ranking of ``memories.search``: the statement a recipe composes, then what re-orders
its candidates."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from psycopg.types.numeric import Int8

from memories.commands import Search
from memories.eligibility import eligibility_boundary
from memories.embeddings import current_model_name, get_embedder
from memories.metrics import SEARCH_SECONDS
from memories.prepared import prepared_cursor
from memories.reading import reader as database
from memories.search.filters import SearchFilters
from memories.search.graph import expanded
from memories.search.hydration import (
    SCOPE_FIELDS,
    SHOWN_MEMORY_FIELDS,
    SearchHit,
    hit_from_row,
    hydrated,
)
from memories.search.learned import reranked
from memories.search.metadata import metadata_candidates
from memories.search.recipe import Recipe
from memories.search.relational import EXACT_COUNT_ROWS, relational_filter
from memories.search.sessions import capped
from memories.search.statement import FIGURES, statement
from memories.search.words import keyword_lexemes, scopes_and_words, tsquery
from memories.selectors.reader import Reader
from memories.selectors.relations import attach_references
from memories.value_indexes import indexes_for

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"S/core": "GA", "T/core": "GA"}


def search(
    command: Search,
    reader: Reader,
    *,
    now: datetime | None = None,
    query_vector: np.ndarray | None = None,
    exact: bool = False,
    every_candidate: bool = False,
    recipe: Recipe | None = None,
) -> list[SearchHit]:
    """Rank the memories ``reader`` sees for a search (see ``memories.search``): an agent's
    scopes, or every memory of the workspace (a team member's view: the dashboard).

    The command's values were checked by its input shape (``memories.operations`` checks code's
    keyword arguments the same way); what depends on stored state (a memory or an entity a
    filter names) is checked here. With neither ``as_of`` nor ``currently_valid``, only
    memories valid now are searched. ``now``, ``query_vector``, ``exact`` and
    ``every_candidate`` are for code only: ``exact`` replaces the HNSW scan by an exact one
    (benchmarks use it to measure the index's recall); ``every_candidate`` returns every
    candidate in the statement's order, before any re-ordering in Python (benchmarks fit the
    learned ranking on them); ``recipe`` puts the search together another way than the
    settings do (``memories.search.recipe``: the benchmarks' methods).
    """
    with SEARCH_SECONDS.time():  # a search that runs (not one refused by its arguments)
        now = now or timezone.now()
        if query_vector is None:
            query_vector = get_embedder().embed_query(command.query)
        return ranked(
            reader,
            query=command.query,
            vector=query_vector,
            filters=SearchFilters(command),
            limit=command.limit,
            reference=command.as_of or now,
            now=now,
            exact=exact,
            expand=command.expand,
            every_candidate=every_candidate,
            recipe=recipe,
        )


def ranked(
    reader: Reader,
    *,
    query: str,
    vector: np.ndarray,
    filters: SearchFilters,
    limit: int,
    reference: datetime,
    now: datetime,
    exact: bool,
    expand: str | None = None,
    every_candidate: bool = False,
    recipe: Recipe | None = None,
) -> list[SearchHit]:
    """The ranking of the module docstring: the statement ``recipe`` composes
    (``memories.search.statement``: candidates, their signals, relevance, the gate and the
    score, and the shown memories with their scope and replacement), then what re-orders its
    candidates in Python. ``recipe``: the settings' (``Recipe.default``) unless given.

    Only vectors of the configured embedder's model are compared with the query's; a memory
    embedded by another model (before a change of ``MM_EMBEDDER``) is found by keyword alone,
    with similarity 0, until it is re-embedded.

    When the recipe re-orders (the learned ranking, ``expand="graph"``, a session cap) the
    statement returns every candidate, and ``memories.search.learned`` (then
    ``memories.search.graph``, then ``memories.search.sessions``) re-order them and keep the
    first ``limit``.
    """
    recipe = recipe or Recipe.default()
    if expand == "graph":
        recipe = recipe.but(graph=True)
    if every_candidate:  # the statement's own order, before any re-ordering in Python
        recipe = recipe.but(relevance="formula", graph=False, session_cap=0)
    time_neighbours = "time_neighbours" in recipe.sources
    workspace = reader.workspace
    scope_ids, words = scopes_and_words(reader, query)
    ranked_words, matched_words = keyword_lexemes(words, workspace.pk)
    count = max(recipe.candidates, limit)
    shown_limit = limit
    if recipe.reorders or every_candidate:  # every list's candidates
        limit = 2 * count + (4 * recipe.time_neighbour_seeds if time_neighbours else 0)
    vector_text = "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"
    relational = relational_filter(
        filters.search,
        reader,
        vector=None if exact else vector_text,  # exact: every mentioning memory ranked
        candidates=count,
    )
    where, params = filters.sql(now, relational)
    nearest_where, nearest_params = relational.nearest_sql()
    nearest_where = f" AND {nearest_where}" if nearest_where else ""
    params |= nearest_params
    params |= {
        "scopes": [Int8(scope_id) for scope_id in scope_ids],
        "words": [tsquery([word]) for word in ranked_words],
        "match_words": [tsquery([word]) for word in matched_words],
        "per_word": -(-int(settings.MM_SEARCH_KEYWORD_SCAN_MAX) // max(len(matched_words), 1)),
        "rank_weights": [0.0, 0.0, float(settings.MM_SEARCH_EPISODE_WEIGHT), 1.0],
        "episode_vector_weight": recipe.episode_vector_weight,
        "neighbour_weight": recipe.neighbour_weight,
        "model": current_model_name(),
        "vector": vector_text,
        "weight": recipe.keyword_weight,
        "gate_ratio": recipe.gate_ratio,
        "reference": reference,
        "half_life": recipe.half_life_days,
    }
    # The statement is prepared and keeps the plan of its first execution (see
    # ``memories.prepared``), so what that plan depends on is in its text, not in its
    # parameters: the workspace (a partial index serves a scan only if its predicate is proved
    # from a constant) and the candidate LIMITs (the planner costs the HNSW scan by how many
    # rows it must return). The per-word LIMIT stays a parameter: it changes with the number
    # of query words, and a GIN bitmap scan's plan does not depend on it.
    # A condition only a count for the reader decides is taken on the best rows only.
    shown_condition = relational.shown_sql("m.id")
    shown_rows = int(limit) * (EXACT_COUNT_ROWS if shown_condition else 1)
    shown_condition = f" AND {shown_condition}" if shown_condition else ""
    base = f"workspace_id = {int(workspace.pk)} AND scope_id = ANY(%(scopes)s) AND {where}"
    metadata_filtered = filters.search.metadata is not None
    if metadata_filtered and not exact:
        # The vector candidates of a metadata filter, chosen by how many memories it keeps
        # (``memories.search.metadata``); exact: every one it keeps is ranked.
        params["metadata_shortlist"] = metadata_candidates(
            base,
            params,
            vector=vector_text,
            count=count,
            model=params["model"],
            value_indexes=indexes_for(workspace.pk, filters.search.metadata),
        )
        nearest_where += " AND id = ANY(%(metadata_shortlist)s::bigint[])"
    memory_columns = ", ".join(f'm."{model_field.column}"' for model_field in SHOWN_MEMORY_FIELDS)
    scope_columns = ", ".join(f's."{model_field.column}"' for model_field in SCOPE_FIELDS)
    figures = ", ".join(f"ranked.{figure}" for figure in FIGURES)
    sql = statement(
        recipe,
        base=base,
        nearest_where=nearest_where,
        workspace_id=workspace.pk,
        count=count,
        exact=exact,
        gate_size=int(max(limit, recipe.gate_k)),
        shown=f"""
        SELECT {memory_columns}, {scope_columns}, r.mem_id, {figures}
        FROM ranked
        JOIN memories_memory m ON m.id = ranked.id AND m.workspace_id = {int(workspace.pk)}
        JOIN memories_scope s ON s.id = m.scope_id
        LEFT JOIN memories_memory r
            ON r.id = m.superseded_by_id AND r.workspace_id = {int(workspace.pk)}
        WHERE ranked.position <= {shown_rows}{shown_condition}
        ORDER BY ranked.position
        LIMIT {int(limit)}
    """,
    )
    # Every connection starts with hnsw.ef_search and hnsw.iterative_scan set (see
    # ``meaning_memory.db.search_options``): no transaction, no extra round trip, unless the
    # search wants more candidates than the index's search list holds.
    widen = count > settings.MM_HNSW_EF_SEARCH
    with transaction.atomic(using=database.alias) if widen else contextlib.nullcontext():
        if widen:
            with database.cursor() as cursor:
                cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(count)])
        # A metadata filter's plan depends on its values (a rare customer, or most of the
        # memories): planned for them each time, never a generic plan kept.
        with database.cursor() if metadata_filtered else prepared_cursor(database) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    placed_by = tuple(recipe.placed_by())
    # The learned ranking reads a few fields of every candidate; the rest is read for the hits
    # it keeps (the graph, which keeps every candidate, reads them whole).
    candidates = recipe.relevance == "learned" and not every_candidate and not recipe.graph
    hits = [hit_from_row(row, candidate=candidates, placed_by=placed_by) for row in rows]
    if every_candidate:
        return hits
    # The gate counts from the search's limit; a session cap needs the candidates after it too.
    kept = len(hits) if recipe.session_cap else shown_limit
    if recipe.relevance == "learned":
        every = len(hits) if recipe.graph else None  # the graph re-gates every candidate
        reordered = reranked(
            hits, query=query, limit=every or shown_limit, keep=every or kept, recipe=recipe
        )
        hits = [hydrated(hit) for hit in reordered]
    if recipe.graph:
        hits = expanded(
            hits, limit=shown_limit, keep=kept, workspace_id=workspace.pk, recipe=recipe
        )
    hits = capped(hits, cap=recipe.session_cap, limit=shown_limit)
    attach_references([h.memory for h in hits])
    boundary = eligibility_boundary(reader, now)
    eligible = boundary.eligibility_of([h.memory for h in hits], now)
    relations = relational.explain([h.memory for h in hits], scope_ids)
    return [
        replace(hit, eligible=value, relations=why)
        for hit, value, why in zip(hits, eligible, relations, strict=True)
    ]
