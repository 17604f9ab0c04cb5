"""Search: one formula, explained on every hit.

    score = relevance × significance × 0.5 ^ (age_days / MM_S1_HALF_LIFE_DAYS)

1. Candidates. Two index scans over the memories the caller may see that pass the filters:
   the ``max(MM_SEARCH_CANDIDATES, limit)`` nearest by cosine distance (pgvector HNSW with
   iterative scan so filters do not starve it) and as many best by keyword rank, read from the
   GIN index: up to an equal share of ``MM_SEARCH_KEYWORD_SCAN_MAX`` memories for each query
   word (common words select none: see ``common_words``), which bounds the cost in a very large
   workspace. A large workspace in a shared table has its own partial index of each kind
   (``memories.indexing``).
2. Keyword rank. A memory's full-text index holds its own words (weight 1) and its episode's,
   the memories just before it in its session (``Memory.episode_text``, weight
   ``MM_SEARCH_EPISODE_WEIGHT``). For each query word: ``ts_rank`` of the word in the memory
   times the word's idf among the memories read in step 1; the rank is the sum.
3. Relevance of each candidate, in [0, 1]: similarity and keyword rank standardized over the
   candidates (z-scores), fused as ``(1 − w) × z(similarity) + w × z(keyword rank)`` with
   w = ``MM_SEARCH_KEYWORD_WEIGHT``, then scaled so the most relevant candidate has 1 and the
   least 0. The gate: a candidate passes when it is among the ``max(limit, MM_SEARCH_GATE_K)``
   most relevant and its relevance is at least ``MM_SEARCH_GATE_RATIO``. Only the memories
   that pass are ordered by the score; the others follow them, in order of relevance alone.
   So significance and age re-order the memories about as relevant as the best and can never
   lift a less relevant memory above them.
4. Score by the formula. ``age_days`` counts from ``created_at`` to ``as_of`` (or now) and is
   never negative. Ties go to the more relevant, then the newer memory.
"""

from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field, Model
from django.db.models.expressions import Col
from django.utils import timezone
from psycopg.types.numeric import Int8

from memories import rules
from memories.eligibility import eligibility_boundary
from memories.embeddings import current_model_name, get_embedder
from memories.errors import Errors
from memories.models import STARE_DIMENSIONS, TEXT_SEARCH_CONFIG, Agent, Memory, Scope, Workspace
from memories.prepared import prepared_cursor
from memories.selectors import SHARED_SCOPE_IDS_SQL, with_private_scope

#: Statuses a search can return. A superseded memory's window closes where its replacement's
#: begins, so it is found by ``as_of`` inside its window, by ``currently_valid: false`` once the
#: window has ended, and as valid now only until a replacement that starts later takes over.
#: How mature what this module implements is, read by the readiness registry.
READINESS = {"S/core": "GA", "T/core": "GA"}
SEARCHABLE_STATUSES = (Memory.Status.ACTIVE.value, Memory.Status.SUPERSEDED.value)
DEFAULT_LIMIT = 10
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    similarity: float
    keyword_rank: float
    episode_similarity: float
    similarity_z: float
    keyword_z: float
    episode_z: float
    fused: float
    neighbour: float
    relevance: float
    age_days: float
    age_factor: float
    score: float
    gated: bool
    eligible: str

    def explanation(self) -> dict[str, float | bool]:
        return {
            "similarity": round(self.similarity, 6),
            "keyword_rank": round(self.keyword_rank, 6),
            "episode_similarity": round(self.episode_similarity, 6),
            "similarity_z": round(self.similarity_z, 6),
            "keyword_z": round(self.keyword_z, 6),
            "episode_z": round(self.episode_z, 6),
            "fused": round(self.fused, 6),
            "neighbour": round(self.neighbour, 6),
            "relevance": round(self.relevance, 6),
            "significance": self.memory.significance,
            "age_days": round(self.age_days, 3),
            "age_factor": round(self.age_factor, 6),
            "score": round(self.score, 6),
            "passed_gate": self.gated,
        }


