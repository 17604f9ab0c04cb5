"""Import: a file written by ``meaning-memory export`` (``selectors.export``), into a workspace
of this install or another.

What it guarantees (the README's "Export and import" says it to users):

- **Checked first.** Every line is read and checked (``memories.exchange``) before anything is
  written; a bad line, a file cut short (no ``end`` record, or counts that differ) or a file
  of another format is refused with every problem named by its line.
- **Idempotent.** A memory is known by its ``origin`` (the ``mem_id`` it was first given): one
  already in the workspace (as its own ``mem_id``, or brought by an earlier import) is left as
  it is, and so is one whose writer's idempotency key its scope already holds. Entities are
  known by type and name, links by their ends, type and time, threads by their members,
  divergences by their pair. Importing a file twice stores nothing new.
- **Resumable.** Memories are written in batches, each with its history in one transaction; an
  import stopped halfway is run again and goes on where it stopped.
- **New ids.** Every imported memory, entity, link, thread and divergence gets a new public id;
  the ids the file names inside histories, evidence and thread cues are translated to them.
- What it never does: change a memory already there, import a token (agents the workspace
  lacks are made with a new token nobody holds: ``createagent --new-token`` gives one), or
  recompute scores (a memory keeps the scores, origins and attribution it had). Vectors are
  used as they are when the file has them and was made with the same embedding model;
  otherwise the texts are embedded again here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q

from memories import rules
from memories.embeddings import current_model_name, get_embedder
from memories.errors import ValidationFailed
from memories.exchange import (
    FORMAT,
    FORMAT_VERSION,
    RECORD_TYPES,
    decode_vector,
    parse_time,
    record_problems,
)
from memories.gazetteer import normalize, tokens
from memories.models import (
    STARE_DIMENSIONS,
    Agent,
    Divergence,
    Entity,
    Link,
    Memory,
    ProvenanceEvent,
    Scope,
    Thread,
    ThreadMember,
    Workspace,
    new_mem_id,
)
from memories.services.remember import content_hash
from memories.services.tenancy import agent_create, workspace_get_or_create

#: Memories embedded and written per transaction.
BATCH = 256
#: How many problems a refused file lists.
PROBLEMS_SHOWN = 20

MEMORY_TIMES = ("created_at", "observed_at", "valid_from", "valid_until")

Progress = Callable[[str, int, int], None]


@dataclass
class ImportResult:
    workspace: Workspace
    #: Per record type: how many were stored, and how many were already there.
    stored: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    already: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    #: Records left out, with why (an end that is neither in the file nor here, say).
    skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    agents_created: list[str] = field(default_factory=list)
    #: Usernames the file names that this install does not have (their changes are kept,
    #: without the user).
    users_missing: set[str] = field(default_factory=set)
    embedded: int = 0


# --- Reading and checking ----------------------------------------------------------------------


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """The file's lines (blank ones skipped): its number, the record, and what is wrong when
    the line is not a JSON object (then the record is None)."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, None, f"not valid JSON ({exc.msg})."
                continue
            if not isinstance(record, dict):
                yield number, None, "must be a JSON object."
                continue
            yield number, record, ""


