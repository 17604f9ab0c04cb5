# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there).

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


class CompiledEntry(BaseModel):
    """
    A memory the compiled file included (with its tokens) or cut (with the reason).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    mem_id: str
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
    significance: Annotated[float, Field(ge=0.0, le=1.0)]
    weight: float
    protected: bool
    tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Of its line, for an included memory.
    """
    reason: str | None = None
    """
    Why it was cut.
    """


class DivergingMemory(BaseModel):
    """
    One of the two memories that disagree.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    mem_id: str
    text: str
    source: str
    scope: str
    created_at: AwareDatetime


class EntityRef(BaseModel):
    """
    An entity named where something points at it: a claim's author, a link's end, a search filter it let through.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    entity_id: str
    name: str
    type: str
    """
    person, customer, custom:<name>…
    """


class Erasure(BaseModel):
    """
    What an erasure removed (never what it said).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    erased: list[str]
    """
    The mem_ids.
    """
    count: Annotated[int, Field(ge=0)]
    by: str
    episodes_rewritten: Annotated[int, Field(ge=0)]
    entities_removed: Annotated[int, Field(ge=0)]
    dry_run: bool


class LearnedShare(BaseModel):
    """
    With `MM_SEARCH_LEARNED`: the model's score and each feature's share.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    model: str
    score: float
    relevance_before: float
    features: dict[str, float]


class LinkedMemory(BaseModel):
    """
    A memory at the other end of a link.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    mem_id: str
    text: str


class ListedEntity(BaseModel):
    """
    An entity in the entities list: with how many memories the reader sees mention it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    entity_id: str
    name: str
    type: str
    """
    person, customer, custom:<name>…
    """
    aliases: list[str]
    declared: bool
    """
    In the workspace's gazetteer.
    """
    origin: str
    """
    How the reader first knew of it.

    * `writer` - Writer
    * `gazetteer` - Gazetteer
    * `extraction` - Extraction
    * `member` - Member
    """
    merged_into: Annotated[str | None, Field(...)]
    """
    The entity_id it was merged into, null when not merged.
    """
    created_at: Annotated[AwareDatetime | None, Field(...)]
    """
    When the reader could first know of it (null: not yet).
    """
    mentions: Annotated[int, Field(ge=0)]


class Measured(BaseModel):
    """
    One check's row of one run.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    value: Annotated[float | None, Field(...)]
    threshold: float
    passed: bool
    dataset: str
    dataset_sha256: str
    dataset_bytes: Annotated[int | None, Field(...)]


class MemoryLink(BaseModel):
    """
    One of a memory's links, with the memory or the entity at its other end, who or what made it and why.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    link_id: Annotated[str | None, Field(...)]
    """
    Null for the engine's own (supersedes, follows).
    """
    type: str
    """
    mentions, supports, custom:<name>…
    """
    direction: str
    """
    * `out` - out
    * `in` - in

    One of: out, in (or a newer value).
    """
    memory: LinkedMemory | None = None
    """
    The other end, when a memory.
    """
    entity: EntityRef | None = None
    """
    The other end, when an entity.
    """
    weight: Annotated[float, Field(ge=0.0, le=1.0)]
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
    evidence: dict[str, Any]
    """
    Why it exists (a rule or model, a span, a score): free-form.
    """
    created_at: Annotated[AwareDatetime | None, Field(...)]


class Pieces(BaseModel):
    """
    The pieces of the search's recipe that placed the hit (`memories.search.recipe`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    found_by: list[str]
    """
    The candidate sources that found it.
    """
    placed_by: list[str]
    """
    The pieces that placed it, in the order they ran.
    """
    capped: bool | None = None
    """
    Moved after the others by the session cap.
    """


class RelatedLink(BaseModel):
    """
    A link between a hit and the memory named by related_to.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    type: str
    direction: str
    """
    * `out` - out
    * `in` - in

    One of: out, in (or a newer value).
    """


class RelatedTo(BaseModel):
    """
    The hit's links to the memory named by related_to.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    mem_id: str
    links: list[RelatedLink]


class RelationsWhy(BaseModel):
    """
    What let a hit through the filters that read links (each there when its filter was).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    related_to: RelatedTo | None = None
    entity: list[EntityRef] | None = None
    attributed_to: list[EntityRef] | None = None
    connections: Annotated[int | None, Field(ge=0)] = None
    min_r: Annotated[int | None, Field(ge=0)] = None


class Source(BaseModel):
    """
    A source's (or a topic's) record: its memories the reader sees, how many were found right and wrong, and its estimate.
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
