"""REST API for agents: thin adapters over memories.services and memories.search."""

from memories.api import schema  # noqa: F401 (the schema's extensions register on import)
from memories.api.views.batches import EraseChosenApi, MessagesApi
from memories.api.views.memories import (
    BulkRememberInput,
    MemoryBulkApi,
    MemoryCreateApi,
    MemoryCursor,
    MemoryDetailApi,
    MemoryEraseApi,
    MemoryFeedbackApi,
    MemoryForgetApi,
    MemoryLinkRemoveApi,
    MemoryLinksApi,
)
from memories.api.views.reading import CompiledFileApi, ExplainPathApi, SearchApi, TraverseApi
from memories.api.views.relations import (
    DivergenceDetailApi,
    DivergencesApi,
    EntitiesApi,
    EntityDetailApi,
    SourceDetailApi,
    SourcesApi,
)

__all__ = [
    "BulkRememberInput",
    "CompiledFileApi",
    "DivergenceDetailApi",
    "DivergencesApi",
    "EntitiesApi",
    "EntityDetailApi",
    "EraseChosenApi",
    "ExplainPathApi",
    "MemoryBulkApi",
    "MemoryCreateApi",
    "MemoryCursor",
    "MemoryDetailApi",
    "MemoryEraseApi",
    "MemoryFeedbackApi",
    "MemoryForgetApi",
    "MemoryLinkRemoveApi",
    "MemoryLinksApi",
    "MessagesApi",
    "SearchApi",
    "SourceDetailApi",
    "SourcesApi",
    "TraverseApi",
]
