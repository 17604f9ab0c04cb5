"""The engine's own measurements for ``/metrics`` (``meaning_memory.metrics`` serves them, in
Prometheus's text format): how long searches and embeddings take, and MCP tool calls. The
objects are made once per process; with several processes (``serve --web-workers``, the
worker) prometheus_client's multiprocess mode adds them up (``PROMETHEUS_MULTIPROC_DIR``,
which ``serve`` sets)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

#: Seconds: a search is tens of milliseconds; an embedding batch of a bulk write, seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

SEARCH_SECONDS = Histogram(
    "mm_search_seconds",
    "Searches: from the validated arguments to the ranked hits (embedding the query included).",
    buckets=LATENCY_BUCKETS,
)
EMBED_SECONDS = Histogram(
    "mm_embed_seconds",
    "Calls to the embedder: one per batch of texts (a search's query is a batch of one).",
    ["embedder"],
    buckets=LATENCY_BUCKETS,
)
EMBEDDED_TEXTS = Counter("mm_embedded_texts", "Texts embedded.", ["embedder"])
ENRICH_LAG_SECONDS = Histogram(
    "mm_enrich_lag_seconds",
    "From a write with MM_ENRICH_LATER to its enrichment: its entities, links and A score.",
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
)
ENRICHED = Counter(
    "mm_enriched",
    "Memories the enricher took, by outcome (enriched, failed for good).",
    ["outcome"],
)
EMBED_SHARED_TEXTS = Histogram(
    "mm_embed_shared_texts",
    "Texts per run of the local model for queries and single writes (requests that waited "
    "for the model share a run).",
    buckets=(1, 2, 3, 4, 6, 8, 12, 16),
)
EMBED_WAIT_SECONDS = Histogram(
    "mm_embed_wait_seconds",
    "How long a query's or a single write's texts waited for a place at the local model.",
    buckets=LATENCY_BUCKETS,
)
QUERY_VECTORS = Counter(
    "mm_query_vectors",
    "Search queries' vectors, by whether the process kept one for the same query or embedded it.",
    ["outcome"],
)
MCP_TOOL_CALLS = Counter(
    "mm_mcp_tool_calls", "MCP tool calls, by tool and outcome (ok or error).", ["tool", "outcome"]
)
READS = Counter(
    "mm_reads",
    "Reads that may go to the replica (search, compile, list), by the database that answered "
    "and why: caught_up (replica), own_writes, behind, unavailable, failed (primary).",
    ["database", "reason"],
)
REPLICA_LAG = Gauge(
    "mm_replica_lag_seconds",
    "How far the replica's horizon was behind the primary's clock at the last probe.",
    multiprocess_mode="mostrecent",
)
