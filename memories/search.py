"""Search: one formula, explained on every hit.

    score = relevance × significance × 0.5 ^ (age_days / MM_S1_HALF_LIFE_DAYS)

1. Candidates. Two index scans over the memories the caller may see that pass the filters:
   the ``max(MM_SEARCH_CANDIDATES, limit)`` nearest by cosine distance (pgvector HNSW with
   iterative scan so filters do not starve it, or a large workspace's own partial HNSW index:
   see ``memories.indexing``) and as many best by full-text rank (GIN index; the query's words
   are OR-ed, so a memory needs only one of them to match, and common words do not select
   candidates: see ``common_words``). ``ts_rank`` is computed for at most
   ``MM_SEARCH_KEYWORD_SCAN_MAX`` matching rows, which bounds its cost in a very large
   workspace.
2. Relevance of each candidate, in [0, 1]:
   ``(1 − w) × max(cosine similarity, 0) + w × keyword``, where keyword is the candidate's
   ``ts_rank`` divided by the best ``ts_rank`` among the candidates and
   w = ``MM_SEARCH_KEYWORD_WEIGHT`` (default 0.5).
3. The gate. A candidate passes when it is among the ``max(limit, MM_SEARCH_GATE_K)`` most
   relevant and its relevance is at least ``MM_SEARCH_GATE_RATIO`` (default 0.5) × the best
   candidate's relevance. Only the memories that pass are ordered by the score; the others
   follow them, in order of relevance alone. So significance and age re-order the relevant
   memories and can never lift an off-topic memory above a relevant one.
4. Score by the formula. ``age_days`` counts from ``created_at`` to ``as_of`` (or now) and is
   never negative. Ties go to the more relevant, then the newer memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories import rules
from memories.embeddings import current_model_name, get_embedder
from memories.errors import Errors
from memories.models import STARE_DIMENSIONS, TEXT_SEARCH_CONFIG, Agent, Memory, Scope
from memories.selectors import SHARED_SCOPE_IDS_SQL, with_private_scope

#: Statuses a search can return. A superseded memory's window closes where its replacement's
#: begins, so it is found by ``as_of`` inside its window, by ``currently_valid: false`` once the
#: window has ended, and as valid now only until a replacement that starts later takes over.
SEARCHABLE_STATUSES = (Memory.Status.ACTIVE.value, Memory.Status.SUPERSEDED.value)
DEFAULT_LIMIT = 10
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    similarity: float
    keyword_rank: float
    keyword: float
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
            "keyword": round(self.keyword, 6),
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

    def sql(self, now: datetime) -> tuple[str, list[object]]:
        """WHERE fragments (beyond workspace and scope) and their parameters."""
        clauses = ["status = ANY(%s)"]
        params: list[object] = [list(SEARCHABLE_STATUSES)]
        if self.as_of is not None:
            clauses.append("(valid_from IS NULL OR valid_from <= %s)")
            clauses.append("(valid_until IS NULL OR valid_until > %s)")
            params += [self.as_of, self.as_of]
        if self.currently_valid is True:
            clauses.append("(valid_from IS NULL OR valid_from <= %s)")
            clauses.append("(valid_until IS NULL OR valid_until > %s)")
            params += [now, now]
        elif self.currently_valid is False:
            clauses.append("valid_until <= %s")
            params.append(now)
        for column, value in (
            ("category", self.category),
            ("memory_type", self.memory_type),
            ("source", self.source),
        ):
            if value:
                clauses.append(f"{column} = %s")
                params.append(value)
        for dim, minimum in self.min_scores.items():
            clauses.append(f"{dim}_score >= %s")  # NULL (no score) never passes
            params.append(minimum)
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
    if message := rules.search_query(query):
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
    agent: Agent,
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
    """Rank the memories ``agent`` may see for ``query`` (see the module docstring).

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
    rows = _candidates(
        agent=agent,
        query=query,
        vector=query_vector,
        filters=filters,
        now=now,
        exact=exact,
        count=max(settings.MM_SEARCH_CANDIDATES, limit),
    )
    return rank(rows, limit=limit, reference=as_of or now, now=now)


