"""What many capabilities depend on: the search's settings, and the modules of the checks,
the search and the writes (their hash is part of each capability's code version)."""

from __future__ import annotations

SEARCH_SETTINGS = (
    "MM_SEARCH_KEYWORD_WEIGHT",
    "MM_SEARCH_GATE_RATIO",
    "MM_SEARCH_GATE_K",
    "MM_SEARCH_CANDIDATES",
    "MM_SEARCH_EPISODE_WEIGHT",
    "MM_SEARCH_EPISODE_VECTOR_WEIGHT",
    "MM_SEARCH_NEIGHBOUR_WEIGHT",
    "MM_EPISODE_WINDOW",
    "MM_EMBEDDER",
    "MM_EMBEDDER_MODEL",
    "MM_EMBEDDER_URL",
    "MM_HNSW_EF_SEARCH",
    "MM_SEARCH_KEYWORD_SCAN_MAX",
    "MM_SEARCH_LEARNED",
    "MM_SEARCH_TIME_NEIGHBOURS",
    "MM_SEARCH_SESSION_CAP",
)
#: What every check depends on besides a capability's own modules: how checks measure, and
#: the embedder.
CHECK_MODULES = (
    "readiness/checks/__init__.py",
    "readiness/checks/sandbox.py",
    "readiness/checks/synthetic.py",
    "readiness/checks/stories.py",
    "readiness/checks/gated.py",
    "readiness/checks/conversations.py",
    "readiness/checks/runner.py",
    "readiness/locomo.py",
    "readiness/metrics.py",
    "memories/embeddings.py",
)
#: The search: its filters, the ranking statement, its words and statistics, its hits, the
#: indexes of metadata values it reads.
SEARCH_MODULES = (
    "memories/search/filters.py",
    "memories/search/metadata.py",
    "memories/search/ranking.py",
    "memories/search/recipe.py",
    "memories/search/statement.py",
    "memories/search/sessions.py",
    "memories/search/gate.py",
    "memories/search/words.py",
    "memories/search/statistics.py",
    "memories/search/hydration.py",
    "memories/value_indexes.py",
    "memories/temporal/validity.py",
    "memories/commands.py",
    "memories/operations.py",
    "memories/selectors/reader.py",
)
#: The writes that store what search and compile read.
WRITE_MODULES = (
    "memories/services/placing.py",
    "memories/services/storing.py",
    "memories/services/enrichment.py",
    "memories/services/derived.py",
    "memories/services/consolidated.py",
    "memories/services/remember.py",
    "memories/services/bulk.py",
    "memories/services/episodes.py",
    "memories/services/supersede.py",
    "memories/services/feedback.py",
    "memories/commands.py",
    "memories/operations.py",
)
#: Relations: the writes of entities and links, and their reads.
RELATION_WRITE_MODULES = tuple(
    f"memories/services/relations/{name}.py"
    for name in (
        "__init__",
        "given",
        "recognition",
        "resolution",
        "storing",
        "links",
        "declaring",
        "backfill",
        "typing",
        "namesakes",
    )
)
RELATION_READ_MODULES = tuple(
    f"memories/selectors/relations/{name}.py"
    for name in ("__init__", "links", "entities", "connections")
)
