# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there).

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from meaning_memory.client.answers.part1 import EntityRef, Source
from meaning_memory.client.answers.part2 import (
    BulkItem,
    Check,
    SourceEvent,
    StareOrigins,
    StareScores,
)
from meaning_memory.client.answers.part3 import EntityNode, MemoryNode, Point


class Run(BaseModel):
    """
    A consolidation run: its state, each phase's counts and seconds.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    run_id: str
    status: str
    """
    * `queued` - Queued
    * `running` - Running
    * `done` - Done
    * `failed` - Failed

    One of: queued, running, done, failed (or a newer value).
    """
    trigger: str
    """
    * `schedule` - Schedule
    * `command` - Command
    * `api` - Api
    * `bulk` - Bulk

    One of: schedule, command, api, bulk (or a newer value).
    """
    phases: list[str]
    """
    In run order.
    """
    dry_run: bool
    counts: dict[str, dict[str, float]]
    """
    By phase that ran: what it did (or would do), each count by name.
    """
    timings: dict[str, float]
    """
    By phase: its seconds.
    """
    error: str
    """
    Why it failed (blank unless it did).
    """
    created_at: AwareDatetime
    started_at: Annotated[AwareDatetime | None, Field(...)]
    finished_at: Annotated[AwareDatetime | None, Field(...)]


class SagaMemory(BaseModel):
    """
    A memory of a saga: its thread, and whether the query found it.
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
    thread_id: Annotated[str | None, Field(...)]
    hit: bool


class SourceDetail(BaseModel):
    """
    A source's record with its records on topics (most judged first) and the events behind it (newest first).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    kind: str
    """
    * `writer` - writer
    * `entity` - entity
    * `topic` - topic

    One of: writer, entity, topic (or a newer value).
    """
    key: str
    """
    The writer's name, or the entity's entity_id.
    """
    name: str
    memories: Annotated[int, Field(ge=0)]
    right: Annotated[int, Field(ge=0)]
    wrong: Annotated[int, Field(ge=0)]
    estimate: Annotated[float, Field(ge=0.0, le=1.0)]
    """
    Shrunk toward the workspace's prior.
    """
    topics: list[Source]
    events: list[SourceEvent]


class Step(BaseModel):
    """
    One link of a path, from one node to the next: who or what made it, why and when.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    from_: Annotated[MemoryNode | EntityNode, Field(alias="from", discriminator="kind")]
    to: Annotated[MemoryNode | EntityNode, Field(discriminator="kind")]
    type: str
    direction: str
    """
    * `out` - out
    * `in` - in

    One of: out, in (or a newer value).
    """
    link_id: Annotated[str | None, Field(...)]
    """
    Null for the engine's own (supersedes, follows).
    """
    origin: str
    """
    * `writer` - writer
    * `extraction` - extraction
    * `gazetteer` - gazetteer
    * `consolidation` - consolidation
    * `member` - member
    * `divergence` - divergence
    * `engine` - engine

    One of: writer, extraction, gazetteer, consolidation, member, divergence, engine (or a newer value).
    """
    made_by: str
    """
    agent:<name>, user:<name>, a model, or engine.
    """
    weight: Annotated[float, Field(ge=0.0, le=1.0)]
    evidence: dict[str, Any]
    """
    Why the link exists: free-form.
    """
    created_at: Annotated[AwareDatetime | None, Field(...)]


class StoredLink(BaseModel):
    """
    A link as stored: from a memory to another memory or to an entity.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    link_id: str
    type: str
    from_: Annotated[str, Field(alias="from")]
    to: Annotated[str | None, Field(...)]
    """
    The memory it points to, or null.
    """
    entity: Annotated[str | None, Field(...)]
    """
    The entity it points to, or null.
    """
    weight: Annotated[float, Field(ge=0.0, le=1.0)]
    origin: str
    """
    * `writer` - Writer
    * `extraction` - Extraction
    * `gazetteer` - Gazetteer
    * `consolidation` - Consolidation
    * `member` - Member
    * `divergence` - Divergence

    One of: writer, extraction, gazetteer, consolidation, member, divergence (or a newer value).
    """
    evidence: dict[str, Any]
    """
    Why it exists: free-form.
    """
    created_at: AwareDatetime
    removed_at: Annotated[AwareDatetime | None, Field(...)]


class Thread(BaseModel):
    """
    A thread: related memories across sessions, and whether it is still open.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    thread_id: str
    title: str
    status: str
    """
    * `open` - Open
    * `resolved` - Resolved

    One of: open, resolved (or a newer value).
    """
    label: str
    size: Annotated[int, Field(ge=0)]
    sessions: Annotated[int, Field(ge=0)]
    first_seen: AwareDatetime
    last_seen: AwareDatetime
    cues: list[dict[str, Any]]
    """
    What keeps it open: each a member's cue (mem_id, cue, words), free-form.
    """


class Bulk(BaseModel):
    """
    A bulk write: how many memories were stored, how many were there already, and each.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    stored: Annotated[int, Field(ge=0)]
    existing: Annotated[int, Field(ge=0)]
    results: list[BulkItem]


class CapabilityHistory(BaseModel):
    """
    A capability's checks and its verdict after each run that measured it.
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
    key: str
    checks: list[Check]
    runs: list[Point]
    """
    Oldest first.
    """