def _candidates(
    *,
    agent: Agent,
    query: str,
    vector: np.ndarray,
    filters: SearchFilters,
    now: datetime,
    exact: bool,
    count: int,
) -> dict[int, tuple[float, float]]:
    """{memory id: (cosine similarity, ts_rank)} for the union of both candidate lists.

    Only vectors of the configured embedder's model are compared with the query's; a memory
    embedded by another model (before a change of ``MM_EMBEDDER``) is found by keyword alone,
    with similarity 0, until it is re-embedded.
    """
    where, params = filters.sql(now)
    scope_ids, words = _scopes_and_words(agent, query)
    ranked, matched = _keyword_lexemes(words, agent.workspace_id)
    base = f"workspace_id = %s AND scope_id = ANY(%s) AND {where}"
    base_params = [agent.workspace_id, scope_ids, *params]
    n = count
    model = current_model_name()
    vec = "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"
    # "+ 0" hides the ORDER BY expression from the planner, forcing an exact scan.
    order = "(embedding <=> %s::vector) + 0" if exact else "embedding <=> %s::vector"
    # One statement: both candidate lists, then both signals for each candidate. The vector
    # list is its own CTE so the planner can use the HNSW index (or, for a small workspace, the
    # btree and an exact sort: it chooses by cost).
    sql = f"""
        WITH {_QUERY_CTES},
        by_vector AS (
            SELECT id FROM memories_memory
            WHERE {base} AND embedding IS NOT NULL AND embedding_model = %s
            ORDER BY {order} LIMIT %s
        ),
        matching AS (
            SELECT m.id, m.search_vector FROM memories_memory m, q
            WHERE q.match_tsq IS NOT NULL AND m.search_vector @@ q.match_tsq AND {base}
            LIMIT %s
        ),
        by_keyword AS (
            SELECT matching.id FROM matching, q
            ORDER BY ts_rank(matching.search_vector, q.tsq) DESC, matching.id LIMIT %s
        ),
        candidates AS (SELECT id FROM by_vector UNION SELECT id FROM by_keyword)
        SELECT m.id,
               CASE WHEN m.embedding_model = %s THEN 1 - (m.embedding <=> %s::vector) END,
               COALESCE(ts_rank(m.search_vector, q.tsq), 0)
        FROM memories_memory m JOIN candidates USING (id), q
    """
    cap = settings.MM_SEARCH_KEYWORD_SCAN_MAX
    params = [
        ranked,
        matched,
        *base_params,
        model,
        vec,
        n,
        *base_params,
        cap,
        n,
        model,
        vec,
    ]
    if n <= settings.MM_HNSW_EF_SEARCH:
        # Every connection starts with hnsw.ef_search and hnsw.iterative_scan set (see
        # ``meaning_memory.db.search_options``): no transaction, no extra round trip.
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return {row[0]: (float(row[1] or 0.0), float(row[2] or 0.0)) for row in cursor}
    with transaction.atomic(), connection.cursor() as cursor:
        # More candidates than the index's search list holds: widen it for this query only.
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(n)])
        cursor.execute(sql, params)
        return {row[0]: (float(row[1] or 0.0), float(row[2] or 0.0)) for row in cursor}


#: ``q.tsq``: the query's words, OR-ed (NULL if none): what keyword rank is computed with.
#: ``q.match_tsq``: the words that select keyword candidates (see ``_keyword_lexemes``).
_QUERY_CTES = """
        q AS (
            SELECT (SELECT string_agg(quote_literal(w), ' | ')::tsquery FROM unnest(%s::text[]) w)
                       AS tsq,
                   (SELECT string_agg(quote_literal(w), ' | ')::tsquery FROM unnest(%s::text[]) w)
                       AS match_tsq
        )"""


def _scopes_and_words(agent: Agent, query: str) -> tuple[list[int], list[str]]:
    """The agent's visible scope ids and the query's words (stemmed, without stop words), in
    one round trip: every search needs both before its statement can be written."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT ARRAY({SHARED_SCOPE_IDS_SQL}), ARRAY(SELECT DISTINCT lexeme "
            f"FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %s)) ORDER BY lexeme)",
            [agent.pk, query],
        )
        shared, words = cursor.fetchone()
    return with_private_scope(agent, shared), words


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
        )
        found = cursor.fetchall()
    return _Statistics(
        read_at=time.monotonic(),
        rows=max([share for kind, _, share in found if kind == "rows"] + [0.0]),
        words=tuple((word, share) for kind, word, share in found if kind == "word"),
        workspaces={int(pk): share for kind, pk, share in found if kind == "workspace"},
    )


def common_words(workspace_id: int) -> dict[str, float]:
    """The words too common to select keyword candidates in a workspace, with the share of all
    memories holding each.

    A word is common when more than ``MM_SEARCH_KEYWORD_SCAN_MAX`` memories of the workspace
    are expected to hold it: (its share of all memories) × (the workspace's share of all
    memories) × (all memories), from PostgreSQL's statistics (the most common elements of the
    ``search_vector`` column, up to 10,000 of them, and the most common values of
    ``workspace_id``). Its matches could not all be ranked, so they would be an arbitrary
    sample, and such a word says little about relevance anyway; it still counts in the keyword
    rank. A workspace too small to be among the most common values has no common words. The
    statistics are read once per ``STATISTICS_TTL_S`` per process, not per search.
    """
    statistics = _statistics.get(connection.alias)
    if statistics is None or time.monotonic() - statistics.read_at > STATISTICS_TTL_S:
        statistics = _statistics[connection.alias] = _read_statistics()
    limit = settings.MM_SEARCH_KEYWORD_SCAN_MAX
    common = statistics.common.get((workspace_id, limit))
    if common is None:
        workspace_rows = statistics.rows * statistics.workspaces.get(workspace_id, 0.0)
        common = {word: share for word, share in statistics.words if share * workspace_rows > limit}
        statistics.common[(workspace_id, limit)] = common
    return common


def forget_statistics() -> None:
    """Read PostgreSQL's statistics again at the next search (after an ANALYZE, in tests)."""
    _statistics.clear()


