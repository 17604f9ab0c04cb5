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

With ``expand: "graph"`` (opt-in), the candidates' relevance takes a share of a walk over the
links among them before the gate of step 3 and the score of step 4 (``memories.search.graph``).
With ``MM_SEARCH_LEARNED`` (opt-in), relevance is a logistic model's score over the candidates'
signals instead (``memories.search.learned``), before the gate and the score.
"""

from memories.search.filters import SEARCHABLE_STATUSES, SearchFilters
from memories.search.hydration import SearchHit
from memories.search.ranking import READINESS, search
from memories.search.statistics import STATISTICS_TTL_S, common_words, forget_statistics
from memories.search.words import keyword_queries

__all__ = [
    "READINESS",
    "SEARCHABLE_STATUSES",
    "STATISTICS_TTL_S",
    "SearchFilters",
    "SearchHit",
    "common_words",
    "forget_statistics",
    "keyword_queries",
    "search",
]
