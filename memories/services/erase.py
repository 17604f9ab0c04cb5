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

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models import Min, Q

from memories.embeddings import get_embedder
from memories.errors import Errors, NotFound, ValidationFailed
from memories.models import Agent, Entity, Link, Memory, ProvenanceEvent, SourceRecord, Workspace
from memories.selectors.memories import memory_get
from memories.selectors.permissions import require_role
from memories.selectors.reader import Reader
from memories.services.provenance import Action, provenance_event, record_many
from memories.signals import erasing

#: How memories are chosen for an erasure (the tombstone says which).
ERASE_BY = ("memory", "source", "agent", "session")
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
    return _erase(
        Memory.objects.filter(pk=memory.pk), memory.workspace_id, "memory", reason, agent=agent
    )


def erase_selection(workspace: Workspace, by: str, value: str) -> Any:
    """The memories of ``workspace`` that ``by`` (one of ``ERASE_BY``) and ``value`` choose;
    ValidationFailed naming the field for a bad one."""
    errors = Errors()
    if by not in ERASE_BY:
        errors.add("by", f"{by!r} is not one of: {', '.join(ERASE_BY)}.")
    if not (value or "").strip():
        errors.add("value", f"is required: the {by} whose memories to erase.")
    errors.raise_if_any()
    memories = Memory.objects.filter(workspace=workspace)
    if by == "memory":
        return memories.filter(mem_id=value)
    if by == "source":
        return memories.filter(source=value)
    if by == "session":
        return memories.filter(session=value)
    writer = Agent.objects.filter(workspace=workspace, name=value).first()
    if writer is None:
        raise ValidationFailed.single(
            "value", f"no agent {value!r} in workspace {workspace.slug!r}."
        )
    written = ProvenanceEvent.objects.filter(action=Action.REMEMBER, agent=writer).values("memory")
    return memories.filter(Q(pk__in=written) | Q(scope_id=writer.private_scope_id))


@transaction.atomic
def memories_erase_by_user(
    *, user: Any, workspace: Workspace, by: str, value: str, reason: str, dry_run: bool = False
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
    value: str,
    reason: str,
    dry_run: bool = False,
    user: Any = None,
) -> Erasure:
    """Erase the memories of a source, an agent (those it wrote, and its private scope), a
    session or one memory (``erase_selection``); an operator's (``meaning-memory erase``) or,
    through ``memories_erase_by_user``, an admin's (``user``: ``require_role``). ``dry_run``
    lists them and changes nothing."""
    if user is not None:
        require_role(user, workspace, "erase")
    reason = reason if dry_run else _reason(reason)
    chosen = erase_selection(workspace, by, value)
    if by == "memory" and not chosen.exists():
        raise NotFound(f"no memory {value!r}")
    if dry_run:
        mem_ids = list(chosen.order_by("id").values_list("mem_id", flat=True))
        return Erasure(workspace.pk, by, mem_ids, dry_run=True)
    return _erase(chosen, workspace.pk, by, reason, user=user, value=value)


def _erase(
    chosen: Any,
    workspace_id: int,
    by: str,
    reason: str,
    *,
    agent: Agent | None = None,
    user: Any = None,
    value: str = "",
) -> Erasure:
    rows = list(
        chosen.filter(workspace_id=workspace_id)
        .select_for_update(of=("self",))
        .order_by("id")
        .values_list("pk", "mem_id", "imported_from", "source", "text", "status")[: ERASE_MAX + 1]
    )
    if len(rows) > ERASE_MAX:
        raise ValidationFailed.single(
            "value", f"chooses more than {ERASE_MAX:,} memories: erase them in parts."
        )
    result = Erasure(workspace_id, by, [row[1] for row in rows])
    if not rows:
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
    result.episodes_rewritten = _rewrite_episodes(workspace_id, pks, texts)
    erasing.send(sender=Memory, workspace_id=workspace_id, memory_pks=pks)
    forget_log_entries(Memory, pks)
    Memory.objects.filter(pk__in=pks).delete()
    result.entities_removed = _remove_orphans(named)
    _redact_history(workspace_id, result.mem_ids)
    _remove_sources(workspace_id, {row[3] for row in rows})
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
                    "by": by,
                    **({by: value} if value else {}),
                },
                reason=reason,
            )
            for _, mem_id, origin, _, _, status in rows
        ]
    )
    transaction.on_commit(lambda: _queue_purge(workspace_id))
    return result