@dataclass(frozen=True)
class SearchFilters:
    as_of: datetime | None
    currently_valid: bool | None
    category: str | None
    memory_type: str | None
    source: str | None
    min_scores: dict[str, float]

    def sql(self, now: datetime) -> tuple[str, dict[str, object]]:
        """WHERE fragments (beyond workspace and scope) and their named parameters."""
        clauses = ["status = ANY(%(statuses)s)"]
        params: dict[str, object] = {"statuses": list(SEARCHABLE_STATUSES)}
        for instant, name in (
            (self.as_of, "as_of"),
            (now if self.currently_valid else None, "now"),
        ):
            if instant is not None:
                clauses.append(f"(valid_from IS NULL OR valid_from <= %({name})s)")
                clauses.append(f"(valid_until IS NULL OR valid_until > %({name})s)")
                params[name] = instant
        if self.currently_valid is False:
            clauses.append("valid_until <= %(now)s")
            params["now"] = now
        for column, value in (
            ("category", self.category),
            ("memory_type", self.memory_type),
            ("source", self.source),
        ):
            if value:
                clauses.append(f"{column} = %({column})s")
                params[column] = value
        for dim, minimum in self.min_scores.items():
            clauses.append(f"{dim}_score >= %(min_{dim}_score)s")  # NULL (no score) never passes
            params[f"min_{dim}_score"] = minimum
        return " AND ".join(clauses), params


def _validate(
    *,
    query: str,
    limit: int | None,
    min_scores: dict[str, float | None] | None,
    category: str | None,
    memory_type: str | None,
    source: str | None,
) -> tuple[int, dict[str, float]]:
    errors = Errors()
    if message := rules.memory_text(query):
        errors.add("query", message)
    limit = DEFAULT_LIMIT if limit is None else limit
    if message := rules.search_limit(limit):
        errors.add("limit", message)
    if message := rules.choice(category, Memory.Category.values):
        errors.add("category", message)
    if message := rules.choice(memory_type, Memory.MemoryType.values):
        errors.add("memory_type", message)
    if message := rules.storable_text(source):
        errors.add("source", message)
    minimums: dict[str, float] = {}
    for dim, value in (min_scores or {}).items():
        if value is None:
            continue
        if dim not in STARE_DIMENSIONS:
            errors.add(f"min_{dim}_score", "is not a STARE dimension filter.")
        elif message := rules.unit_interval(value):
            errors.add(f"min_{dim}_score", message)
        else:
            minimums[dim] = value
    errors.raise_if_any()
    return limit, minimums


def memory_search(
    *,
    agent: Agent | None = None,
    workspace: Workspace | None = None,
    query: str,
    limit: int | None = None,
    as_of: datetime | None = None,
    currently_valid: bool | None = None,
    category: str | None = None,
    memory_type: str | None = None,
    source: str | None = None,
    min_scores: dict[str, float | None] | None = None,
    now: datetime | None = None,
    query_vector: np.ndarray | None = None,
    exact: bool = False,
) -> list[SearchHit]:
    """Rank the memories ``agent`` may see for ``query`` (see the module docstring); without
    an agent, every memory of ``workspace`` (a team member's view: the dashboard).

    With neither ``as_of`` nor ``currently_valid`` given, only memories valid now are searched
    (``currently_valid`` defaults to true). ``exact`` replaces the HNSW scan by an exact one:
    benchmarks use it to measure the index's recall.
    """
    limit, minimums = _validate(
        query=query,
        limit=limit,
        min_scores=min_scores,
        category=category,
        memory_type=memory_type,
        source=source,
    )
    now = now or timezone.now()
    if as_of is None and currently_valid is None:
        currently_valid = True
    filters = SearchFilters(
        as_of=as_of,
        currently_valid=currently_valid,
        category=category,
        memory_type=memory_type,
        source=source,
        min_scores=minimums,
    )
    if query_vector is None:
        query_vector = get_embedder().embed([query])[0]
    if agent is None and workspace is None:
        raise ValueError("memory_search needs an agent or a workspace")
    return _ranked(
        agent=agent,
        workspace=agent.workspace if agent is not None else workspace,
        query=query,
        vector=query_vector,
        filters=filters,
        limit=limit,
        reference=as_of or now,
        now=now,
        exact=exact,
    )


