"""Placing a write: a remember command checked against stored state and resolved, without
writing anything (its scope, the memory it supersedes, its links' targets, its attribution),
and what a stored memory is built from (``Placed.build``). A single write and a batch place
their items here, then store them through the one storing function
(``memories.services.storing.store``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memories import rules
from memories.asymmetry.cues import read_cues
from memories.commands import STORED_AS_GIVEN, Remember
from memories.errors import Errors, NotFound, ValidationFailed
from memories.models import (
    STARE_DIMENSIONS,
    Agent,
    Entity,
    Memory,
    ProvenanceEvent,
    Scope,
)
from memories.selectors.memories import memory_get
from memories.selectors.reader import Reader
from memories.selectors.relations import visible_entities
from memories.services.enrichment import Understood
from memories.services.episodes import Episode
from memories.services.provenance import Action, provenance_event
from memories.services.relations import RELATIONS_VERSION, LinkRef, resolve_links


def _writable_scope(
    agent: Agent, name: str | None, errors: Errors, known: dict[str, Scope | None] | None = None
) -> Scope | None:
    """The scope ``name`` if the agent may write to it (``known``: names already looked up)."""
    if not name or name in {"private", f"private:{agent.name}"}:
        return agent.private_scope
    if known is not None and name in known:
        scope = known[name]
    else:
        scope = agent.scopes.filter(name=name).first()
        if known is not None:
            known[name] = scope
    if scope is None:
        errors.missing("scope", f"{name!r} is not a scope this agent belongs to.")
    return scope


@dataclass
class Placed:
    """A remember command with what stored state resolves for it (see ``place``): its scope,
    the memory it supersedes, its links' targets, its window's start, its attribution."""

    agent: Agent
    command: Remember
    scope: Scope
    supersedes: Memory | None
    valid_from: datetime | None
    created_at: datetime
    links: list[LinkRef]
    #: Asymmetry (``memories.asymmetry.cues``): whom it is for, how its claim came, who made it
    #: (an entity's primary key, or a name resolved when it is stored), and where each came from.
    perspective: str
    source_kind: str
    attribution: dict[str, Any]
    attributed_entity: int | None = None
    attributed_name: str = ""
    attributed_origin: str = Entity.Origin.WRITER
    #: Broken rules about the superseded memory's present state (see ``place``).
    deferred: dict[str, list[str]] = field(default_factory=dict)

    def raise_deferred(self) -> None:
        if self.deferred:
            raise ValidationFailed(self.deferred)

    @property
    def source(self) -> str:
        return self.agent.name if self.command.source is None else self.command.source

    @property
    def content_hash(self) -> str:
        return content_hash(scope_id=self.scope.pk, source=self.source, text=self.command.text)

    def build(
        self,
        *,
        episode: Episode,
        vector: Any,
        episode_vector: Any,
        model_name: str,
    ) -> Memory:
        """The memory to insert, with every value it is stored with that is known before its
        relations are (its extraction's version among them: ``store_relations`` runs in the
        same transaction, or the enricher stores them later and sets no column of the row but
        a claimant's and the A score). Each later UPDATE of the new row would leave a dead
        version in every index of the table, its vector index too."""
        command = self.command
        memory = Memory(
            **{name: getattr(command, name) for name in STORED_AS_GIVEN},
            workspace_id=self.agent.workspace_id,
            scope=self.scope,
            source=self.source,
            significance=command.stored_significance,
            created_at=self.created_at,
            valid_from=self.valid_from,
            metadata=dict(command.metadata),
            episode_text=episode.text,
            follows_id=episode.follows_id,
            embedding=vector,
            episode_embedding=episode_vector,
            embedding_model=model_name,
            content_hash=self.content_hash,
            perspective=self.perspective,
            source_kind=self.source_kind,
            attributed_to_id=self.attributed_entity,
            attribution=self.attribution,
            relations_version=RELATIONS_VERSION if settings.MM_ENTITY_EXTRACTION else None,
        )
        for key, value in command.stare_scores.items():
            setattr(memory, f"{key}_score", value)
            setattr(memory, f"{key}_origin", Memory.ScoreOrigin.WRITER)
        return memory

    def understood(self, memory: Memory) -> Understood:
        """What the enrichment of the stored memory starts from: what the writer gave (its
        entities, its links, a claimant it named or a cue read)."""
        claimant = None
        if self.attributed_name and self.attributed_entity is None:
            claimant = (self.attributed_name, self.attributed_origin)
        return Understood(memory, list(self.command.entities), list(self.links), claimant)

    def event(self, memory: Memory) -> ProvenanceEvent:
        """The ``remember`` provenance event of the stored memory (unsaved)."""
        return provenance_event(
            memory,
            Action.REMEMBER,
            agent=self.agent,
            new={
                "significance": memory.significance,
                "category": memory.category,
                "stare_scores": {
                    d: getattr(memory, f"{d}_score")
                    for d in STARE_DIMENSIONS
                    if getattr(memory, f"{d}_score") is not None
                },
                **(
                    {"stare_origins": memory.stare_origins}
                    if any(memory.stare_origins.values())
                    else {}
                ),
            },
        )


def content_hash(*, scope_id: int, source: str, text: str) -> str:
    """What makes two memories the same for a retried write: scope, source and text. (Lengths
    keep the parts apart; the same formula fills existing rows in migration 0010.)"""
    key = f"{scope_id}:{len(source)}:{source}{text}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def place(
    agent: Agent,
    command: Remember,
    *,
    now: datetime | None = None,
    scopes: dict[str, Scope | None] | None = None,
) -> Placed:
    """Check what the command asks of stored state (every broken rule at once, as
    ValidationFailed): a scope the agent belongs to, a superseded memory and link targets it
    can see, a window that follows the superseded one's. Nothing is written.

    What depends on the superseded memory's present state (still active, still valid) is kept
    in ``Placed.deferred`` instead: a retried write finds that memory superseded by its own
    first attempt, and must come back as that stored memory, not as an error. Callers raise
    it (``raise_deferred``) for the writes they are about to store. ``scopes`` caches scope
    look-ups across many calls (bulk writes)."""
    now = now or timezone.now()
    errors = Errors()
    supersedes, scope, valid_from = command.supersedes, command.scope, command.valid_from
    links = resolve_links(agent, command.links, errors)
    old: Memory | None = None
    target_scope: Scope | None = None
    state = Errors()  # the superseded memory's present state: see ``deferred``
    if supersedes:
        try:
            old = memory_get(Reader.of_agent(agent), supersedes)
        except NotFound:
            errors.missing("supersedes", f"no memory {supersedes!r} is visible to this agent.")
        else:
            if old.status != Memory.Status.ACTIVE:
                state.add("supersedes", f"memory {supersedes!r} is {old.status}, not active.")
            if valid_from is None:
                valid_from = now
            # The replacement lives where the original did, so everyone who saw the old
            # memory sees the new one (and no one loses a shared memory to a private one).
            target_scope = old.scope
            if (
                scope
                and scope != old.scope.name
                and not (scope == "private" and old.scope_id == agent.private_scope_id)
            ):
                errors.add(
                    "scope",
                    f"must be the superseded memory's scope ({old.scope.name!r}) or omitted.",
                )
    if target_scope is None:
        target_scope = _writable_scope(agent, scope, errors, scopes)
    errors.check("valid_until", rules.window(valid_from, command.valid_until))
    if old is not None and valid_from is not None:
        if old.valid_from is not None and not old.valid_from < valid_from:
            errors.add(
                "valid_from",
                f"must be after the superseded memory's valid_from ({old.valid_from.isoformat()}).",
            )
        if old.valid_until is not None and old.valid_until <= valid_from:
            state.add(
                "supersedes",
                f"memory {supersedes!r} already stopped being valid at "
                f"{old.valid_until.isoformat()}.",
            )
    errors.raise_if_any()
    assert target_scope is not None
    return Placed(
        agent=agent,
        command=command,
        scope=target_scope,
        supersedes=old,
        valid_from=valid_from,
        created_at=command.created_at or now,
        links=links,
        deferred=state.errors,
        **attribute(
            agent=agent,
            text=command.text,
            scope=target_scope,
            perspective=command.perspective,
            attributed_to=command.attributed_to,
            source_kind=command.source_kind,
        ),
    )


def attribute(
    *,
    agent: Agent,
    text: str,
    scope: Scope,
    perspective: str | None,
    attributed_to: str | None,
    source_kind: str | None,
) -> dict[str, Any]:
    """A memory's perspective, source kind and attribution: the writer's, else the scope's
    (perspective) and the text's cues (``memories.asymmetry.cues``), each with its origin.
    ``attributed_to`` given as an entity id must be one of the agent's workspace (NotFound
    otherwise, as for one that does not exist)."""
    origins: dict[str, Any] = {}
    found: dict[str, Any] = {}
    if perspective:
        origins["perspective"] = {"origin": "writer"}
    else:
        perspective = "self" if scope.kind == Scope.Kind.PRIVATE else "team"
        origins["perspective"] = {"origin": "scope"}
    if attributed_to and rules.public_id(attributed_to, "entity id") is None:
        entity = (
            visible_entities(Reader.of_agent(agent))
            .filter(entity_id=attributed_to)
            .values_list("pk", "merged_into_id")
            .first()
        )
        if entity is None:
            raise NotFound(f"no entity {attributed_to!r} is known to this agent.")
        found["attributed_entity"] = entity[1] or entity[0]
        origins["attributed_to"] = {"origin": "writer"}
    elif attributed_to:
        found["attributed_name"] = attributed_to.strip()
        origins["attributed_to"] = {"origin": "writer"}
    if source_kind:
        origins["source_kind"] = {"origin": "writer"}
    cue = None if source_kind and attributed_to else read_cues(text)
    if cue is not None:
        if not source_kind:
            source_kind = cue.source_kind
            origins["source_kind"] = cue.as_origin()
        if (
            not attributed_to
            and cue.name
            and source_kind in (Memory.SourceKind.STATED, Memory.SourceKind.HEARSAY)
        ):
            found["attributed_name"] = cue.name
            found["attributed_origin"] = Entity.Origin.EXTRACTION
            origins["attributed_to"] = cue.as_origin()
    return {
        "perspective": perspective,
        "source_kind": source_kind or "",
        "attribution": origins,
        **found,
    }


#: First key of the advisory lock writers of one workspace take to check and insert (the
#: second is the workspace's id).
LOCK_NAMESPACE = 0x6D6D  # "mm"


def lock_workspace(workspace_id: int) -> None:
    """Hold the workspace's write lock until the end of the current transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_NAMESPACE, workspace_id])


def by_idempotency_key(scope: Scope, key: str) -> Memory | None:
    """The memory stored under ``key`` in ``scope``.

    Keys are per scope: the writer may write to the scope, so it sees whatever is found there,
    and a key used in a scope it cannot see is simply free for it (no answer tells it that
    such a memory exists). Nearly every key is new: that is one look at the key's index, and
    the memory is read only when there is one."""
    stored = Memory.objects.filter(scope=scope, idempotency_key=key).values_list("pk", flat=True)
    if not (pks := list(stored)):
        return None
    return Memory.objects.select_related("scope", "superseded_by").get(pk=pks[0])