def keyword_queries(query: str, agent: Agent) -> tuple[str | None, str | None]:
    """The two tsqueries a search for ``query`` by ``agent`` uses: the one keyword rank is
    computed with and the one keyword candidates must match (see ``_keyword_lexemes``)."""
    _, words = _scopes_and_words(agent, query)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH {_QUERY_CTES} SELECT tsq::text, match_tsq::text FROM q",
            _keyword_lexemes(words, agent.workspace_id),
        )
        return cursor.fetchone()


def rank(
    candidates: dict[int, tuple[float, float]], *, limit: int, reference: datetime, now: datetime
) -> list[SearchHit]:
    """Apply relevance, the gate and the formula to the candidates; the one ranking function."""
    if not candidates:
        return []
    weight = settings.MM_SEARCH_KEYWORD_WEIGHT
    best_rank = max(kw for _, kw in candidates.values()) or 1.0
    relevance = {
        pk: (1.0 - weight) * max(sim, 0.0) + weight * (kw / best_rank)
        for pk, (sim, kw) in candidates.items()
    }
    by_relevance = sorted(relevance, key=lambda pk: (-relevance[pk], pk))
    floor = settings.MM_SEARCH_GATE_RATIO * relevance[by_relevance[0]]
    gate_size = max(limit, settings.MM_SEARCH_GATE_K)
    passed = {pk for pk in by_relevance[:gate_size] if relevance[pk] >= floor}
    shown = [pk for pk in by_relevance if pk in passed]
    shown += [pk for pk in by_relevance if pk not in passed][: max(limit - len(shown), 0)]
    memories = _shown_memories(shown)
    half_life = settings.MM_S1_HALF_LIFE_DAYS
    hits = []
    for pk in shown:
        memory = memories[pk]
        similarity, keyword_rank = candidates[pk]
        age_days = max((reference - memory.created_at).total_seconds() / SECONDS_PER_DAY, 0.0)
        age_factor = 0.5 ** (age_days / half_life)
        hits.append(
            SearchHit(
                memory=memory,
                similarity=similarity,
                keyword_rank=keyword_rank,
                keyword=keyword_rank / best_rank,
                relevance=relevance[pk],
                age_days=age_days,
                age_factor=age_factor,
                score=relevance[pk] * memory.significance * age_factor,
                gated=pk in passed,
                eligible=eligibility(memory, now),
            )
        )
    # Memories that passed the gate first, by score; the rest after them, by relevance.
    hits.sort(
        key=lambda h: (
            not h.gated,
            -h.score if h.gated else 0.0,
            -h.relevance,
            -h.memory.created_at.timestamp(),
            h.memory.pk,
        )
    )
    return hits[:limit]


def _shown_memories(ids: list[int]) -> dict[int, Memory]:
    """The memories a search shows, with their scope and replacement, by id.

    One hand-written query: what ``select_related("scope", "superseded_by")`` would fetch, minus
    the vectors, without the ORM's query compilation, which costs more than running the query
    (about a millisecond per search).
    """
    if not ids:
        return {}
    memory_columns = ", ".join(f'm."{column}"' for column in _SHOWN_MEMORY_COLUMNS)
    scope_columns = ", ".join(f's."{column}" AS "scope__{column}"' for column in _SCOPE_COLUMNS)
    sql = f"""
        SELECT {memory_columns}, {scope_columns}, r.mem_id AS replacement_mem_id
        FROM memories_memory m
        JOIN memories_scope s ON s.id = m.scope_id
        LEFT JOIN memories_memory r ON r.id = m.superseded_by_id
        WHERE m.id = ANY(%s)
    """
    memories = {}
    for memory in Memory.objects.raw(sql, [ids]):
        memory.scope = Scope.from_db(
            "default",
            list(_SCOPE_COLUMNS),
            [getattr(memory, f"scope__{column}") for column in _SCOPE_COLUMNS],
        )
        if memory.superseded_by_id is not None:
            memory.superseded_by = Memory.from_db(
                "default", ["id", "mem_id"], [memory.superseded_by_id, memory.replacement_mem_id]
            )
        memories[memory.pk] = memory
    return memories


_SHOWN_MEMORY_COLUMNS = tuple(
    model_field.column
    for model_field in Memory._meta.concrete_fields
    if model_field.name not in {"embedding", "search_vector"}
)
_SCOPE_COLUMNS = tuple(model_field.column for model_field in Scope._meta.concrete_fields)


def eligibility(memory: Memory, now: datetime) -> str:
    """Whether the memory goes into the compiled memory file now: ``yes`` for an active memory
    valid now, ``-`` otherwise. (The compiled file's budget is not applied yet.)"""
    valid_now = (memory.valid_from is None or memory.valid_from <= now) and (
        memory.valid_until is None or now < memory.valid_until
    )
    return "yes" if memory.status == Memory.Status.ACTIVE and valid_now else "-"
