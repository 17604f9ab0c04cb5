"""Every success answer of the REST API, declared once for its OpenAPI schema: one shape per
presenter (``memories.presenters``), reused wherever that presenter answers. Consolidation's
and readiness's answers are declared in their apps (``consolidation.answers``,
``readiness.answers``), on the same ``Answer``."""

from memories.api.answers.memories import (
    Answer,
    BulkAnswer,
    CompiledAnswer,
    EntityAnswer,
    ErasureAnswer,
    MemoryAnswer,
    MemoryDetailAnswer,
    MemoryPageAnswer,
    SearchAnswer,
    StoredLinkAnswer,
)
from memories.api.answers.relations import (
    DivergenceAnswer,
    DivergencePageAnswer,
    EntityDetailAnswer,
    EntityPageAnswer,
    PathAnswer,
    SourceDetailAnswer,
    SourcePageAnswer,
    TraversalAnswer,
)

__all__ = [
    "Answer",
    "BulkAnswer",
    "CompiledAnswer",
    "DivergenceAnswer",
    "DivergencePageAnswer",
    "EntityAnswer",
    "EntityDetailAnswer",
    "EntityPageAnswer",
    "ErasureAnswer",
    "MemoryAnswer",
    "MemoryDetailAnswer",
    "MemoryPageAnswer",
    "PathAnswer",
    "SearchAnswer",
    "SourceDetailAnswer",
    "SourcePageAnswer",
    "StoredLinkAnswer",
    "TraversalAnswer",
]
