"""Writing what ``checking`` found right: the scopes and agents, the entities, the memories
in batches (each with its history in one transaction) and who replaced whom. Nothing here
refuses a record: the check has, before anything was written."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction

from memories.embeddings import current_model_name, get_embedder
from memories.exchange import decode_vector, parse_time
from memories.models import (
    PLAIN_FIELDS,
    STARE_DIMENSIONS,
    TIME_FIELDS,
    Agent,
    Entity,
    Memory,
    ProvenanceEvent,
    Scope,
    Workspace,
    new_mem_id,
)
from memories.relational.gazetteer import normalize, tokens
from memories.services.placing import content_hash
from memories.services.relations.namesakes import Namesake, pick
from memories.services.tenancy import agent_create
from memories.services.transfer.checking import Plan

Progress = Callable[[str, int, int], None]


@dataclass
class ImportResult:
    workspace: Workspace
    #: Per record type: how many were stored, and how many were already there.
    stored: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    already: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    #: Records left out, with why (a memory erased here, or a link with an end erased here).
    skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    agents_created: list[str] = field(default_factory=list)
    #: Usernames the file names that this install does not have (their changes are kept,
    #: without the user).
    users_missing: set[str] = field(default_factory=set)
    embedded: int = 0


# --- Reading and checking ----------------------------------------------------------------------


class Importer:
    def __init__(self, plan: Plan, workspace: Workspace, progress: Progress | None) -> None:
        self.plan = plan
        self.workspace = workspace
        self.progress = progress or (lambda phase, done, total: None)
        self.result = ImportResult(workspace)
        #: Public ids the file names -> the ids they have here (memories, entities, links…).
        self.ids: dict[str, str] = {}
        self.memory_pk: dict[str, int] = {}  # origin -> pk here
        self.new_memories: set[str] = set()  # origins that this import writes
        self.erased: set[str] = set()  # origins erased here: never brought back
        self.entity_pk: dict[str, int] = {}  # the file's entity_id -> pk here
        self.scope_pk: dict[str, int] = {}
        self.agent_pk: dict[str, int] = {}
        self.user_pk: dict[str, int] = {}
        self.reuse_vectors = bool(plan.header.get("vectors")) and (
            plan.header.get("embedding_model") == current_model_name()
        )
        self.resolve_memories()

    # The ids the file names, decided before anything is written: a memory already here keeps
    # its own, a new one gets one now, so histories can name memories that come later.
    def resolve_memories(self) -> None:
        here = self.plan.here
        for key, (pk, mem_id) in here.memories.items():
            self.memory_pk[key] = pk
            self.ids[key] = mem_id
        for origin in self.plan.origins:
            if origin in here.erased:
                self.erased.add(origin)
            elif origin not in self.memory_pk:
                self.ids[origin] = new_mem_id()
                self.new_memories.add(origin)
        for mem_id, origin in self.plan.mem_ids.items():
            if origin in self.ids:
                self.ids.setdefault(mem_id, self.ids[origin])

    def translated(self, value: Any) -> Any:
        """A JSON value with every id the file names replaced by its id here."""
        if isinstance(value, str):
            return self.ids.get(value, value)
        if isinstance(value, list):
            return [self.translated(item) for item in value]
        if isinstance(value, dict):
            return {key: self.translated(item) for key, item in value.items()}
        return value

    def people(self, scopes: list[dict], agents: list[dict]) -> None:
        for scope in scopes:
            if scope["kind"] == Scope.Kind.PRIVATE:
                continue  # made with its agent
            made, _ = Scope.objects.get_or_create(
                workspace=self.workspace, name=scope["name"], defaults={"kind": scope["kind"]}
            )
            self.scope_pk[made.name] = made.pk
        existing = {a.name: a for a in Agent.objects.filter(workspace=self.workspace)}
        for record in agents:
            agent = existing.get(record["name"])
            if agent is None:
                agent, _ = agent_create(
                    workspace_slug=self.workspace.slug,
                    name=record["name"],
                    shared_scopes=record["scopes"],
                )
                self.result.agents_created.append(agent.name)
                if not record["active"]:
                    agent.is_active = False
                    agent.save(update_fields=["is_active"])
            existing[agent.name] = agent
        for agent in existing.values():
            self.agent_pk[agent.name] = agent.pk
            self.scope_pk[f"private:{agent.name}"] = agent.private_scope_id
        for scope in Scope.objects.filter(workspace=self.workspace):
            self.scope_pk.setdefault(scope.name, scope.pk)
        users = get_user_model().objects.filter(username__in=self.plan.usernames)
        self.user_pk = dict(users.values_list("username", "pk"))
        self.result.users_missing = self.plan.usernames - set(self.user_pk)

    def event(self, record: dict[str, Any], **subject: Any) -> ProvenanceEvent:
        return ProvenanceEvent(
            workspace=self.workspace,
            action=record["action"],
            agent_id=self.agent_pk.get(record["agent"]),
            user_id=self.user_pk.get(record["user"]),
            old_values=self.translated(record["old"]),
            new_values=self.translated(record["new"]),
            reason=record["reason"],
            **subject,
        )

    def save_events(self, pairs: list[tuple[ProvenanceEvent, dict]]) -> None:
        ProvenanceEvent.objects.bulk_create([event for event, _ in pairs], batch_size=1000)
        set_times(
            ProvenanceEvent, [(event.pk, {"created_at": r["created_at"]}) for event, r in pairs]
        )

    @transaction.atomic
    def entities(self, records: list[dict[str, Any]]) -> None:
        # A record is the entity here of its name that ``namesakes.pick`` says it is (a guess
        # one of any type, a sure type the one of its kind of thing), here or made before it
        # in this file; a merged record, the row of its very name and type. Else it is made.
        standing: dict[str, list[tuple[Namesake, Any]]] = {}
        merged_rows: dict[tuple[str, str], tuple[int, str]] = {}
        for pk, normalized, kind, typed_by, declared, entity_id, merged in Entity.objects.filter(
            workspace=self.workspace
        ).values_list(
            "pk", "normalized", "kind", "typed_by", "declared", "entity_id", "merged_into"
        ):
            if merged is None:
                standing.setdefault(normalized, []).append(
                    (Namesake(pk, kind, typed_by, declared), (pk, entity_id))
                )
            else:
                merged_rows.setdefault((normalized, kind), (pk, entity_id))
        made, events = [], []
        same: list[tuple[str, Entity]] = []  # (a record's entity_id, the entity made before it)
        merged_into = {r["merged_into"] for r in records if r["merged_into"]}
        # Those standing for themselves first: a merged record may be one of them.
        for record in sorted(records, key=lambda r: bool(r["merged_into"])):
            named_by = self.plan.entity_refs.get(record["entity_id"], set())
            if (
                named_by
                and named_by <= self.erased
                and not record["declared"]
                and record["entity_id"] not in merged_into
            ):
                # Only memories erased here named it: its name came from their words.
                self.result.skipped["entity (named only by memories erased here)"] += 1
                continue
            name, kind = normalize(record["name"]), record["kind"]
            typed_by = record.get("typed_by") or _typed_by(record)
            if record["merged_into"]:
                found = merged_rows.get((name, kind))
                if found is None:
                    found = next((ref for n, ref in standing.get(name, []) if n.kind == kind), None)
            else:
                options = standing.get(name, [])
                chosen = pick([n for n, _ in options], kind, typed_by)
                found = next(ref for n, ref in options if n is chosen) if chosen else None
            if isinstance(found, Entity):  # made before it in this file
                same.append((record["entity_id"], found))
                self.ids[record["entity_id"]] = found.entity_id
                self.result.already["entity"] += 1
                continue
            if found is not None:
                self.entity_pk[record["entity_id"]], self.ids[record["entity_id"]] = found
                self.result.already["entity"] += 1
                continue
            aliases = list(record["aliases"])
            keys = list(dict.fromkeys([name, *(normalize(a) for a in aliases)]))
            entity = Entity(
                workspace=self.workspace,
                kind=kind,
                name=record["name"],
                normalized=name,
                aliases=aliases,
                keys=keys,
                tokens=tokens(keys),
                declared=record["declared"],
                origin=record["origin"],
                typed_by=typed_by,
                created_by_agent_id=self.agent_pk.get(record["created_by_agent"]),
                created_by_user_id=self.user_pk.get(record["created_by_user"]),
            )
            made.append((entity, record))
            if record["merged_into"]:
                merged_rows[name, kind] = entity
            else:
                marker = Namesake(-len(made), kind, typed_by, record["declared"])
                standing.setdefault(name, []).append((marker, entity))
            self.ids[record["entity_id"]] = entity.entity_id
        Entity.objects.bulk_create([entity for entity, _ in made])
        for entity, record in made:
            self.entity_pk[record["entity_id"]] = entity.pk
        for entity_id, entity in same:
            self.entity_pk[entity_id] = entity.pk
        merged = []
        for entity, record in made:
            into = self.entity_pk.get(record["merged_into"]) if record["merged_into"] else None
            if into is not None and into != entity.pk:
                entity.merged_into_id = into
                merged.append(entity)
        Entity.objects.bulk_update(merged, ["merged_into"])
        for entity, record in made:
            events += [(self.event(e, subject_entity=entity), e) for e in record["history"]]
        self.save_events(events)
        self.result.stored["entity"] += len(made)

    def memories(self, records: list[dict[str, Any]]) -> None:
        """One batch: the new ones embedded (outside any transaction), then stored with
        their histories in one."""
        fresh = []
        for record in records:
            if record["origin"] in self.erased:
                self.result.skipped["memory (erased here: an import never brings one back)"] += 1
                continue
            if record["origin"] not in self.new_memories or record["origin"] in self.memory_pk:
                self.result.already["memory"] += 1
                continue
            fresh.append(record)
        taken = self._keys_taken(fresh)
        for record in [r for r in fresh if (r["scope"], r["idempotency_key"]) in taken]:
            pk, mem_id = taken[(record["scope"], record["idempotency_key"])]
            self.memory_pk[record["origin"]], self.ids[record["origin"]] = pk, mem_id
            self.result.already["memory"] += 1
        fresh = [r for r in fresh if (r["scope"], r["idempotency_key"]) not in taken]
        vectors = self._vectors(fresh)
        with transaction.atomic():
            built = [self._memory(r, *v) for r, v in zip(fresh, vectors, strict=True)]
            Memory.objects.bulk_create(built, batch_size=500)
            for record, memory in zip(fresh, built, strict=True):
                self.memory_pk[record["origin"]] = memory.pk
            follows = []
            for record, memory in zip(fresh, built, strict=True):
                if record["follows"] and record["follows"] in self.memory_pk:
                    memory.follows_id = self.memory_pk[record["follows"]]
                    follows.append(memory)
            Memory.objects.bulk_update(follows, ["follows"], batch_size=500)
            self.save_events(
                [
                    (self.event(event, memory=memory), event)
                    for record, memory in zip(fresh, built, strict=True)
                    for event in record["history"]
                ]
            )
        self.result.stored["memory"] += len(built)

    def _keys_taken(self, records: list[dict]) -> dict[tuple[str, str], tuple[int, str]]:
        """The writer's idempotency keys of ``records`` their scope here already holds."""
        wanted = [(r["scope"], r["idempotency_key"]) for r in records if r["idempotency_key"]]
        if not wanted:
            return {}
        names = {pk: name for name, pk in self.scope_pk.items()}
        rows = Memory.objects.filter(
            scope_id__in=[self.scope_pk[s] for s, _ in wanted if s in self.scope_pk],
            idempotency_key__in=[key for _, key in wanted],
        ).values_list("scope_id", "idempotency_key", "pk", "mem_id")
        return {(names[scope], key): (pk, mem_id) for scope, key, pk, mem_id in rows}

    def _vectors(self, records: list[dict]) -> list[tuple[Any, Any, str]]:
        """Each memory's vector, episode vector and model: the file's when they can be used,
        otherwise embedded here (the episode with the text, as a write does)."""
        if self.reuse_vectors and all(r.get("embedding") for r in records):
            return [
                (
                    decode_vector(r["embedding"]),
                    decode_vector(r["episode_embedding"]) if r.get("episode_embedding") else None,
                    r["embedding_model"],
                )
                for r in records
            ]
        if not records:
            return []
        embedder = get_embedder()
        texts = [r["text"] for r in records]
        with_episode = [i for i, r in enumerate(records) if r["episode_text"]]
        vectors = embedder.embed(
            texts + [records[i]["episode_text"] + "\n" + records[i]["text"] for i in with_episode]
        )
        self.result.embedded += len(records)
        episode_of = dict(zip(with_episode, vectors[len(texts) :], strict=True))
        return [(vectors[i], episode_of.get(i), embedder.model_name) for i in range(len(texts))]

    def _memory(self, record: dict[str, Any], vector, episode_vector, model: str) -> Memory:
        scope_id = self.scope_pk[record["scope"]]
        memory = Memory(
            mem_id=self.ids[record["origin"]],
            imported_from=record["origin"],
            workspace=self.workspace,
            scope_id=scope_id,
            # Each plain field as the file gives it, but these two (see below).
            **{
                name: record[name]
                for name in PLAIN_FIELDS
                if name in record and name not in ("attribution", "embedding_model")
            },
            attribution=self.translated(record["attribution"]),
            content_hash=content_hash(
                scope_id=scope_id, source=record["source"], text=record["text"]
            ),
            attributed_to_id=self.entity_pk.get(record["attributed_to"]),
            embedding=vector,
            episode_embedding=episode_vector,
            embedding_model=model,
            **{name: parse_time(record[name]) for name in TIME_FIELDS},
        )
        for dim in STARE_DIMENSIONS:
            setattr(memory, f"{dim}_score", record["scores"][dim])
            setattr(memory, f"{dim}_origin", record["score_origins"][dim] or "")
        return memory

    @transaction.atomic
    def replacements(self, pairs: list[tuple[str, str]]) -> None:
        """``superseded_by`` of the memories this import brought (it may name a later one),
        set where it is still empty (an import stopped halfway is finished by the next)."""
        changed = []
        for origin, newer in pairs:
            if origin in self.memory_pk and newer in self.memory_pk:
                changed.append((self.memory_pk[origin], self.memory_pk[newer]))
        rows = Memory.objects.filter(
            pk__in=[pk for pk, _ in changed], superseded_by__isnull=True
        ).exclude(imported_from="")
        newer_of = dict(changed)
        memories = list(rows.only("pk"))
        for memory in memories:
            memory.superseded_by_id = newer_of[memory.pk]
        Memory.objects.bulk_update(memories, ["superseded_by"], batch_size=500)


