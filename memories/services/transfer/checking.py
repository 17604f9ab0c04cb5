"""The check of a whole export file before an import writes anything: every line read
(``reading``), every record's fields against their rules (``memories.exchange``, which uses
``memories.rules``: the rules remember, bulk and the REST API apply), the header and the end's
counts, no record twice, and every reference resolved: to a record of the file or, for a
memory, a scope or an agent, to one the target workspace already holds. Reads only."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db.models import Q

from memories import rules
from memories.errors import ValidationFailed
from memories.exchange import FORMAT, RECORD_TYPES, record_problems, shown
from memories.models import Agent, Memory, ProvenanceEvent, Scope, Workspace
from memories.relational.gazetteer import normalize
from memories.services.transfer.reading import read_records

#: How many problems a refused file lists.
PROBLEMS_SHOWN = 20
#: Memories looked up in the target workspace per query.
LOOKUP_CHUNK = 5000


@dataclass
class Here:
    """What the target workspace already holds of what the file names."""

    workspace: Workspace | None = None
    #: A memory the file names (by origin) -> its pk and mem_id here.
    memories: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: Origins of the memories erased here (their tombstones keep them).
    erased: set[str] = field(default_factory=set)
    scopes: set[str] = field(default_factory=set)
    agents: set[str] = field(default_factory=set)


@dataclass
class Plan:
    """What the check of the whole file learnt: the header, and every id it names."""

    header: dict[str, Any] = field(default_factory=dict)
    workspace_slug: str = ""
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    origins: list[str] = field(default_factory=list)  # the memories', in file order
    mem_ids: dict[str, str] = field(default_factory=dict)  # a memory's mem_id -> its origin
    usernames: set[str] = field(default_factory=set)
    #: An entity's id -> the memories (origins) that name it (a mention, an attribution).
    entity_refs: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    here: Here = field(default_factory=Here)


# Each kind of record: the fields no two records may share (a tuple: the fields together,
# skipped when one is empty), and what a second one is called.
UNIQUE: dict[str, tuple[tuple[str, ...], ...]] = {
    "scope": (("name",),),
    "agent": (("name",),),
    "entity": (("entity_id",), ("kind", "name")),
    "memory": (("origin",), ("mem_id",), ("scope", "idempotency_key")),
    "link": (("link_id",),),
    "thread": (("thread_id",),),
    "divergence": (("divergence_id",), ("first", "second")),
}
#: The fields of each kind that name another record: memories, entities, scopes, agents.
MEMORY_REFS = {
    "memory": ("follows", "superseded_by"),
    "link": ("source", "target_memory"),
    "divergence": ("first", "second"),
}
ENTITY_REFS = {"memory": ("attributed_to",), "link": ("target_entity",), "entity": ("merged_into",)}
SCOPE_REFS = {"memory": ("scope",), "thread": ("scope",)}
AGENT_REFS = {"link": ("agent",), "entity": ("created_by_agent",)}
#: Pairs of fields of one record that must name different records.
NOT_ITSELF = {
    "memory": (("origin", "follows"), ("origin", "superseded_by")),
    "link": (("source", "target_memory"),),
    "divergence": (("first", "second"),),
    "entity": (("entity_id", "merged_into"),),
}


class _Checker:
    def __init__(self) -> None:
        self.plan = Plan()
        self.problems: dict[str, list[str]] = {}
        self.header: dict[str, Any] | None = None
        self.end: dict[str, Any] | None = None
        self.seen: dict[tuple[Any, ...], str] = {}
        self.line_number = 0
        self.entities: set[str] = set()
        self.scopes: set[str] = set()
        self.agents: set[str] = set()
        # What a record names, by kind -> where it is first named: the record, the field.
        self.refs: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)

    def problem(self, where: str, message: str) -> None:
        self.problems.setdefault(where, []).append(message)

    def line(self, number: int, record: dict[str, Any] | None, problem: str) -> None:
        self.line_number = number
        where = f"line {number}"
        if record is None:
            if self.header is None:
                raise ValidationFailed.single(where, f"{problem} Not a {FORMAT} file.")
            self.problem(where, problem)
            return
        kind = record.get("type")
        if self.header is None:
            if kind != "header" or record.get("format") != FORMAT:
                raise ValidationFailed.single(
                    where, f"not a {FORMAT} file (its first record must be the header)."
                )
            self.header = record
            if found := record_problems(record):
                raise ValidationFailed({f"{where} (header)": _listed(found)})
            return
        if self.end is not None:
            self.problem(where, "nothing may follow the end record.")
            return
        if kind == "end":
            self.end = record
            if found := record_problems(record):
                self.problems[f"{where} (end)"] = _listed(found)
            return
        if not isinstance(kind, str) or kind not in RECORD_TYPES:
            self.problem(where, f"type: {shown(kind)} is not one of: {', '.join(RECORD_TYPES)}.")
            return
        where = f"{where} ({kind})"
        found = record_problems(record) or self.itself(kind, record) or self.twice(kind, record)
        if found:
            self.problems[where] = _listed(found)
            return
        self.plan.counts[kind] += 1
        self.learn(kind, record, where)

    def itself(self, kind: str, record: dict[str, Any]) -> dict[str, str]:
        return {
            other: f"must not be the same as {own} (a {kind} naming itself)."
            for own, other in NOT_ITSELF.get(kind, ())
            if record[other] is not None and record[other] == record[own]
        }

    def twice(self, kind: str, record: dict[str, Any]) -> dict[str, str]:
        """Fields that repeat another record's, each with the line of the first."""
        found = {}
        keys = []
        for names in UNIQUE.get(kind, ()):
            values = tuple(record[name] for name in names)
            if kind == "entity" and names == ("kind", "name"):
                values = (record["kind"], normalize(record["name"]))
            elif kind == "divergence" and names == ("first", "second"):
                values = tuple(sorted(values))
            if not all(values):
                continue
            key = (kind, names, values)
            if key in self.seen:
                found[names[-1]] = (
                    f"the same {' and '.join(names)} as {self.seen[key]} (a {kind} is in a "
                    "file once)."
                )
            keys.append(key)
        if kind == "thread":
            members: set[str] = set()
            for member in record["members"]:
                key = ("member", member["memory"])
                if key in self.seen or member["memory"] in members:
                    where = self.seen.get(key, "this thread")
                    found["members"] = (
                        f"memory {member['memory']!r} is a member of {where} already (a memory "
                        "belongs to one thread at most)."
                    )
                    break
                members.add(member["memory"])
            keys += [("member", memory) for memory in members]
        if not found:
            self.seen.update(dict.fromkeys(keys, f"line {self.line_number}"))
        return found

    def learn(self, kind: str, record: dict[str, Any], where: str) -> None:
        plan = self.plan
        for what, fields in (
            ("memory", MEMORY_REFS),
            ("entity", ENTITY_REFS),
            ("scope", SCOPE_REFS),
            ("agent", AGENT_REFS),
        ):
            for name in fields.get(kind, ()):
                if record[name]:
                    self.refs[what].setdefault(record[name], (where, name))
        for name in ("user", "created_by_user", "closed_by"):
            if record.get(name):
                plan.usernames.add(record[name])
        for i, event in enumerate(record.get("history", [])):
            if event["agent"]:
                self.refs["agent"].setdefault(event["agent"], (where, f"history[{i}].agent"))
            if event["user"]:
                plan.usernames.add(event["user"])
        if kind == "scope" and record["kind"] == Scope.Kind.SHARED:
            self.scopes.add(record["name"])
        elif kind == "agent":
            self.agents.add(record["name"])
            self.scopes.add(f"private:{record['name']}")
        elif kind == "entity":
            self.entities.add(record["entity_id"])
        elif kind == "memory":
            if record["attributed_to"]:
                plan.entity_refs[record["attributed_to"]].add(record["origin"])
            plan.origins.append(record["origin"])
            plan.mem_ids[record["mem_id"]] = record["origin"]
        elif kind == "link" and record["target_entity"]:
            plan.entity_refs[record["target_entity"]].add(record["source"])
        elif kind == "thread":
            for i, member in enumerate(record["members"]):
                self.refs["memory"].setdefault(member["memory"], (where, f"members[{i}].memory"))

    def finish(self) -> None:
        """The file as a whole: a header, an end, and the end's counts those of the file."""
        if self.header is None:
            raise ValidationFailed.single("file", f"empty: not a {FORMAT} file.")
        if self.problems:
            return
        if self.end is None:
            self.problem("file", "has no end record: it was cut short (export it again).")
        elif self.end["counts"] != dict(self.plan.counts):
            self.problem(
                "file",
                f"its end record counts {self.end['counts']}, the file holds "
                f"{dict(self.plan.counts)}: it was cut short or edited.",
            )

    def resolve(self, here: Here, slug: str) -> None:
        """Every reference names a record of the file or, for a memory, a scope or an agent,
        one of the target workspace's (a memory erased there too: it is left out)."""
        there = {"entity": "in the file."}
        known = {
            "memory": (set(self.plan.origins), here.memories, here.erased),
            "entity": (self.entities,),
            "scope": (self.scopes, here.scopes),
            "agent": (self.agents, here.agents),
        }
        for what, refs in self.refs.items():
            for ref, (where, name) in refs.items():
                if not any(ref in names for names in known[what]):
                    self.problem(
                        where,
                        f"{name}: names no {what} {shown(ref)} "
                        + there.get(what, f"in the file or in workspace {slug!r}."),
                    )
                    if len(self.problems) >= PROBLEMS_SHOWN:
                        return


