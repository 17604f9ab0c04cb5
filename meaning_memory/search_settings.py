"""The settings of memories and search, read by ``meaning_memory.settings`` (which takes every
name here): each from the environment, documented in docs/configuration.md."""

from __future__ import annotations

from meaning_memory.env import envbool, envfloat, envint, envlist

MM_MAX_TEXT_CHARS = envint("MM_MAX_TEXT_CHARS", 10_000, minimum=1)
MM_S1_HALF_LIFE_DAYS = envfloat("MM_S1_HALF_LIFE_DAYS", 90.0, minimum=0, exclusive_minimum=True)
MM_SEARCH_CANDIDATES = envint("MM_SEARCH_CANDIDATES", 50, minimum=1, maximum=1000)
MM_SEARCH_GATE_K = envint("MM_SEARCH_GATE_K", 20, minimum=1)
MM_SEARCH_GATE_RATIO = envfloat("MM_SEARCH_GATE_RATIO", 0.8, minimum=0, maximum=1)
MM_SEARCH_KEYWORD_WEIGHT = envfloat("MM_SEARCH_KEYWORD_WEIGHT", 0.6, minimum=0, maximum=1)
#: The longest query a search takes, and the most distinct words it reads (each word is a term
#: of the keyword match; the embedder reads the first 256 tokens, about 1,000 characters):
#: beyond either, a 400 that names the limit.
MM_SEARCH_MAX_QUERY_CHARS = envint("MM_SEARCH_MAX_QUERY_CHARS", 2_000, minimum=1)
MM_SEARCH_MAX_WORDS = envint("MM_SEARCH_MAX_WORDS", 200, minimum=1)
MM_SEARCH_MAX_LIMIT = envint("MM_SEARCH_MAX_LIMIT", 100, minimum=1, maximum=1000)
MM_SEARCH_KEYWORD_SCAN_MAX = envint("MM_SEARCH_KEYWORD_SCAN_MAX", 500, minimum=1)
MM_EPISODE_WINDOW = envint("MM_EPISODE_WINDOW", 2, minimum=0, maximum=20)
MM_SEARCH_EPISODE_WEIGHT = envfloat("MM_SEARCH_EPISODE_WEIGHT", 0.7, minimum=0, maximum=1)
MM_SEARCH_EPISODE_VECTOR_WEIGHT = envfloat(
    "MM_SEARCH_EPISODE_VECTOR_WEIGHT", 0.25, minimum=0, maximum=1
)
MM_SEARCH_NEIGHBOUR_WEIGHT = envfloat("MM_SEARCH_NEIGHBOUR_WEIGHT", 0.3, minimum=0, maximum=1)
MM_SEARCH_LEARNED = envbool("MM_SEARCH_LEARNED", True)  # memories.search.learned
#: The recipe's cross-session pieces (memories.search.recipe): how many of the strongest of each
#: candidate list bring the turns next to them in their session as candidates (0: none), and
#: at most how many of one session's memories come before the rest (0: no cap).
MM_SEARCH_TIME_NEIGHBOURS = envint("MM_SEARCH_TIME_NEIGHBOURS", 0, minimum=0, maximum=100)
MM_SEARCH_SESSION_CAP = envint("MM_SEARCH_SESSION_CAP", 0, minimum=0, maximum=1000)
MM_WORKSPACE_INDEX_MIN_ROWS = envint("MM_WORKSPACE_INDEX_MIN_ROWS", 5_000, minimum=1)
# Metadata keys whose common values get a vector index of their own (memories.value_indexes).
MM_METADATA_INDEX_KEYS = envlist("MM_METADATA_INDEX_KEYS", [])
MM_HNSW_EF_SEARCH = envint("MM_HNSW_EF_SEARCH", 100, minimum=1, maximum=1000)
MM_SEARCH_PREPARED = envbool("MM_SEARCH_PREPARED", True)
MM_SEARCH_PREPARED_MAX = envint("MM_SEARCH_PREPARED_MAX", 200, minimum=1)

#: A write acknowledged before it is understood (``memories.services.enrichment``): its entities,
#: links, claimant and A score are made by the enricher (``meaning-memory enrich --follow``,
#: which ``serve`` runs and turns this on for its web processes) a moment later. Off: in the
#: write's own transaction, before it is answered.
MM_ENRICH_LATER = envbool("MM_ENRICH_LATER", False)
#: How many pending memories the enricher takes at once, how many tries one gets before it is
#: left ``failed`` for a curator, and how much lower its CPU priority is than the web's.
MM_ENRICH_BATCH = envint("MM_ENRICH_BATCH", 64, minimum=1, maximum=1000)
MM_ENRICH_ATTEMPTS = envint("MM_ENRICH_ATTEMPTS", 5, minimum=1, maximum=100)
MM_ENRICH_NICE = envint("MM_ENRICH_NICE", 5, minimum=0, maximum=19)
