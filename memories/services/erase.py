"""Erase: memories removed for good (``forget`` is the soft delete that keeps them).

What an erasure removes, in one transaction:

- the memory's row: its text, vectors, metadata, attribution, episode, scores;
- everything that holds its words or points at it: its links both ways (with their evidence),
  its history, its divergences and supersession proposals, its place in a thread;
- its words where other rows copied them: the episode of each memory that follows it in its
  session (the text taken out, the episode's vector made again), the entities only it named
  (not declared ones) and the record of a writer source only it had, the reason of each
  event of another memory that names it (a supersession's rule quotes its values), the
  admin's log lines about it; and, through ``signals.erasing``, what consolidation keeps (a
  thread's words, title and cues made again from the members left, the scope's word counts,
  the compiled files kept for agents that list it);
- and it leaves a tombstone: a provenance event that says which memory was erased, by whom,
  when, why and how it was chosen (one memory, a source, an agent, a session) — never what it
  said.

Every copy is found by identity (the memory's pk and mem_id, its session, the entities its
links name, its source), never by looking for its words: a copy may be cut, lower-cased or
have its white space collapsed (``memories/tests/test_erase_scan.py`` looks for a marker in
every column of every table afterwards).

Rows deleted in PostgreSQL stay in the table's pages until a vacuum, and their words in a
full-text index until it is rebuilt: after the commit the worker's
``memories.tasks.purge_erased`` vacuums the tables and rebuilds those indexes
(``memories/services/purge.py``, which first waits for the snapshots older than the erasure);
then no row, index or statistic holds the text, though a page's free space may keep its bytes
until a new row takes it. ``meaning-memory purge --full`` rewrites the
tables, after which the text is in no file of the database. The write-ahead log and backups
made before keep it until they are recycled (docs/api.md, "Erase", says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from memories import metadata_filter
from memories.errors import Errors, NotFound, ValidationFailed
from memories.models import Agent, Link, Memory, ProvenanceEvent, Workspace
from memories.selectors.memories import memory_get, metadata_filtered
from memories.selectors.permissions import require_role
from memories.selectors.reader import Reader
from memories.selectors.relations import entities_named, entity_members
from memories.services.erase_copies import (
    episodes_rewrite,
    forget_log_entries,
    history_redact,
    orphans_remove,
    sources_remove,
)
from memories.services.provenance import Action, provenance_event, record_many
from memories.signals import erasing

#: How memories are chosen for an erasure (the tombstone says which).
ERASE_BY = ("memory", "source", "agent", "session", "entity", "metadata")
#: The most memories one erasure removes (a larger one is refused: erase in parts).
ERASE_MAX = 10_000


@dataclass
class Erasure:
    workspace_id: int
    by: str
    mem_ids: list[str] = field(default_factory=list)
    episodes_rewritten: int = 0
    entities_removed: int = 0
    dry_run: bool = False

    @property
    def count(self) -> int:
        return len(self.mem_ids)


@dataclass(frozen=True)
class Selection:
    """The memories an erasure chose, how (``by``), what its tombstones record of the choice
    (ids and names of writers, never a customer's name or a filter's values), and the entities
    it was asked for (removed with their last mention, even declared ones)."""

    memories: Any
    by: str
    recorded: dict[str, Any]
    entities: frozenset[int] = frozenset()


def _reason(reason: str | None) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed.single("reason", "is required: say why it must be erased.")
    return reason


@transaction.atomic
def memory_erase(*, agent: Agent, mem_id: str, reason: str) -> Erasure:
    """Erase one memory the agent may see (NotFound otherwise, as for one that does not
    exist), whatever its status."""
    reason = _reason(reason)
    memory = memory_get(Reader.of_agent(agent), mem_id, for_update=True)
    chosen = Selection(Memory.objects.filter(pk=memory.pk), "memory", {})
    return _erase(chosen, memory.workspace_id, reason, agent=agent)


def erase_selection(reader: Reader, by: str, value: Any, field: str = "value") -> Selection:
    """The memories ``reader`` sees that ``by`` (one of ``ERASE_BY``) and ``value`` choose;
    ValidationFailed naming the field for a bad one. ``entity``: the memories that mention it
    (a link to it or to an entity merged into it) or whose claim it made (``attributed_to``),
    named by id, name or alias; ``metadata``: a filter (``memories.metadata_filter``, as a
    dict or its JSON text). Errors about the value name ``field``."""
    errors = Errors()
    if by not in ERASE_BY:
        errors.add("by", f"{by!r} is not one of: {', '.join(ERASE_BY)}.")
    if value is None or (isinstance(value, str) and not value.strip()):
        errors.add(field, f"is required: the {by} whose memories to erase.")
    errors.raise_if_any()
    workspace = reader.workspace
    memories = reader.sees(Memory.objects.all())
    if by == "metadata":
        try:
            found = (
                value
                if isinstance(value, metadata_filter.Filter)
                else metadata_filter.parse_text(value, path=field)
            )
        except metadata_filter.FilterError as exc:
            raise ValidationFailed(exc.errors) from exc
        keys = sorted(metadata_filter.keys_of(found))
        return Selection(metadata_filtered(memories, found), by, {"metadata_keys": keys})
    value = str(value).strip()
    if by == "entity":
        entities = entities_named(field, value, reader)
        members = {pk for entity in entities for pk in entity_members(entity)}
        mentions = Link.objects.filter(
            workspace_id=workspace.pk,
            source=OuterRef("pk"),
            target_entity_id__in=members,
            removed_at__isnull=True,
        )
        chosen = memories.filter(Q(Exists(mentions)) | Q(attributed_to_id__in=members))
        recorded = {"entity": ",".join(sorted(e.entity_id for e in entities))}
        return Selection(chosen, by, recorded, frozenset(members))
    if by in ("memory", "source", "session"):
        column = "mem_id" if by == "memory" else by
        return Selection(memories.filter(**{column: value}), by, {by: value})
    writer = Agent.objects.filter(workspace=workspace, name=value).first()
    if writer is None:
        raise ValidationFailed.single(field, f"no agent {value!r} in workspace {workspace.slug!r}.")
    written = ProvenanceEvent.objects.filter(action=Action.REMEMBER, agent=writer).values("memory")
    chosen = memories.filter(Q(pk__in=written) | Q(scope_id=writer.private_scope_id))
    return Selection(chosen, by, {by: value})


@transaction.atomic
def memories_erase_by_user(
    *, user: Any, workspace: Workspace, by: str, value: Any, reason: str, dry_run: bool = False
) -> Erasure:
    """``memories_erase`` by a workspace admin (``require_role``: NotFound for a user who does
    not see the workspace, Forbidden for one whose role is below admin)."""
    require_role(user, workspace, "erase")  # a user, never None (the operator's path)
    return memories_erase(
        workspace=workspace, by=by, value=value, reason=reason, dry_run=dry_run, user=user
    )


@transaction.atomic
def memories_erase(
    *,
    workspace: Workspace,
    by: str,
    value: Any,
    reason: str,
    dry_run: bool = False,
    user: Any = None,
) -> Erasure:
    """Erase the memories of a source, an agent (those it wrote, and its private scope), a
    session, an entity, a metadata filter or one memory (``erase_selection``); an operator's
    (``meaning-memory erase``) or, through ``memories_erase_by_user``, an admin's (``user``:
    ``require_role``). ``dry_run`` lists them and changes nothing."""
    if user is not None:
        require_role(user, workspace, "erase")
    return _chosen_erase(Reader.of_engine(workspace), by, value, reason, dry_run, user=user)


@transaction.atomic
def memories_erase_by_agent(
    *, agent: Agent, by: str, value: Any, reason: str, dry_run: bool = False
) -> Erasure:
    """Erase, for an agent, the memories it may see that mention an entity (``by="entity"``)
    or match a metadata filter (``by="metadata"``): what another scope holds is neither listed
    nor erased."""
    if by not in ("entity", "metadata"):
        raise ValidationFailed.single("by", "an agent erases by entity or metadata.")
    reader = Reader.of_agent(agent)
    return _chosen_erase(reader, by, value, reason, dry_run, agent=agent, field=by)


def _chosen_erase(
    reader: Reader,
    by: str,
    value: Any,
    reason: str,
    dry_run: bool,
    *,
    agent: Agent | None = None,
    user: Any = None,
    field: str = "value",
) -> Erasure:
    reason = reason if dry_run else _reason(reason)
    chosen = erase_selection(reader, by, value, field)
    if by == "memory" and not chosen.memories.exists():
        raise NotFound(f"no memory {value!r}")
    workspace_id = reader.workspace_id
    if dry_run:
        mem_ids = list(chosen.memories.order_by("id").values_list("mem_id", flat=True))
        if len(mem_ids) > ERASE_MAX:
            raise _too_many(field)
        return Erasure(workspace_id, by, mem_ids, dry_run=True)
    return _erase(chosen, workspace_id, reason, agent=agent, user=user, field=field)


def _too_many(field: str) -> ValidationFailed:
    return ValidationFailed.single(
        field, f"chooses more than {ERASE_MAX:,} memories: erase them in parts."
    )


def _erase(
    chosen: Selection,
    workspace_id: int,
    reason: str,
    *,
    agent: Agent | None = None,
    user: Any = None,
    field: str = "value",
) -> Erasure:
    rows = list(
        chosen.memories.filter(workspace_id=workspace_id)
        .select_for_update(of=("self",))
        .order_by("id")
        .values_list("pk", "mem_id", "imported_from", "source", "text", "status")[: ERASE_MAX + 1]
    )
    if len(rows) > ERASE_MAX:
        raise _too_many(field)
    result = Erasure(workspace_id, chosen.by, [row[1] for row in rows])
    if not rows and not chosen.entities:
        return result
    pks = [row[0] for row in rows]
    texts = {row[0]: row[4] for row in rows}
    named = set(
        Link.objects.filter(source_id__in=pks, target_entity__isnull=False).values_list(
            "target_entity_id", flat=True
        )
    ) | set(
        Memory.objects.filter(pk__in=pks, attributed_to__isnull=False).values_list(
            "attributed_to_id", flat=True
        )
    )
    if pks:
        result.episodes_rewritten = episodes_rewrite(workspace_id, pks, texts)
        erasing.send(sender=Memory, workspace_id=workspace_id, memory_pks=pks)
        forget_log_entries(Memory, pks)
        Memory.objects.filter(pk__in=pks).delete()
    result.entities_removed = orphans_remove(named, chosen.entities)
    history_redact(workspace_id, result.mem_ids)
    sources_remove(workspace_id, {row[3] for row in rows})
    record_many(
        [
            provenance_event(
                None,
                Action.ERASE,
                workspace_id=workspace_id,
                agent=agent,
                user=user,
                old={"status": status},
                # Its origin too (an id): an import never brings an erased memory back.
                new={
                    "erased": mem_id,
                    "origin": origin or mem_id,
                    "by": chosen.by,
                    **chosen.recorded,
                },
                reason=reason,
            )
            for _, mem_id, origin, _, _, status in rows
        ]
    )
    if pks:
        transaction.on_commit(lambda: _queue_purge(workspace_id))
    return result


def _queue_purge(workspace_id: int) -> None:
    from django_q.tasks import async_task

    async_task("memories.tasks.purge_erased", workspace_id)
