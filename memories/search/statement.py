"""The ranking statement of ``memories.search``, built from named pieces: each a common table
expression (or a few) that a recipe (``memories.search.recipe``) composes.

* Candidate sources: ``vector_source`` (the nearest by cosine distance), ``keyword_source``
  (each query word's matches, ranked by keyword rank), ``time_neighbour_source`` (the turns
  just before and after the strongest of both lists in their session).
* Signals: ``keyword_rank_signal`` (idf-weighted ``ts_rank`` over every row read),
  ``signals`` (similarity and keyword rank of every candidate, and the sources that found it),
  ``episode_signal`` (the similarity of its episode's vector).
* ``fusion`` (the z-scored signals, weighted), ``neighbour_term`` (a share of the best fused
  figure next to it in its session), ``relevance`` (mapped to [0, 1]).
* ``gate_and_score`` (the formula's score, and whether it passed the gate) and ``order``.

``statement`` joins them; its parameters are the ranking's (``memories.search.ranking``). A
new source is a builder here that selects ``CANDIDATE_COLUMNS`` and a name in
``recipe.SOURCES``; a new signal is a column of ``signals`` or ``episode_signal`` and a term
of ``fusion`` (ARCHITECTURE.md, "Add a candidate source", "Add a signal").
"""

from __future__ import annotations

from memories.search.recipe import Recipe

SECONDS_PER_DAY = 86_400.0
#: The ranking's factor of the A score when the recipe ranks by it (MM_ASYMMETRY_RANKING).
ASYMMETRY_FACTOR_SQL = "(0.5 + 0.5 * COALESCE(a_score, 0.5))"
#: What a keyword-ranked source selects of each memory.
CANDIDATE_COLUMNS = "id, significance, created_at, embedding, embedding_model, search_vector"
#: The figures the statement returns after each shown memory's columns, in order
#: (``memories.search.hydration.hit_from_row`` reads them).
FIGURES = (
    "similarity",
    "keyword_rank",
    "episode_similarity",
    "similarity_z",
    "keyword_z",
    "episode_z",
    "fused",
    "neighbour",
    "relevance",
    "age_days",
    "age_factor",
    "asymmetry_factor",
    "score",
    "passed_gate",
    "found_by",
)


def vector_source(*, base: str, nearest_where: str, count: int, exact: bool) -> str:
    """The ``count`` nearest by cosine distance. Its own CTE so the planner can use the HNSW
    index (or, for a small workspace, the btree and an exact sort: it chooses by cost);
    ``exact``: "+ 0" hides the ORDER BY expression from the planner, forcing an exact scan."""
    distance = "(embedding <=> %(vector)s::vector)" + (" + 0" if exact else "")
    return f"""
        nearest AS (
            SELECT id, significance, created_at, search_vector, {distance} AS distance
            FROM memories_memory
            WHERE {base}{nearest_where} AND embedding IS NOT NULL
                AND embedding_model = %(model)s
            ORDER BY distance LIMIT {int(count)}
        )"""


def keyword_source(*, base: str) -> str:
    """Up to an equal share of MM_SEARCH_KEYWORD_SCAN_MAX rows for each word that selects
    keyword candidates (``%(per_word)s``): all the matches of a rare word, a sample of a
    frequent one's. ``keyword_rank_signal`` ranks them; ``signals`` keeps the best."""
    return f"""
        matching AS (
            SELECT DISTINCT ON (id) {CANDIDATE_COLUMNS}
            FROM unnest(%(match_words)s::tsquery[]) AS w(word),
            LATERAL (
                SELECT {CANDIDATE_COLUMNS} FROM memories_memory
                WHERE search_vector @@ w.word AND {base}
                LIMIT %(per_word)s
            ) AS matches
            ORDER BY id
        )"""


def keyword_rank_signal() -> str:
    """Every row read so far gets a keyword rank: for each query word it holds, the word's
    ts_rank in it (its episode's words weighted lower) times how rare the word is among those
    rows (idf)."""
    return """
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
        )"""


