# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there).

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from meaning_memory.client.answers.part1 import EntityRef, ListedEntity, Measured
from meaning_memory.client.answers.part2 import StareOrigins, StareScores, Via


class Entity(BaseModel):
    """
    An entity, with when and how the reader first knew of it.
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


class EntityNode(BaseModel):
    """
    An entity a walk reached or passed through.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    kind: Literal["entity"]
    """
    * `entity` - entity

    One of: entity (or a newer value).
    """
    entity_id: str
    name: str
    type: str


class EntityPage(BaseModel):
    """
    A page of the entities the reader may know of, most mentioned first.
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
    results: list[ListedEntity]


class GraphShare(BaseModel):
    """
    With `expand: "graph"`: the graph's share of the hit's relevance.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    activation: float
    contribution: float
    relevance_before: float
    seed: bool
    via: list[Via]


class Memory(BaseModel):
    """
    A memory: what its writer gave, its times, scope, replacement and STARE scores.
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


class MemoryNode(BaseModel):
    """
    A memory a walk reached or passed through.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    kind: Literal["memory"]
    """
    * `memory` - memory

    One of: memory (or a newer value).
    """
    mem_id: str
    text: str


class MemoryPage(BaseModel):
    """
    A page of memories, with the links to the pages before and after it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    next: Annotated[str | None, Field(...)]
    """
    The next page, null at the end.
    """
    previous: Annotated[str | None, Field(...)]
    """
    Null on the first page.
    """
    results: list[Memory]


class Point(BaseModel):
    """
    A capability after one run that measured it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    run: Annotated[int | None, Field(...)]
    """
    Null: a row outside a run.
    """
    recorded_at: AwareDatetime
    engine_version: str
    code_version: str
    config_version: str
    verdict: str
    """
    * `pass` - pass
    * `fail` - fail
    * `stale` - stale
    * `pending` - pending

    One of: pass, fail, stale, pending (or a newer value).
    """
    evidence: str
    """
    * `none` - none
    * `synthetic` - synthetic
    * `gated-eval` - gated-eval

    One of: none, synthetic, gated-eval (or a newer value).
    """
    changed: bool
    previous_verdict: Annotated[str | Any | None, Field(...)]
    checks: dict[str, Measured]
    """
    By check id.
    """


class Provenance(BaseModel):
    """
    One event of a memory's history: what changed, who did it, when and why.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    action: str
    """
    * `remember` - Remember
    * `important` - Important
    * `demote` - Demote
    * `pin` - Pin
    * `unpin` - Unpin
    * `supersede` - Supersede
    * `merge` - Merge
    * `forget` - Forget
    * `restore` - Restore
    * `rescore` - Rescore
    * `revoke` - Revoke
    * `link` - Link
    * `unlink` - Unlink
    * `unmerge` - Unmerge
    * `diverge` - Diverge
    * `resolve` - Resolve
    * `dismiss` - Dismiss
    * `erase` - Erase
    * `retype` - Retype
    * `split` - Split

    One of: remember, important, demote, pin, unpin, supersede, merge, forget, restore, rescore, revoke, link, unlink, unmerge, diverge, resolve, dismiss, erase, retype, split (or a newer value).
    """
    actor: str
    """
    agent:<name>, user:<name> or system.
    """
    old: dict[str, Any]
    """
    The values before, free-form.
    """
    new: dict[str, Any]
    """
    The values after, free-form.
    """
    reason: str
    at: AwareDatetime