def _ranked(
    *,
    agent: Agent | None,
    workspace: Workspace,
    query: str,
    vector: np.ndarray,
    filters: SearchFilters,
    limit: int,
    reference: datetime,
    now: datetime,
    exact: bool,
) -> list[SearchHit]:
    """The ranking of the module docstring, as one SQL statement: candidates, their signals,
    relevance, the gate and the score, and the shown memories with their scope and replacement.

    Only vectors of the configured embedder's model are compared with the query's; a memory
    embedded by another model (before a change of ``MM_EMBEDDER``) is found by keyword alone,
    with similarity 0, until it is re-embedded.
    """
    scope_ids, words = _scopes_and_words(agent, query, workspace.pk)
    ranked_words, matched_words = _keyword_lexemes(words, workspace.pk)
    where, params = filters.sql(now)
    count = max(settings.MM_SEARCH_CANDIDATES, limit)
    params |= {
        "scopes": [Int8(scope_id) for scope_id in scope_ids],
        "words": [_tsquery([word]) for word in ranked_words],
        "match_words": [_tsquery([word]) for word in matched_words],
        "per_word": -(-int(settings.MM_SEARCH_KEYWORD_SCAN_MAX) // max(len(matched_words), 1)),
        "rank_weights": [0.0, 0.0, float(settings.MM_SEARCH_EPISODE_WEIGHT), 1.0],
        "episode_vector_weight": float(settings.MM_SEARCH_EPISODE_VECTOR_WEIGHT),
        "neighbour_weight": float(settings.MM_SEARCH_NEIGHBOUR_WEIGHT),
        "model": current_model_name(),
        "vector": "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]",
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
    base = f"workspace_id = {int(workspace.pk)} AND scope_id = ANY(%(scopes)s) AND {where}"
    # "+ 0" hides the ORDER BY expression from the planner, forcing an exact scan.
    distance = "(embedding <=> %(vector)s::vector)" + (" + 0" if exact else "")
    memory_columns = ", ".join(f'm."{model_field.column}"' for model_field in _SHOWN_MEMORY_FIELDS)
    scope_columns = ", ".join(f's."{model_field.column}"' for model_field in _SCOPE_FIELDS)
    # The vector list is its own CTE so the planner can use the HNSW index (or, for a small
    # workspace, the btree and an exact sort: it chooses by cost).
    sql = f"""
        WITH nearest AS (
            SELECT id, significance, created_at, search_vector, {distance} AS distance
            FROM memories_memory
            WHERE {base} AND embedding IS NOT NULL AND embedding_model = %(model)s
            ORDER BY distance LIMIT {count}
        ),
        -- Up to an equal share of MM_SEARCH_KEYWORD_SCAN_MAX rows for each word that selects
        -- keyword candidates: all the matches of a rare word, a sample of a frequent one's.
        matching AS (
            SELECT DISTINCT ON (id) id, significance, created_at, embedding, embedding_model,
                search_vector
            FROM unnest(%(match_words)s::tsquery[]) AS w(word),
            LATERAL (
                SELECT id, significance, created_at, embedding, embedding_model, search_vector
                FROM memories_memory
                WHERE search_vector @@ w.word AND {base}
                LIMIT %(per_word)s
            ) AS matches
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
            SELECT signals.*, e.follows_id,
                CASE WHEN e.episode_embedding IS NOT NULL AND e.embedding_model = %(model)s
                    THEN 1 - (e.episode_embedding <=> %(vector)s::vector)
                    ELSE signals.similarity END AS episode_similarity
            FROM signals JOIN memories_memory e ON e.id = signals.id
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
            SELECT *, power(0.5, LEAST(age_days / %(half_life)s, 1000)) AS age_factor,
                relevance * significance
                    * power(0.5, LEAST(age_days / %(half_life)s, 1000)) AS score,
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
            ranked.age_days, ranked.age_factor, ranked.score, ranked.passed_gate
        FROM ranked
        JOIN memories_memory m ON m.id = ranked.id
        JOIN memories_scope s ON s.id = m.scope_id
        LEFT JOIN memories_memory r ON r.id = m.superseded_by_id
        WHERE ranked.position <= {int(limit)}
        ORDER BY ranked.position
    """
    # Every connection starts with hnsw.ef_search and hnsw.iterative_scan set (see
    # ``meaning_memory.db.search_options``): no transaction, no extra round trip, unless the
    # search wants more candidates than the index's search list holds.
    widen = count > settings.MM_HNSW_EF_SEARCH
    with transaction.atomic() if widen else contextlib.nullcontext():
        if widen:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(count)])
        with prepared_cursor(connection) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    hits = [_hit(row) for row in rows]
    boundary = eligibility_boundary(agent, now, workspace=workspace)
    eligible = boundary.eligibility_of([h.memory for h in hits], now)
    return [replace(hit, eligible=value) for hit, value in zip(hits, eligible, strict=True)]


