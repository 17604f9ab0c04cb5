# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there).

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from meaning_memory.client.answers.part1 import (
    EntityRef,
    LearnedShare,
    MemoryLink,
    Pieces,
    RelationsWhy,
)
from meaning_memory.client.answers.part2 import CheckStatus, StareOrigins, StareScores, SummaryLine
from meaning_memory.client.answers.part3 import (
    Entity,
    EntityNode,
    GraphShare,
    Memory,
    MemoryNode,
    Provenance,
)
from meaning_memory.client.answers.part4 import CapabilityHistory, SagaMemory, Step, Thread


class CapabilityReport(BaseModel):
    """
    A capability's row of the report: how far it is built, deployed and evidenced.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    dim: str
    """
    * `S` - S
    * `T` - T
    * `A` - A
    * `R` - R
    * `E` - E

    One of: S, T, A, R, E (or a newer value).
    """
    capability: str
    summary: str
    implementation: str
    """
    GA, beta, preview or not built.
    """
    deployment: str
    switch: Annotated[str | None, Field(...)]
    """
    The setting that switches it.
    """
    evidence: str
    """
    * `none` - none
    * `synthetic` - synthetic
    * `gated-eval` - gated-eval

    One of: none, synthetic, gated-eval (or a newer value).
    """
    verdict: str
    """
    * `pass` - pass
    * `fail` - fail
    * `stale` - stale
    * `pending` - pending

    One of: pass, fail, stale, pending (or a newer value).
    """
    checks: list[CheckStatus]


class EntityDetail(BaseModel):
    """
    An entity and a page of the memories that mention it, newest first.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    page: Annotated[int, Field(ge=1)]
    page_size: Annotated[int, Field(ge=1)]
    pages: Annotated[int, Field(ge=0)]
    """
    How many pages in all.
    """
    count: Annotated[int, Field(ge=0)]
    """
    How many items in all.
    """
    entity: Entity
    memories: list[Memory]


class Explanation(BaseModel):
    """
    The figures behind a hit's place (docs/search.md).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    similarity: float
    keyword_rank: float
    episode_similarity: float
    similarity_z: float
    keyword_z: float
    episode_z: float
    fused: float
    neighbour: float
    relevance: float
    significance: Annotated[float, Field(ge=0.0, le=1.0)]
    age_days: float
    age_factor: float
    a_score: Annotated[float | None, Field(ge=0.0, le=1.0)]
    asymmetry_factor: float | None = None
    """
    With MM_ASYMMETRY_RANKING.
    """
    score: float
    passed_gate: bool
    relations: RelationsWhy | None = None
    graph: GraphShare | None = None
    learned: LearnedShare | None = None
    pieces: Pieces


class History(BaseModel):
    """
    Each capability's evidence over time.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    capabilities: list[CapabilityHistory]


class MemoryDetail(BaseModel):
    """
    A memory with its entities, its links (both ways) and its history, as the reader may see them.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    mem_id: str
    text: str
    category: str
    """
    * `fact` - Fact
    * `decision` - Decision
    * `preference` - Preference
    * `commitment` - Commitment
    * `event` - Event
    * `procedure` - Procedure
    * `observation` - Observation

    One of: fact, decision, preference, commitment, event, procedure, observation (or a newer value).
    """
    memory_type: str
    """
    * `semantic` - Semantic
    * `episodic` - Episodic
    * `procedural` - Procedural
    * `working` - Working

    One of: semantic, episodic, procedural, working (or a newer value).
    """
    source: str
    """
    Who wrote it (blank: not said).
    """
    significance: Annotated[float, Field(ge=0.0, le=1.0)]
    pinned: bool
    status: str
    """
    * `active` - Active
    * `superseded` - Superseded
    * `merged` - Merged
    * `forgotten` - Forgotten

    One of: active, superseded, merged, forgotten (or a newer value).
    """
    session: str
    thread: str
    perspective: str
    """
    self, user, team, external or custom:<name>.
    """
    source_kind: Annotated[str | Any | None, Field(...)]
    """
    Null when not known.

    * `observed` - observed
    * `stated` - stated
    * `tool` - tool
    * `inferred` - inferred
    * `hearsay` - hearsay
    """
    sig_self: Annotated[float | None, Field(ge=0.0, le=1.0)]
    sig_external: Annotated[float | None, Field(ge=0.0, le=1.0)]
    attribution: dict[str, Any]
    """
    Where perspective, attributed_to and source_kind came from (the writer, the scope, a cue in the text and its words): free-form.
    """
    embedding_model: str
    metadata: dict[str, Any]
    """
    The writer's own, free-form.
    """
    created_at: AwareDatetime
    observed_at: Annotated[AwareDatetime | None, Field(...)]
    valid_from: Annotated[AwareDatetime | None, Field(...)]
    valid_until: Annotated[AwareDatetime | None, Field(...)]
    scope: str
    superseded_by: Annotated[str | None, Field(...)]
    """
    The mem_id that replaced it.
    """
    stare_scores: StareScores
    stare_origins: StareOrigins
    attributed_to: Annotated[EntityRef | None, Field(...)]
    """
    Who made its claim.
    """
    entities: list[Entity]
    links: list[MemoryLink]
    provenance: list[Provenance]
    enrichment: str
    """
    Whether its entities, links, claimant and A score are stored (done), still to come from the enricher (pending: a moment after the write), or given up on after every try (failed: a curator retries it).

    * `done` - done
    * `pending` - pending
    * `failed` - failed
    """


class Path(BaseModel):
    """
    The shortest path between two nodes, when one is within reach.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    from_: Annotated[MemoryNode | EntityNode, Field(alias="from", discriminator="kind")]
    to: Annotated[MemoryNode | EntityNode, Field(discriminator="kind")]
    found: bool
    length: Annotated[int | None, Field(ge=0)]
    """
    Null when none was found.
    """
    path: list[Step]


class Reached(BaseModel):
    """
    A node a walk reached, by its shortest path.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    node: Annotated[MemoryNode | EntityNode, Field(discriminator="kind")]
    depth: Annotated[int, Field(ge=0)]
    path: list[Step]


class Readiness(BaseModel):
    """
    The STARE readiness report: each capability's row, and the report as a table.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    capabilities: list[CapabilityReport]
    table: str
    """
    The report as a markdown table.
    """


class Saga(BaseModel):
    """
    A saga: its threads, their memories in time order, and a summary.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    threads: list[Thread]
    memories: list[SagaMemory]
    summary: list[SummaryLine]
