# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there).

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from meaning_memory.client.answers.part1 import EntityRef
from meaning_memory.client.answers.part2 import StareOrigins, StareScores
from meaning_memory.client.answers.part3 import EntityNode, MemoryNode
from meaning_memory.client.answers.part5 import Explanation, Reached


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