def _rewrite_episodes(workspace_id: int, pks: list[int], texts: dict[int, str]) -> int:
    """Take the erased texts out of the episodes of the memories that follow them, and embed
    those episodes again (or drop their vector when nothing is left). The memories that may
    hold one are chosen by what an episode is (``memories.services.episodes``), not by their
    words: those of the same scope and session written at or after it; in each, the runs of
    lines that are an erased text, as it was joined in, are taken out."""
    sessions = (
        Memory.objects.filter(pk__in=pks)
        .exclude(session="")
        .values("scope_id", "session")
        .annotate(first=Min("created_at"))
    )
    after = Q(pk__in=[])
    for row in sessions:
        after |= Q(scope_id=row["scope_id"], session=row["session"], created_at__gte=row["first"])
    followers = list(
        Memory.objects.filter(after, workspace_id=workspace_id)
        .exclude(episode_text="")
        .exclude(pk__in=pks)
        .select_for_update(of=("self",))
    )
    changed = []
    for memory in followers:
        lines = memory.episode_text.split("\n")
        for text in texts.values():
            lines = _without_run(lines, text.split("\n"))
        episode = "\n".join(lines)
        if episode != memory.episode_text:
            memory.episode_text = episode
            changed.append(memory)
    if not changed:
        return 0
    with_episode = [m for m in changed if m.episode_text]
    vectors = get_embedder().embed([m.episode_text + "\n" + m.text for m in with_episode])
    for memory in changed:
        memory.episode_embedding = None
    for memory, vector in zip(with_episode, vectors, strict=True):
        memory.episode_embedding = vector
    Memory.objects.bulk_update(changed, ["episode_text", "episode_embedding"], batch_size=500)
    return len(changed)


def _without_run(lines: list[str], run: list[str]) -> list[str]:
    """``lines`` without any consecutive lines equal to ``run`` (a text's own lines)."""
    kept, i, size = [], 0, len(run)
    while i < len(lines):
        if lines[i : i + size] == run:
            i += size
        else:
            kept.append(lines[i])
            i += 1
    return kept


def _remove_orphans(entity_pks: set[int]) -> int:
    """The entities the erased memories named that nothing names any more (declared ones, part
    of the team's gazetteer, stay), with their sources' records."""
    if not entity_pks:
        return 0
    still = Link.objects.filter(target_entity_id__in=entity_pks).values_list(
        "target_entity_id", flat=True
    )
    attributed = Memory.objects.filter(attributed_to_id__in=entity_pks).values_list(
        "attributed_to_id", flat=True
    )
    merged = Entity.objects.filter(merged_into_id__in=entity_pks).values_list(
        "merged_into_id", flat=True
    )
    orphans = Entity.objects.filter(pk__in=entity_pks, declared=False).exclude(
        pk__in={*still, *attributed, *merged}
    )
    found = list(orphans.values_list("pk", "entity_id"))
    ids = [entity_id for _, entity_id in found]
    SourceRecord.objects.filter(Q(key__in=ids) | Q(topic__in=ids)).delete()
    forget_log_entries(Entity, [pk for pk, _ in found])
    deleted, _ = orphans.delete()
    return len(ids) if deleted else 0


def forget_log_entries(model: Any, pks: Any) -> None:
    """The admin's log lines about these rows: each names its row as it read then (a memory's
    words, an entity's name, a thread's title)."""
    LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(model), object_id__in=[str(p) for p in pks]
    ).delete()


#: The reason of another memory's event that named an erased one, in place of its words.
REDACTED_REASON = "(removed: it named a memory erased since)"


def _redact_history(workspace_id: int, mem_ids: list[str]) -> int:
    """The events of the memories and entities left that name an erased memory (its mem_id
    is one of their values, at any depth: superseded by it, merged with it, diverging from it,
    linked to it) keep their values, ids only, but lose their reason, which may quote it (a
    supersession's rule names both values; a curator's words). Tombstones are left as they
    are: their reason is the erasure's own."""
    table = ProvenanceEvent._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {table} e SET reason = %(redacted)s
            WHERE e.workspace_id = %(workspace)s AND e.action <> %(erase)s
              AND e.reason NOT IN ('', %(redacted)s)
              AND EXISTS (
                SELECT 1 FROM jsonb_path_query(e.old_values || e.new_values, 'strict $.**') v
                WHERE jsonb_typeof(v) = 'string' AND v #>> '{{}}' = ANY(%(ids)s)
              )
            """,
            {
                "redacted": REDACTED_REASON,
                "workspace": workspace_id,
                "erase": Action.ERASE,
                "ids": mem_ids,
            },
        )
        return cursor.rowcount


def _remove_sources(workspace_id: int, sources: set[str]) -> None:
    """The records of the writers (``Memory.source``) the erased memories had that no memory
    left has (their names go with their last memory)."""
    left = Memory.objects.filter(workspace_id=workspace_id, source__in=sources).values("source")
    SourceRecord.objects.filter(
        workspace_id=workspace_id, kind=SourceRecord.Kind.WRITER, key__in=sources
    ).exclude(key__in=left).delete()


def _queue_purge(workspace_id: int) -> None:
    from django_q.tasks import async_task

    async_task("memories.tasks.purge_erased", workspace_id)