def set_times(model: type, rows: list[tuple[int, dict[str, str]]]) -> None:
    """Give rows the times the file holds for fields the model sets itself on insert
    (``auto_now_add``): one UPDATE per field, each time parsed as the check parsed it (the
    file's text may be ISO 8601 that PostgreSQL reads otherwise, or not at all)."""
    if not rows:
        return
    table = model._meta.db_table
    for name in rows[0][1]:
        column = connection.ops.quote_name(name)
        with connection.cursor() as cursor:
            for first in range(0, len(rows), 1000):
                chunk = rows[first : first + 1000]
                values = ", ".join(["(%s, %s::timestamptz)"] * len(chunk))
                cursor.execute(
                    f"UPDATE {table} SET {column} = v.t FROM (VALUES {values}) AS v(id, t) "
                    f"WHERE {table}.id = v.id",
                    [item for pk, times in chunk for item in (pk, parse_time(times[name]))],
                )


def _typed_by(record: dict[str, Any]) -> str:
    """Who typed an entity of a file that did not say: the team when it was declared, a writer
    when one made it, else the recogniser."""
    if record["declared"]:
        return Entity.TypedBy.DECLARED
    if record["origin"] in (Entity.Origin.WRITER, Entity.Origin.MEMBER):
        return Entity.TypedBy.WRITER
    return Entity.TypedBy.EXTRACTION
