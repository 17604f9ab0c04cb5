# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there).

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from meaning_memory.client.answers.part1 import CompiledEntry, DivergingMemory, Source


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