def _records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a file ``check_file`` found right."""
    for _, record, _ in read_records(path):
        yield record


@dataclass
class _Plan:
    """What the check of the whole file learnt: the header, and every id it names."""

    header: dict[str, Any]
    counts: dict[str, int]
    origins: list[str]  # the memories', in file order
    mem_ids: dict[str, str]  # a memory's mem_id in the file -> its origin
    entity_ids: dict[str, tuple[str, str]]  # entity_id -> (kind, normalised name)
    memory_refs: set[str]  # origins named by references (follows, links, threads…)
    usernames: set[str]
    agents: set[str]
    #: An entity's id -> the memories (origins) that name it (a mention, an attribution).
    entity_refs: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))


def check_file(path: Path) -> _Plan:
    """Read the whole file and check every record; ValidationFailed lists every bad line
    (the first ``PROBLEMS_SHOWN``)."""
    problems: dict[str, list[str]] = {}
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    counts: dict[str, int] = defaultdict(int)
    plan = _Plan({}, counts, [], {}, {}, set(), set(), set())
    try:
        if not path.is_file():
            raise ValidationFailed.single("file", f"no file {str(path)!r}.")
        for number, record, problem in read_records(path):
            if len(problems) >= PROBLEMS_SHOWN:
                break
            where = f"line {number}"
            if record is None:
                if header is None:
                    raise ValidationFailed.single(where, f"{problem} Not a {FORMAT} file.")
                problems[where] = [problem]
                continue
            kind = record.get("type")
            if header is None:
                if kind != "header" or record.get("format") != FORMAT:
                    raise ValidationFailed.single(
                        where, f"not a {FORMAT} file (its first record must be the header)."
                    )
                if record.get("version") != FORMAT_VERSION:
                    raise ValidationFailed.single(
                        where,
                        f"format version {record.get('version')!r}: this engine reads "
                        f"version {FORMAT_VERSION}.",
                    )
                header = record
                continue
            if end is not None:
                problems[where] = ["nothing may follow the end record."]
                continue
            if kind == "end":
                end = record
                continue
            if kind not in RECORD_TYPES:
                problems[where] = [f"type: {kind!r} is not one of: {', '.join(RECORD_TYPES)}."]
                continue
            if found := record_problems(record):
                problems[f"{where} ({kind})"] = found
                continue
            counts[kind] += 1
            _learn(plan, kind, record)
    except UnicodeDecodeError as exc:
        raise ValidationFailed.single("file", f"not UTF-8 text ({exc}).") from exc
    if problems:
        raise ValidationFailed(problems)
    if header is None:
        raise ValidationFailed.single("file", f"empty: not a {FORMAT} file.")
    if end is None:
        raise ValidationFailed.single(
            "file", "has no end record: it was cut short (export it again)."
        )
    if dict(end.get("counts") or {}) != dict(counts):
        raise ValidationFailed.single(
            "file",
            f"its end record counts {end.get('counts')}, the file holds {dict(counts)}: "
            "it was cut short or edited.",
        )
    plan.header = header
    return plan


def _learn(plan: _Plan, kind: str, record: dict[str, Any]) -> None:
    for name in ("agent", "created_by_agent"):
        if record.get(name):
            plan.agents.add(record[name])
    for name in ("user", "created_by_user", "closed_by"):
        if record.get(name):
            plan.usernames.add(record[name])
    for event in record.get("history", []):
        if event["agent"]:
            plan.agents.add(event["agent"])
        if event["user"]:
            plan.usernames.add(event["user"])
    if kind == "agent":
        plan.agents.add(record["name"])
    elif kind == "entity":
        plan.entity_ids[record["entity_id"]] = (record["kind"], normalize(record["name"]))
    elif kind == "memory":
        if record["attributed_to"]:
            plan.entity_refs[record["attributed_to"]].add(record["origin"])
        plan.origins.append(record["origin"])
        plan.mem_ids[record["mem_id"]] = record["origin"]
        plan.memory_refs.update(r for r in (record["follows"], record["superseded_by"]) if r)
    elif kind == "link":
        plan.memory_refs.update(r for r in (record["source"], record["target_memory"]) if r)
        if record["target_entity"]:
            plan.entity_refs[record["target_entity"]].add(record["source"])
    elif kind == "thread":
        plan.memory_refs.update(m["memory"] for m in record["members"])
    elif kind == "divergence":
        plan.memory_refs.update((record["first"], record["second"]))


# --- Importing ---------------------------------------------------------------------------------


class _Importer:
    def __init__(self, plan: _Plan, workspace: Workspace, progress: Progress | None) -> None:
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

    # The ids the file names, decided before anything is written: a memory already here keeps
    # its own, a new one gets one now, so histories can name memories that come later.
    def resolve_memories(self) -> None:
        wanted = list(dict.fromkeys([*self.plan.origins, *self.plan.memory_refs]))
        for first in range(0, len(wanted), 5000):
            keys = set(wanted[first : first + 5000])
            rows = Memory.objects.filter(workspace=self.workspace).filter(
                Q(mem_id__in=keys) | Q(imported_from__in=keys)
            )
            for pk, mem_id, imported_from in rows.values_list("pk", "mem_id", "imported_from"):
                key = mem_id if mem_id in keys else imported_from
                self.memory_pk[key] = pk
                self.ids[key] = mem_id
        erased = set(
            ProvenanceEvent.objects.filter(
                workspace=self.workspace, action=ProvenanceEvent.Action.ERASE
            ).values_list("new_values__origin", flat=True)
        )
        for origin in self.plan.origins:
            if origin in erased:
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
        known = {
            (kind, normalized): (pk, entity_id)
            for kind, normalized, pk, entity_id in Entity.objects.filter(
                workspace=self.workspace
            ).values_list("kind", "normalized", "pk", "entity_id")
        }
        made, events = [], []
        merged_into = {r["merged_into"] for r in records if r["merged_into"]}
        for record in records:
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
            key = (record["kind"], normalize(record["name"]))
            if key in known:
                self.entity_pk[record["entity_id"]], self.ids[record["entity_id"]] = known[key]
                self.result.already["entity"] += 1
                continue
            aliases = list(record["aliases"])
            keys = list(dict.fromkeys([key[1], *(normalize(a) for a in aliases)]))
            entity = Entity(
                workspace=self.workspace,
                kind=record["kind"],
                name=record["name"],
                normalized=key[1],
                aliases=aliases,
                keys=keys,
                tokens=tokens(keys),
                declared=record["declared"],
                origin=record["origin"],
                created_by_agent_id=self.agent_pk.get(record["created_by_agent"]),
                created_by_user_id=self.user_pk.get(record["created_by_user"]),
            )
            made.append((entity, record))
            known[key] = (None, entity.entity_id)
            self.ids[record["entity_id"]] = entity.entity_id
        Entity.objects.bulk_create([entity for entity, _ in made])
        for entity, record in made:
            self.entity_pk[record["entity_id"]] = entity.pk
        merged = []
        for entity, record in made:
            if record["merged_into"] and record["merged_into"] in self.entity_pk:
                entity.merged_into_id = self.entity_pk[record["merged_into"]]
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
        missing = [r["scope"] for r in fresh if r["scope"] not in self.scope_pk]
        if missing:
            raise ValidationFailed.single(
                "scope", f"{missing[0]!r}: the file names no such scope (nor an agent owning it)."
            )
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
            text=record["text"],
            category=record["category"],
            memory_type=record["memory_type"],
            source=record["source"],
            significance=record["significance"],
            pinned=record["pinned"],
            status=record["status"],
            session=record["session"],
            thread=record["thread"],
            perspective=record["perspective"],
            source_kind=record["source_kind"],
            sig_self=record["sig_self"],
            sig_external=record["sig_external"],
            attribution=self.translated(record["attribution"]),
            episode_text=record["episode_text"],
            metadata=record["metadata"],
            idempotency_key=record["idempotency_key"],
            relations_version=record["relations_version"],
            content_hash=content_hash(
                scope_id=scope_id, source=record["source"], text=record["text"]
            ),
            attributed_to_id=self.entity_pk.get(record["attributed_to"]),
            embedding=vector,
            episode_embedding=episode_vector,
            embedding_model=model,
            **{name: parse_time(record[name]) for name in MEMORY_TIMES},
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

    @transaction.atomic
    def links(self, records: list[dict[str, Any]]) -> None:
        wanted = []
        for record in records:
            source = self.memory_pk.get(record["source"])
            target_memory = self.memory_pk.get(record["target_memory"])
            target_entity = self.entity_pk.get(record["target_entity"])
            if source is None or (target_memory is None and target_entity is None):
                self.result.skipped["link (an end is neither in the file nor here)"] += 1
                continue
            wanted.append((record, source, target_memory, target_entity))
        existing = defaultdict(list)
        rows = Link.objects.filter(source_id__in={w[1] for w in wanted}).values_list(
            "source_id",
            "target_memory_id",
            "target_entity_id",
            "kind",
            "created_at",
            "removed_at",
            "link_id",
        )
        for source, target_memory, target_entity, kind, created, removed, link_id in rows:
            existing[(source, target_memory, target_entity, kind)].append(
                (created, removed, link_id)
            )
        made = []
        for record, source, target_memory, target_entity in wanted:
            same = existing[(source, target_memory, target_entity, record["kind"])]
            created = parse_time(record["created_at"])
            match = next(
                (
                    link_id
                    for when, removed, link_id in same
                    if when == created or (removed is None and record["removed_at"] is None)
                ),
                None,
            )
            if match is not None:
                self.ids[record["link_id"]] = match
                self.result.already["link"] += 1
                continue
            link = Link(
                workspace=self.workspace,
                source_id=source,
                target_memory_id=target_memory,
                target_entity_id=target_entity,
                kind=record["kind"],
                weight=record["weight"],
                origin=record["origin"],
                agent_id=self.agent_pk.get(record["agent"]),
                user_id=self.user_pk.get(record["user"]),
                evidence=self.translated(record["evidence"]),
                removed_at=parse_time(record["removed_at"]),
            )
            self.ids[record["link_id"]] = link.link_id
            same.append((created, link.removed_at, link.link_id))
            made.append((link, record))
        Link.objects.bulk_create([link for link, _ in made], batch_size=1000)
        set_times(Link, [(link.pk, {"created_at": r["created_at"]}) for link, r in made])
        self.result.stored["link"] += len(made)

    @transaction.atomic
    def threads(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            members = [
                (self.memory_pk[m["memory"]], m)
                for m in record["members"]
                if m["memory"] in self.memory_pk
            ]
            if not members or record["scope"] not in self.scope_pk:
                self.result.skipped["thread (no member here)"] += 1
                continue
            pks = [pk for pk, _ in members]
            if ThreadMember.objects.filter(memory_id__in=pks).exists():
                self.result.already["thread"] += 1
                continue
            vectors = Memory.objects.filter(pk__in=pks).values_list("embedding", flat=True)
            found = [np.asarray(v) for v in vectors if v is not None]
            thread = Thread.objects.create(
                workspace=self.workspace,
                scope_id=self.scope_pk[record["scope"]],
                label=record["label"],
                title=record["title"],
                status=record["status"],
                first_seen=parse_time(record["first_seen"]),
                last_seen=parse_time(record["last_seen"]),
                size=record["size"],
                sessions=record["sessions"],
                cues=self.translated(record["cues"]),
                words=record["words"],
                centroid=np.mean(found, axis=0) if found else None,
            )
            self.ids[record["thread_id"]] = thread.thread_id
            ThreadMember.objects.bulk_create(
                ThreadMember(
                    workspace=self.workspace,
                    thread=thread,
                    memory_id=pk,
                    evidence=self.translated(member["evidence"]),
                )
                for pk, member in members
            )
            self.result.stored["thread"] += 1

    @transaction.atomic
    def divergences(self, records: list[dict[str, Any]]) -> None:
        made = []
        wanted = [self.ids[r["link"]] for r in records if r["link"] and r["link"] in self.ids]
        link_pk = dict(Link.objects.filter(link_id__in=wanted).values_list("link_id", "pk"))
        for record in records:
            ends = (self.memory_pk.get(record["first"]), self.memory_pk.get(record["second"]))
            if None in ends:
                self.result.skipped["divergence (a memory is neither in the file nor here)"] += 1
                continue
            first, second = sorted(ends)
            if Divergence.objects.filter(first_id=first, second_id=second).exists():
                self.result.already["divergence"] += 1
                continue
            link_id = self.ids.get(record["link"]) if record["link"] else None
            divergence = Divergence(
                workspace=self.workspace,
                first_id=first,
                second_id=second,
                link_id=link_pk.get(link_id),
                score=record["score"],
                detector=record["detector"],
                evidence=self.translated(record["evidence"]),
                status=record["status"],
                reason=record["reason"],
                closed_by_id=self.user_pk.get(record["closed_by"]),
                closed_at=parse_time(record["closed_at"]),
            )
            self.ids[record["divergence_id"]] = divergence.divergence_id
            made.append((divergence, record))
        Divergence.objects.bulk_create([d for d, _ in made])
        set_times(Divergence, [(d.pk, {"created_at": r["created_at"]}) for d, r in made])
        self.result.stored["divergence"] += len(made)


def set_times(model: type, rows: list[tuple[int, dict[str, str]]]) -> None:
    """Give rows the times the file holds for fields the model sets itself on insert
    (``auto_now_add``): one UPDATE per field."""
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
                    [item for pk, times in chunk for item in (pk, times[name])],
                )


def import_file(
    path: Path, *, workspace_slug: str | None = None, progress: Progress | None = None
) -> ImportResult:
    """Import an export file into ``workspace_slug`` (default: the workspace it was exported
    from; made if new). ValidationFailed, with nothing written, for a file that is not right."""
    plan = check_file(path)
    if message := rules.workspace_slug(workspace_slug or plan.header["workspace"]):
        raise ValidationFailed.single("workspace", message)
    workspace = workspace_get_or_create(slug=workspace_slug or plan.header["workspace"])
    importer = _Importer(plan, workspace, progress)
    importer.resolve_memories()
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in _records(path):  # the small ones first: everything names them
        if record["type"] in ("scope", "agent", "entity"):
            by_type[record["type"]].append(record)
    importer.people(by_type["scope"], by_type["agent"])
    importer.entities(by_type["entity"])
    total, done, batch, replacements = plan.counts.get("memory", 0), 0, [], []
    later: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in _records(path):
        kind = record["type"]
        if kind == "memory":
            batch.append(record)
            if record["superseded_by"]:
                replacements.append((record["origin"], record["superseded_by"]))
            if len(batch) == BATCH:
                importer.memories(batch)
                done += len(batch)
                importer.progress("memories", done, total)
                batch = []
        elif kind in ("link", "thread", "divergence"):
            later[kind].append(record)
    importer.memories(batch)
    importer.progress("memories", total, total)
    importer.replacements(replacements)
    links = later["link"]
    for first in range(0, len(links), 2000):
        importer.links(links[first : first + 2000])
        importer.progress("links", min(first + 2000, len(links)), len(links))
    importer.threads(later["thread"])
    importer.divergences(later["divergence"])
    return importer.result
