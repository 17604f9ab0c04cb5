# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there).

from __future__ import annotations

from typing import Annotated, Any, Literal

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


class SourceEvent(BaseModel):
    """
    An event behind a source's record.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    mem_id: str
    text: str
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
    effect: str
    """
    * `right` - right
    * `wrong` - wrong
    * `none` - none

    One of: right, wrong, none (or a newer value).
    """
    actor: str
    reason: str
    at: AwareDatetime


class SourcePage(BaseModel):
    """
    A page of sources, most judged first, with the workspace's prior.
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
    prior: Annotated[float, Field(ge=0.0, le=1.0)]
    """
    The workspace's prior estimate.
    """
    prior_strength: float
    results: list[Source]


class StareOrigins(BaseModel):
    """
    Where each STARE score came from, null where there is no score.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    s: Annotated[str | Any | None, Field(...)]
    t: Annotated[str | Any | None, Field(...)]
    a: Annotated[str | Any | None, Field(...)]
    r: Annotated[str | Any | None, Field(...)]
    e: Annotated[str | Any | None, Field(...)]


class StareScores(BaseModel):
    """
    A memory's STARE scores, each from 0 to 1, null where none was given or computed.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    s: Annotated[float | None, Field(ge=0.0, le=1.0)]
    t: Annotated[float | None, Field(ge=0.0, le=1.0)]
    a: Annotated[float | None, Field(ge=0.0, le=1.0)]
    r: Annotated[float | None, Field(ge=0.0, le=1.0)]
    e: Annotated[float | None, Field(ge=0.0, le=1.0)]


class SummaryLine(BaseModel):
    """
    A sentence of a saga's summary, with the memory it comes from.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    mem_id: str
    sentence: str


class Via(BaseModel):
    """
    What joins a hit to a seed of the graph: an entity both mention (entity_id, name) or a link between them (mem_id, link_type).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    entity_id: str | None = None
    name: str | None = None
    mem_id: str | None = None
    link_type: str | None = None


class BulkItem(BaseModel):
    """
    What a bulk write did with one item: stored it, or found it stored already.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    index: Annotated[int, Field(ge=0)]
    """
    Its place in the request.
    """
    status: str
    """
    * `stored` - stored
    * `existing` - existing

    One of: stored, existing (or a newer value).
    """
    mem_id: str
    stare_scores: StareScores
    stare_origins: StareOrigins


class Check(BaseModel):
    """
    A check as the registry declares it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    id: str
    kind: str
    """
    * `synthetic` - Synthetic (data the project made)
    * `gated-eval` - Gated evaluation (external data)

    One of: synthetic, gated-eval (or a newer value).
    """
    metric: str
    threshold: float


class CheckStatus(BaseModel):
    """
    A check in the report: its latest run (null fields when it never ran).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    id: str
    kind: str
    """
    * `synthetic` - Synthetic (data the project made)
    * `gated-eval` - Gated evaluation (external data)

    One of: synthetic, gated-eval (or a newer value).
    """
    metric: str
    threshold: float
    status: str
    """
    * `pass` - pass
    * `fail` - fail
    * `stale` - stale
    * `pending` - pending

    One of: pass, fail, stale, pending (or a newer value).
    """
    value: Annotated[float | None, Field(...)]
    dataset: Annotated[str | None, Field(...)]
    recorded_at: Annotated[AwareDatetime | None, Field(...)]
    source: Annotated[str | Any | None, Field(...)]
    blocks: str
    """
    What a failure (or no run) holds back.
    """
    not_run: Annotated[str | None, Field(...)]
    """
    Why the last evaluation run could not run it.
    """


class Compiled(BaseModel):
    """
    The compiled memory file: its markdown, what went in, what was cut and why.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    as_of: AwareDatetime
    budget: Annotated[int, Field(ge=0)]
    tokens: Annotated[int, Field(ge=0)]
    token_counter: str
    display_mode: str
    """
    * `marks` - marks
    * `verbose` - verbose
    * `off` - off

    One of: marks, verbose, off (or a newer value).
    """
    decay: str
    """
    e.g. standard; event: fast, decision: never
    """
    show_ids: bool
    candidates: Annotated[int, Field(ge=0)]
    included_count: Annotated[int, Field(ge=0)]
    cut_count: Annotated[int, Field(ge=0)]
    cut_protected_count: Annotated[int, Field(ge=0)]
    included: list[CompiledEntry]
    cut: list[CompiledEntry]
    """
    At most cut_listed_max of them.
    """
    cut_listed_max: Annotated[int, Field(ge=0)]
    markdown: str


class Divergence(BaseModel):
    """
    Two memories by different writers that disagree (the older first), why they were flagged, and what a curator decided.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    divergence_id: str
    status: str
    """
    * `open` - Open
    * `resolved` - Resolved
    * `dismissed` - Dismissed

    One of: open, resolved, dismissed (or a newer value).
    """
    score: float
    detector: str
    """
    rules, geometry or model
    """
    evidence: dict[str, Any]
    """
    What the detector found: free-form.
    """
    memories: list[DivergingMemory]
    """
    The two, the older first.
    """
    link_id: Annotated[str | None, Field(...)]
    """
    Its contradicts link.
    """
    reason: str
    """
    The curator's, once closed.
    """
    closed_by: Annotated[str | None, Field(...)]
    closed_at: Annotated[AwareDatetime | None, Field(...)]
    created_at: AwareDatetime


class DivergencePage(BaseModel):
    """
    A page of divergences, newest first.
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
    results: list[Divergence]


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


class SearchHit(BaseModel):
    """
    A memory found: its rank, whether the compiled file has it, and why it ranks there.
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
    rank: Annotated[int, Field(ge=1)]
    eligible: str
    """
    * `yes` - yes
    * `protected` - protected
    * `cut` - cut
    * `-` - -

    One of: yes, protected, cut, - (or a newer value).
    """
    explanation: Explanation


class Traversal(BaseModel):
    """
    The nodes within reach of a start, nearest first, each with its shortest path.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    from_: Annotated[MemoryNode | EntityNode, Field(alias="from", discriminator="kind")]
    count: Annotated[int, Field(ge=0)]
    nodes: list[Reached]


class Search(BaseModel):
    """
    The hits of a search, best first, and a markdown table of them.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    results: list[SearchHit]
    table: str
    """
    The hits as a markdown table.
    """
