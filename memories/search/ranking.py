"""The ranking of ``memories.search``, as one SQL statement."""

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
from memories.search.relational import EXACT_COUNT_ROWS, relational_filter
from memories.search.words import keyword_lexemes, scopes_and_words, tsquery
from memories.selectors.reader import Reader
from memories.selectors.relations import attach_references
from memories.value_indexes import indexes_for

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"S/core": "GA", "T/core": "GA"}
SECONDS_PER_DAY = 86_400.0


def search(
    command: Search,
    reader: Reader,
    *,
    now: datetime | None = None,
    query_vector: np.ndarray | None = None,
    exact: bool = False,
    every_candidate: bool = False,
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
    learned ranking on them).
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
        )


#: The ranking's factor of the A score when MM_ASYMMETRY_RANKING is on.
ASYMMETRY_FACTOR_SQL = "(0.5 + 0.5 * COALESCE(a_score, 0.5))"


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
) -> list[SearchHit]:
    """The ranking of the module docstring, as one SQL statement: candidates, their signals,
    relevance, the gate and the score, and the shown memories with their scope and replacement.

    Only vectors of the configured embedder's model are compared with the query's; a memory
    embedded by another model (before a change of ``MM_EMBEDDER``) is found by keyword alone,
    with similarity 0, until it is re-embedded.

    With ``expand="graph"`` or ``MM_SEARCH_LEARNED`` the statement returns every candidate, and
    ``memories.search.learned`` (then ``memories.search.graph``) re-orders them and keeps the
    first ``limit``.
    """
    workspace = reader.workspace
    scope_ids, words = scopes_and_words(reader, query)
    ranked_words, matched_words = keyword_lexemes(words, workspace.pk)
    count = max(settings.MM_SEARCH_CANDIDATES, limit)
    shown_limit = limit
    learned = settings.MM_SEARCH_LEARNED and not every_candidate
    if expand == "graph" or learned or every_candidate:  # the vector list and the keyword list
        limit = 2 * count
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
        "episode_vector_weight": float(settings.MM_SEARCH_EPISODE_VECTOR_WEIGHT),
        "neighbour_weight": float(settings.MM_SEARCH_NEIGHBOUR_WEIGHT),
        "model": current_model_name(),
        "vector": vector_text,
        "weight": float(settings.MM_SEARCH_KEYWORD_WEIGHT),
        "gate_ratio": float(settings.MM_SEARCH_GATE_RATIO),
        "reference": reference,
        "half_life": float(settings.MM_S1_HALF_LIFE_DAYS),
    }
    # The statement is prepared and keeps the plan of its first execution (see
    # ``memories.prepared``), so what that plan depends on is in its text, not in its
    # parameters: the workspace (a partial index serves a scan only if its predicate is proved
    # from a constant) and the candidate LIMITs (the planner costs the HNSW scan by how many
    # rows it must return). The per-word LIMIT stays a parameter: it changes with the number
    # of query words, and a GIN bitmap scan's plan does not depend on it.
    gate_size = int(max(limit, settings.MM_SEARCH_GATE_K))
    # With MM_ASYMMETRY_RANKING (off by default; the engine refuses to start with it while A's
    # gated check fails), the A score scales the score: 0.5 + 0.5 × A (no score: A = 0.5).
    asymmetry = ASYMMETRY_FACTOR_SQL if settings.MM_ASYMMETRY_RANKING else "1.0::float8"
    # A condition only a count for the reader decides is taken on the best rows only.
    shown_condition = relational.shown_sql("m.id")
    shown_rows = int(limit) * (EXACT_COUNT_ROWS if shown_condition else 1)
    shown_condition = f" AND {shown_condition}" if shown_condition else ""
    base = f"workspace_id = {int(workspace.pk)} AND scope_id = ANY(%(scopes)s) AND {where}"
    matches = _word_matches(base)  # each query word's keyword candidates
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
    # "+ 0" hides the ORDER BY expression from the planner, forcing an exact scan.
    distance = "(embedding <=> %(vector)s::vector)" + (" + 0" if exact else "")
    memory_columns = ", ".join(f'm."{model_field.column}"' for model_field in SHOWN_MEMORY_FIELDS)
    scope_columns = ", ".join(f's."{model_field.column}"' for model_field in SCOPE_FIELDS)
    # The vector list is its own CTE so the planner can use the HNSW index (or, for a small
    # workspace, the btree and an exact sort: it chooses by cost).
    sql = f"""
        WITH nearest AS (
            SELECT id, significance, created_at, search_vector, {distance} AS distance
            FROM memories_memory
            WHERE {base}{nearest_where} AND embedding IS NOT NULL
                AND embedding_model = %(model)s
            ORDER BY distance LIMIT {count}
        ),
        -- Up to an equal share of MM_SEARCH_KEYWORD_SCAN_MAX rows for each word that selects
        -- keyword candidates: all the matches of a rare word, a sample of a frequent one's.
        matching AS (
            SELECT DISTINCT ON (id) id, significance, created_at, embedding, embedding_model,
                search_vector
            FROM unnest(%(match_words)s::tsquery[]) AS w(word),
            LATERAL ({matches}) AS matches
            ORDER BY id
        ),
        -- Every row read so far gets a keyword rank: for each query word it holds, the word's
        -- ts_rank in it (its episode's words weighted lower) times how rare the word is among
        -- those rows (idf).
        pool AS (
            SELECT id, search_vector FROM nearest
            UNION
            SELECT id, search_vector FROM matching
        ),
        words AS (
            SELECT word, ln(1 + (pool_size - df + 0.5) / (df + 0.5)) AS idf
            FROM (
                SELECT w.word, count(*)::float8 AS df,
                    (SELECT count(*) FROM pool)::float8 AS pool_size
                FROM unnest(%(words)s::tsquery[]) AS w(word)
                JOIN pool p ON p.search_vector @@ w.word
                GROUP BY w.word
            ) AS counted
        ),
        ranks AS (
            SELECT p.id,
                sum(w.idf * ts_rank(%(rank_weights)s::float4[], p.search_vector, w.word))
                    AS keyword_rank
            FROM pool p JOIN words w ON p.search_vector @@ w.word
            GROUP BY p.id
        ),
        by_vector AS (
            SELECT n.id, n.significance, n.created_at, 1 - n.distance AS similarity,
                r.keyword_rank
            FROM nearest n LEFT JOIN ranks r ON r.id = n.id
        ),
        by_keyword AS (
            SELECT m.id, m.significance, m.created_at, m.embedding, m.embedding_model,
                r.keyword_rank
            FROM matching m JOIN ranks r ON r.id = m.id
            ORDER BY r.keyword_rank DESC, m.id LIMIT {count}
        ),
        -- Both signals of each candidate: the cosine of a keyword candidate is computed for
        -- the few that made the list. A memory on both lists has the same figures on both:
        -- DISTINCT ON keeps one.
        signals AS (
            SELECT DISTINCT ON (id) id, significance, created_at, similarity,
                COALESCE(keyword_rank, 0)::float8 AS keyword_rank,
                greatest(date_part('epoch', %(reference)s - created_at) / {SECONDS_PER_DAY}, 0)
                    AS age_days
            FROM (
                SELECT id, significance, created_at, similarity, keyword_rank FROM by_vector
                UNION ALL
                SELECT id, significance, created_at,
                    CASE WHEN embedding_model = %(model)s
                        THEN 1 - (embedding <=> %(vector)s::vector) ELSE 0 END,
                    keyword_rank
                FROM by_keyword
            ) AS both_lists
            ORDER BY id
        ),
        -- The vector of each candidate's episode with its own text (its own vector if it has
        -- no episode), and the memory it follows in its session.
        episodes AS (
            SELECT signals.*, e.follows_id, e.a_score,
                CASE WHEN e.episode_embedding IS NOT NULL AND e.embedding_model = %(model)s
                    THEN 1 - (e.episode_embedding <=> %(vector)s::vector)
                    ELSE signals.similarity END AS episode_similarity
            FROM signals JOIN memories_memory e
                ON e.id = signals.id AND e.workspace_id = {int(workspace.pk)}
        ),
        -- Each signal standardized over the candidates (z-scores), fused; then a share of the
        -- best fused figure among the candidates next to it in its session; then mapped to
        -- [0, 1]: the most relevant candidate 1, the least 0.
        normalized AS (
            SELECT *,
                COALESCE((similarity - avg(similarity) OVER ())
                    / NULLIF(stddev_pop(similarity) OVER (), 0), 0) AS similarity_z,
                COALESCE((keyword_rank - avg(keyword_rank) OVER ())
                    / NULLIF(stddev_pop(keyword_rank) OVER (), 0), 0) AS keyword_z,
                COALESCE((episode_similarity - avg(episode_similarity) OVER ())
                    / NULLIF(stddev_pop(episode_similarity) OVER (), 0), 0) AS episode_z
            FROM episodes
        ),
        fused AS (
            SELECT *, (1 - %(weight)s) * similarity_z + %(weight)s * keyword_z
                + %(episode_vector_weight)s * episode_z AS fused
            FROM normalized
        ),
        -- MATERIALIZED: computed once, not once for each use of "neighbour" below.
        neighboured AS MATERIALIZED (
            SELECT fused.*, %(neighbour_weight)s * COALESCE((
                SELECT max(next_to.fused) FROM fused AS next_to
                WHERE next_to.id = fused.follows_id OR next_to.follows_id = fused.id
            ), 0) AS neighbour
            FROM fused
        ),
        relevant AS (
            SELECT *, COALESCE((fused + neighbour - min(fused + neighbour) OVER ())
                / NULLIF(max(fused + neighbour) OVER () - min(fused + neighbour) OVER (), 0), 1)
                AS relevance
            FROM neighboured
        ),
        scored AS (
            SELECT *, power(0.5, LEAST(age_days / %(half_life)s, 900)) AS age_factor,
                {asymmetry} AS asymmetry_factor,
                -- PostgreSQL refuses a product of non-zero floats that rounds to zero (an
                -- "underflow" error): a significance under 1e-12 counts as 0, and the age
                -- factor stops at 900 half-lives, so no product of the three gets that small.
                relevance * CASE WHEN significance < 1e-12 THEN 0 ELSE significance END
                    * power(0.5, LEAST(age_days / %(half_life)s, 900)) * {asymmetry} AS score,
                row_number() OVER (ORDER BY relevance DESC, id) <= {gate_size}
                    AND relevance >= %(gate_ratio)s * max(relevance) OVER () AS passed_gate
            FROM relevant
        ),
        ranked AS (
            SELECT *, row_number() OVER (
                ORDER BY passed_gate DESC, CASE WHEN passed_gate THEN score ELSE 0 END DESC,
                    relevance DESC, created_at DESC, id
            ) AS position
            FROM scored
        )
        SELECT {memory_columns}, {scope_columns}, r.mem_id,
            ranked.similarity, ranked.keyword_rank, ranked.episode_similarity,
            ranked.similarity_z, ranked.keyword_z, ranked.episode_z, ranked.fused,
            ranked.neighbour, ranked.relevance,
            ranked.age_days, ranked.age_factor, ranked.asymmetry_factor, ranked.score,
            ranked.passed_gate
        FROM ranked
        JOIN memories_memory m ON m.id = ranked.id AND m.workspace_id = {int(workspace.pk)}
        JOIN memories_scope s ON s.id = m.scope_id
        LEFT JOIN memories_memory r
            ON r.id = m.superseded_by_id AND r.workspace_id = {int(workspace.pk)}
        WHERE ranked.position <= {shown_rows}{shown_condition}
        ORDER BY ranked.position
        LIMIT {int(limit)}
    """
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
    # The learned ranking reads a few fields of every candidate; the rest is read for the hits
    # it keeps (the graph, which keeps twice the candidates a list, reads them whole).
    candidates = learned and not every_candidate and expand != "graph"
    hits = [hit_from_row(row, candidate=candidates) for row in rows]
    if every_candidate:
        return hits
    if learned:
        kept = 2 * count if expand == "graph" else shown_limit
        hits = [hydrated(hit) for hit in reranked(hits, query=query, limit=kept)]
    if expand == "graph":
        hits = expanded(hits, limit=shown_limit, workspace_id=workspace.pk)
    attach_references([h.memory for h in hits])
    boundary = eligibility_boundary(reader, now)
    eligible = boundary.eligibility_of([h.memory for h in hits], now)
    relations = relational.explain([h.memory for h in hits], scope_ids)
    return [
        replace(hit, eligible=value, relations=why)
        for hit, value, why in zip(hits, eligible, relations, strict=True)
    ]


def _word_matches(where: str) -> str:
    """The keyword candidates of one query word (``w.word``): up to an equal share of
    ``MM_SEARCH_KEYWORD_SCAN_MAX`` of the memories ``where`` keeps that hold it."""
    return f"""
        SELECT id, significance, created_at, embedding, embedding_model, search_vector
        FROM memories_memory
        WHERE search_vector @@ w.word AND {where}
        LIMIT %(per_word)s
    """