def _hit(row: tuple) -> SearchHit:
    """A search hit from a row of ``_ranked``'s statement: the memory with its scope and
    replacement, and the figures that explain its place."""
    memory_end = len(_SHOWN_MEMORY_FIELDS)
    scope_end = memory_end + len(_SCOPE_FIELDS)
    memory = _instance(Memory, _SHOWN_MEMORY_FIELDS, row[:memory_end])
    memory.scope = _instance(Scope, _SCOPE_FIELDS, row[memory_end:scope_end])
    replacement_mem_id, *figures = row[scope_end:]
    if memory.superseded_by_id is not None:
        memory.superseded_by = Memory.from_db(
            connection.alias, ["id", "mem_id"], [memory.superseded_by_id, replacement_mem_id]
        )
    (similarity, keyword_rank, episode_similarity, *rest) = figures
    similarity_z, keyword_z, episode_z, fused, neighbour, relevance, *rest = rest
    age_days, age_factor, score, gated = rest
    return SearchHit(
        memory=memory,
        similarity=similarity,
        keyword_rank=keyword_rank,
        episode_similarity=episode_similarity,
        similarity_z=similarity_z,
        keyword_z=keyword_z,
        episode_z=episode_z,
        fused=fused,
        neighbour=neighbour,
        relevance=relevance,
        age_days=age_days,
        age_factor=age_factor,
        score=score,
        gated=gated,
        eligible="",  # set by _ranked for all hits at once
    )


def _instance(model: type[Model], fields: tuple[Field, ...], values: tuple) -> Model:
    """A model instance from a row's values for ``fields`` (the others deferred), converted
    from their database form as the ORM converts them (a JSON field's text, for one)."""
    converted = list(values)
    for index, column, converters in _converters(model, fields):
        for converter in converters:
            converted[index] = converter(converted[index], column, connection)
    return model.from_db(
        connection.alias, [model_field.attname for model_field in fields], converted
    )


@functools.cache
def _converters(model: type[Model], fields: tuple[Field, ...]) -> list[tuple[int, Col, list]]:
    """For each of ``fields`` that has any, the converters the ORM applies to its values."""
    found = []
    for index, model_field in enumerate(fields):
        column = model_field.get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(column)
        converters += column.get_db_converters(connection)
        if converters:
            found.append((index, column, converters))
    return found


#: What a search loads of each memory it shows: everything but the vectors.
_SHOWN_MEMORY_FIELDS = tuple(
    model_field
    for model_field in Memory._meta.concrete_fields
    if model_field.name not in {"embedding", "episode_embedding", "search_vector"}
)
_SCOPE_FIELDS = tuple(Scope._meta.concrete_fields)


def _tsquery(words: list[str]) -> str | None:
    """The words OR-ed, as tsquery text (None for no words). Passed as a constant, not built in
    SQL, so that the planner can estimate from its statistics how many memories match it."""
    if not words:
        return None
    return " | ".join("'" + word.replace("\\", "\\\\").replace("'", "''") + "'" for word in words)


#: Every scope of a workspace (one parameter: its id): what a team member reads.
WORKSPACE_SCOPE_IDS_SQL = f"SELECT id FROM {Scope._meta.db_table} WHERE workspace_id = %s"


def _scopes_and_words(
    agent: Agent | None, query: str, workspace_id: int
) -> tuple[list[int], list[str]]:
    """The scope ids the reader sees (the agent's, or the whole workspace's) and the query's
    words (stemmed, without stop words), in one round trip: every search needs both before
    its statement can be written."""
    scopes_sql = SHARED_SCOPE_IDS_SQL if agent is not None else WORKSPACE_SCOPE_IDS_SQL
    with prepared_cursor(connection) as cursor:
        cursor.execute(
            f"SELECT ARRAY({scopes_sql}), ARRAY(SELECT DISTINCT lexeme "
            f"FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %s)) ORDER BY lexeme)",
            [agent.pk if agent is not None else workspace_id, query],
        )
        scope_ids, words = cursor.fetchone()
    return (with_private_scope(agent, scope_ids) if agent is not None else scope_ids), words


def _keyword_lexemes(words: list[str], workspace_id: int) -> tuple[list[str], list[str]]:
    """The words keyword rank is computed with (all of them) and the words keyword candidates
    must contain: those not common in the workspace (see ``common_words``) or, if every word
    is common, the least common one alone."""
    common = common_words(workspace_id)
    matched = [word for word in words if word not in common]
    if not matched and words:
        matched = [min(words, key=lambda word: (common[word], word))]
    return words, matched


#: How long a process keeps PostgreSQL's statistics before reading them again. They change only
#: when the table is analyzed (autovacuum does it as the table grows), and a stale copy only
#: delays the moment a word starts or stops counting as common: it never hides a memory.
STATISTICS_TTL_S = 300.0