def keyword_list(*, count: int) -> str:
    """The keyword source's ``count`` best by keyword rank."""
    return f"""
        by_keyword AS (
            SELECT m.id, m.significance, m.created_at, m.embedding, m.embedding_model,
                r.keyword_rank
            FROM matching m JOIN ranks r ON r.id = m.id
            ORDER BY r.keyword_rank DESC, m.id LIMIT {int(count)}
        )"""


def time_neighbour_source(*, base: str, workspace_id: int, seeds: int) -> str:
    """The memories just before and just after (``follows``) the ``seeds`` nearest and the
    ``seeds`` best by keyword rank, in their session, that the filters keep: the turn that
    answers a question is often next to the one that matches it. Their keyword rank uses the
    idf of the rows read before them."""
    return f"""
        seeds AS (
            (SELECT id FROM nearest ORDER BY distance, id LIMIT {int(seeds)})
            UNION
            (SELECT id FROM by_keyword ORDER BY keyword_rank DESC, id LIMIT {int(seeds)})
        ),
        adjacent AS (
            SELECT {CANDIDATE_COLUMNS} FROM memories_memory
            WHERE {base} AND (
                follows_id IN (SELECT id FROM seeds)
                OR id IN (
                    SELECT s.follows_id FROM memories_memory s
                    WHERE s.id IN (SELECT id FROM seeds) AND s.workspace_id = {int(workspace_id)}
                )
            )
        ),
        by_time AS (
            SELECT a.id, a.significance, a.created_at, a.embedding, a.embedding_model,
                (SELECT sum(w.idf * ts_rank(%(rank_weights)s::float4[], a.search_vector, w.word))
                 FROM words w WHERE a.search_vector @@ w.word) AS keyword_rank
            FROM adjacent a
        )"""


def _compared(source: str, name: str) -> str:
    """A keyword-ranked list's rows with their cosine to the query (0 for another model's)."""
    return f"""
                SELECT id, significance, created_at,
                    CASE WHEN embedding_model = %(model)s
                        THEN 1 - (embedding <=> %(vector)s::vector) ELSE 0 END,
                    keyword_rank, '{name}'
                FROM {source}"""


def signals(*, time_neighbours: bool) -> str:
    """Both signals of each candidate, and the sources that found it: the cosine of a keyword
    candidate is computed for the few that made the list. A memory on several lists has the
    same figures on each: DISTINCT ON keeps one."""
    lists = [
        "SELECT id, significance, created_at, similarity, keyword_rank, 'vector' FROM by_vector",
        _compared("by_keyword", "keyword"),
    ]
    if time_neighbours:
        lists.append(_compared("by_time", "time_neighbours"))
    return f"""
        signals AS (
            SELECT DISTINCT ON (id) id, significance, created_at, similarity,
                COALESCE(keyword_rank, 0)::float8 AS keyword_rank,
                greatest(date_part('epoch', %(reference)s - created_at) / {SECONDS_PER_DAY}, 0)
                    AS age_days,
                array_agg(source) OVER (PARTITION BY id) AS found_by
            FROM (
                {" UNION ALL ".join(lists)}
            ) AS lists(id, significance, created_at, similarity, keyword_rank, source)
            ORDER BY id, source = 'time_neighbours'
        )"""


def episode_signal(*, workspace_id: int) -> str:
    """The vector of each candidate's episode with its own text (its own vector if it has no
    episode), and the memory it follows in its session."""
    return f"""
        episodes AS (
            SELECT signals.*, e.follows_id, e.a_score,
                CASE WHEN e.episode_embedding IS NOT NULL AND e.embedding_model = %(model)s
                    THEN 1 - (e.episode_embedding <=> %(vector)s::vector)
                    ELSE signals.similarity END AS episode_similarity
            FROM signals JOIN memories_memory e
                ON e.id = signals.id AND e.workspace_id = {int(workspace_id)}
        )"""


def _z(column: str) -> str:
    return (
        f"COALESCE(({column} - avg({column}) OVER ()) / NULLIF(stddev_pop({column}) OVER (), 0), 0)"
    )