def _listed(found: dict[str, str]) -> list[str]:
    return [f"{name}: {message}" for name, message in found.items()]


def _here(slug: str, plan: Plan, memory_refs: set[str]) -> Here:
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        return Here()
    here = Here(workspace=workspace)
    wanted = list(dict.fromkeys([*plan.origins, *memory_refs]))
    for first in range(0, len(wanted), LOOKUP_CHUNK):
        keys = set(wanted[first : first + LOOKUP_CHUNK])
        rows = Memory.objects.filter(workspace=workspace).filter(
            Q(mem_id__in=keys) | Q(imported_from__in=keys)
        )
        for pk, mem_id, imported_from in rows.values_list("pk", "mem_id", "imported_from"):
            here.memories[mem_id if mem_id in keys else imported_from] = (pk, mem_id)
    here.erased = set(
        ProvenanceEvent.objects.filter(
            workspace=workspace, action=ProvenanceEvent.Action.ERASE
        ).values_list("new_values__origin", flat=True)
    )
    here.scopes = set(Scope.objects.filter(workspace=workspace).values_list("name", flat=True))
    here.agents = set(Agent.objects.filter(workspace=workspace).values_list("name", flat=True))
    return here


def check_file(path: Path, *, workspace_slug: str | None = None) -> Plan:
    """Read the whole file and check it (see the module's docstring), reading only. Returns
    what the import needs; ValidationFailed names each problem (the first ``PROBLEMS_SHOWN``)
    by its line, its record's type and its field."""
    if workspace_slug is not None and (message := rules.workspace_slug(workspace_slug)):
        raise ValidationFailed.single("workspace", message)
    if not path.is_file():
        raise ValidationFailed.single("file", f"no file {str(path)!r}.")
    checker = _Checker()
    for number, record, problem in read_records(path):
        if len(checker.problems) >= PROBLEMS_SHOWN:
            break
        checker.line_number = number
        checker.line(number, record, problem)
    checker.finish()
    if checker.problems:
        raise ValidationFailed(checker.problems)
    plan = checker.plan
    assert checker.header is not None
    plan.header = checker.header
    plan.workspace_slug = workspace_slug or checker.header["workspace"]
    plan.here = _here(plan.workspace_slug, plan, set(checker.refs["memory"]))
    checker.resolve(plan.here, plan.workspace_slug)
    if checker.problems:
        raise ValidationFailed(checker.problems)
    return plan
