"""What every model shares: the vectors' dimension and index parameters, full-text weights,
the STARE dimensions, public ids."""

from __future__ import annotations

import secrets

#: Dimension of the stored vectors (all-MiniLM-L6-v2; a remote embedder is asked for the same).
EMBEDDING_DIMENSIONS = 384


#: Text search configuration of the full-text index and of queries against it.
TEXT_SEARCH_CONFIG = "english"


#: Full-text weight labels: a memory's own words, and the words of its episode (``episode_text``).
OWN_WEIGHT = "A"


EPISODE_WEIGHT = "B"


DEFAULT_SIGNIFICANCE = 0.80


STARE_DIMENSIONS = ("s", "t", "a", "r", "e")


#: HNSW graph parameters of every vector index (the table's and each large workspace's own).
#: ef_construction 128 rather than pgvector's default 64: a better graph lets searches use a
#: short search list (``MM_HNSW_EF_SEARCH`` 100) and still find what an exact scan finds, for a
#: slower build. Measured in docs/benchmarks-history.md (search latency, "The HNSW graph").
HNSW_M = 16


HNSW_EF_CONSTRUCTION = 128
#: A partial vector index's method and parameters, as the global one's (``memories.indexing``,
#: ``memories.value_indexes``): ``CREATE INDEX … ON memories_memory {PARTIAL_HNSW} WHERE …``.
PARTIAL_HNSW = (
    "USING hnsw (embedding vector_cosine_ops) "
    f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
)


def new_mem_id() -> str:
    return secrets.token_hex(8)


def new_public_id() -> str:
    """The public id of an entity or a link: 16 hex characters, like a ``mem_id``."""
    return secrets.token_hex(8)
