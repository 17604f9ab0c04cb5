"""The engine's data, one module an aggregate; every name is importable from here."""

from memories.models.base import (
    DEFAULT_SIGNIFICANCE,
    EMBEDDING_DIMENSIONS,
    EPISODE_WEIGHT,
    HNSW_EF_CONSTRUCTION,
    HNSW_M,
    OWN_WEIGHT,
    PARTIAL_HNSW,
    STARE_DIMENSIONS,
    TEXT_SEARCH_CONFIG,
    new_mem_id,
    new_public_id,
)
from memories.models.divergence import Divergence, DivergenceScan
from memories.models.enrichment import MemoryEnrichment
from memories.models.history import ProvenanceEvent
from memories.models.memory import PLAIN_FIELDS, TIME_FIELDS, Memory
from memories.models.relations import TYPE_RANK, Entity, Link, MemoryDegree
from memories.models.sources import SourceRecord
from memories.models.tenancy import (
    CURATING_ROLES,
    Agent,
    LoginThrottle,
    Membership,
    Scope,
    Workspace,
)
from memories.models.threads import Thread, ThreadMember

__all__ = [
    "TYPE_RANK",
    "Agent",
    "CURATING_ROLES",
    "DEFAULT_SIGNIFICANCE",
    "Divergence",
    "DivergenceScan",
    "EMBEDDING_DIMENSIONS",
    "EPISODE_WEIGHT",
    "Entity",
    "HNSW_EF_CONSTRUCTION",
    "HNSW_M",
    "PARTIAL_HNSW",
    "Link",
    "LoginThrottle",
    "Membership",
    "Memory",
    "PLAIN_FIELDS",
    "TIME_FIELDS",
    "MemoryDegree",
    "MemoryEnrichment",
    "OWN_WEIGHT",
    "ProvenanceEvent",
    "STARE_DIMENSIONS",
    "Scope",
    "SourceRecord",
    "TEXT_SEARCH_CONFIG",
    "Thread",
    "ThreadMember",
    "Workspace",
    "new_mem_id",
    "new_public_id",
]