@dataclass(frozen=True)
class _Statistics:
    read_at: float
    rows: float  # memories in the table (pg_class.reltuples)
    words: tuple[tuple[str, float], ...]  # most common lexemes, share of memories holding each
    workspaces: dict[int, float]  # most common workspaces, share of memories in each
    other_workspace: float  # the average share of any other workspace
    common: dict[tuple[int, int], dict[str, float]] = field(default_factory=dict)


_statistics: dict[str, _Statistics] = {}


def _read_statistics() -> _Statistics:
    stats = (
        "FROM pg_stats s, unnest(s.{values}::text::text[], s.{freqs}) AS u(value, share) "
        "WHERE s.schemaname = current_schema() AND s.tablename = 'memories_memory' "
        "AND s.attname = '{column}' AND u.value IS NOT NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'rows', NULL, reltuples::float8 FROM pg_class "
            "WHERE oid = 'memories_memory'::regclass "
            "UNION ALL SELECT 'word', u.value, u.share "
            + stats.format(
                values="most_common_elems", freqs="most_common_elem_freqs", column="search_vector"
            )
            + " UNION ALL SELECT 'workspace', u.value, u.share "
            + stats.format(
                values="most_common_vals", freqs="most_common_freqs", column="workspace_id"
            )
            + " UNION ALL SELECT 'distinct', NULL, n_distinct::float8 FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = 'memories_memory' "
            "AND attname = 'workspace_id'"
        )
        found = cursor.fetchall()
    rows = max([value for kind, _, value in found if kind == "rows"] + [0.0])
    workspaces = {int(pk): share for kind, pk, share in found if kind == "workspace"}
    # As the planner estimates a value missing from the most common ones: the rest of the rows
    # spread evenly over the rest of the distinct values (n_distinct < 0 is a share of rows).
    distinct = next((value for kind, _, value in found if kind == "distinct"), 0.0)
    distinct = -distinct * rows if distinct < 0 else distinct
    others = distinct - len(workspaces)
    return _Statistics(
        read_at=time.monotonic(),
        rows=rows,
        words=tuple((word, share) for kind, word, share in found if kind == "word"),
        workspaces=workspaces,
        other_workspace=max(1.0 - sum(workspaces.values()), 0.0) / others if others >= 1 else 0.0,
    )


def common_words(workspace_id: int) -> dict[str, float]:
    """The words too common to select keyword candidates in a workspace, with the share of all
    memories holding each.

    A word is common when more than ``MM_SEARCH_KEYWORD_SCAN_MAX`` memories of the workspace
    are expected to hold it: (its share of all memories) × (the workspace's share of all
    memories) × (all memories), from PostgreSQL's statistics (the most common elements of the
    ``search_vector`` column, up to 10,000 of them, and the most common values of
    ``workspace_id``; a workspace not among those gets the average share of the others). Its
    matches could not all be ranked, so they would be an arbitrary sample, and such a word says
    little about relevance anyway; it still counts in the keyword rank. A table not analyzed
    yet has no common words. The statistics are read once per ``STATISTICS_TTL_S`` per
    process, not per search.
    """
    statistics = _statistics.get(connection.alias)
    if statistics is None or time.monotonic() - statistics.read_at > STATISTICS_TTL_S:
        statistics = _statistics[connection.alias] = _read_statistics()
    limit = settings.MM_SEARCH_KEYWORD_SCAN_MAX
    common = statistics.common.get((workspace_id, limit))
    if common is None:
        share = statistics.workspaces.get(workspace_id, statistics.other_workspace)
        workspace_rows = statistics.rows * share
        common = {word: share for word, share in statistics.words if share * workspace_rows > limit}
        statistics.common[(workspace_id, limit)] = common
    return common


def forget_statistics() -> None:
    """Read PostgreSQL's statistics again at the next search (after an ANALYZE, in tests)."""
    _statistics.clear()


def keyword_queries(query: str, agent: Agent) -> tuple[str | None, str | None]:
    """The two tsqueries a search for ``query`` by ``agent`` uses: the one keyword rank is
    computed with and the one keyword candidates must match (see ``_keyword_lexemes``)."""
    _, words = _scopes_and_words(agent, query, agent.workspace_id)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %s::tsquery::text, %s::tsquery::text",
            [_tsquery(lexemes) for lexemes in _keyword_lexemes(words, agent.workspace_id)],
        )
        return cursor.fetchone()