def fusion() -> str:
    """Each signal standardized over the candidates (z-scores), weighted and summed."""
    return f"""
        normalized AS (
            SELECT *, {_z("similarity")} AS similarity_z, {_z("keyword_rank")} AS keyword_z,
                {_z("episode_similarity")} AS episode_z
            FROM episodes
        ),
        fused AS (
            SELECT *, (1 - %(weight)s) * similarity_z + %(weight)s * keyword_z
                + %(episode_vector_weight)s * episode_z AS fused
            FROM normalized
        )"""


def neighbour_term() -> str:
    """A share of the best fused figure among the candidates next to each in its session.
    MATERIALIZED: computed once, not once for each use of "neighbour" below."""
    return """
        neighboured AS MATERIALIZED (
            SELECT fused.*, %(neighbour_weight)s * COALESCE((
                SELECT max(next_to.fused) FROM fused AS next_to
                WHERE next_to.id = fused.follows_id OR next_to.follows_id = fused.id
            ), 0) AS neighbour
            FROM fused
        )"""


def relevance() -> str:
    """The fused figure with its neighbour term, mapped to [0, 1]: the most relevant candidate
    1, the least 0."""
    return """
        relevant AS (
            SELECT *, COALESCE((fused + neighbour - min(fused + neighbour) OVER ())
                / NULLIF(max(fused + neighbour) OVER () - min(fused + neighbour) OVER (), 0), 1)
                AS relevance
            FROM neighboured
        )"""


def gate_and_score(*, gate_size: int, asymmetry: bool) -> str:
    """The score (relevance × significance × the age factor, × the A factor when the recipe
    ranks by it: 0.5 + 0.5 × A, 0.5 with no score), and the gate: among the ``gate_size`` most
    relevant, with at least ``%(gate_ratio)s`` of the best relevance.

    PostgreSQL refuses a product of non-zero floats that rounds to zero (an "underflow"
    error): a significance under 1e-12 counts as 0, and the age factor stops at 900
    half-lives, so no product of the three gets that small."""
    factor = ASYMMETRY_FACTOR_SQL if asymmetry else "1.0::float8"
    return f"""
        scored AS (
            SELECT *, power(0.5, LEAST(age_days / %(half_life)s, 900)) AS age_factor,
                {factor} AS asymmetry_factor,
                relevance * CASE WHEN significance < 1e-12 THEN 0 ELSE significance END
                    * power(0.5, LEAST(age_days / %(half_life)s, 900)) * {factor} AS score,
                row_number() OVER (ORDER BY relevance DESC, id) <= {int(gate_size)}
                    AND relevance >= %(gate_ratio)s * max(relevance) OVER () AS passed_gate
            FROM relevant
        )"""


def order() -> str:
    """The memories that passed the gate by score, then the others by relevance alone; ties to
    the newer memory, then the id."""
    return """
        ranked AS (
            SELECT *, row_number() OVER (
                ORDER BY passed_gate DESC, CASE WHEN passed_gate THEN score ELSE 0 END DESC,
                    relevance DESC, created_at DESC, id
            ) AS position
            FROM scored
        )"""


def statement(
    recipe: Recipe,
    *,
    base: str,
    nearest_where: str,
    workspace_id: int,
    count: int,
    exact: bool,
    gate_size: int,
    shown: str,
) -> str:
    """The whole statement: the pieces of ``recipe`` and the shown rows (``shown``: the select
    list, joins and conditions after ``ranked``)."""
    time_neighbours = "time_neighbours" in recipe.sources
    pieces = [
        vector_source(base=base, nearest_where=nearest_where, count=count, exact=exact),
        keyword_source(base=base),
        keyword_rank_signal(),
        keyword_list(count=count),
    ]
    if time_neighbours:
        pieces.append(
            time_neighbour_source(
                base=base, workspace_id=workspace_id, seeds=recipe.time_neighbour_seeds
            )
        )
    pieces += [
        signals(time_neighbours=time_neighbours),
        episode_signal(workspace_id=workspace_id),
        fusion(),
        neighbour_term(),
        relevance(),
        gate_and_score(gate_size=gate_size, asymmetry=recipe.asymmetry),
        order(),
    ]
    return "WITH" + ",".join(pieces) + "\n" + shown
