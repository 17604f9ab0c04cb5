"""What an erasure takes out besides the memories' own rows (``memories.services.erase``): their
words in the episodes of the memories after them, the entities only they named, the reasons of
other events that name them, the admin's log lines about them, the records of writers only they
had. Every copy is found by identity, never by looking for the words."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models import Min, Q

from memories.embeddings import get_embedder
from memories.models import Entity, Link, Memory, ProvenanceEvent, SourceRecord
from memories.services.provenance import Action


def episodes_rewrite(workspace_id: int, pks: list[int], texts: dict[int, str]) -> int:
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
            lines = without_run(lines, text.split("\n"))
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


def without_run(lines: list[str], run: list[str]) -> list[str]:
    """``lines`` without any consecutive lines equal to ``run`` (a text's own lines)."""
    kept, i, size = [], 0, len(run)
    while i < len(lines):
        if lines[i : i + size] == run:
            i += size
        else:
            kept.append(lines[i])
            i += 1
    return kept


def orphans_remove(entity_pks: set[int], chosen: set[int] = frozenset()) -> int:
    """The entities the erased memories named that nothing names any more, with their sources'
    records. Declared ones, part of the team's gazetteer, stay, unless they are ``chosen``: the
    entity an erasure was asked for (a customer's deletion request takes its name too)."""
    entity_pks = set(entity_pks) | set(chosen)
    if not entity_pks:
        return 0
    still = Link.objects.filter(target_entity_id__in=entity_pks).values_list(
        "target_entity_id", flat=True
    )
    attributed = Memory.objects.filter(attributed_to_id__in=entity_pks).values_list(
        "attributed_to_id", flat=True
    )
    merged = (
        Entity.objects.filter(merged_into_id__in=entity_pks)
        .exclude(pk__in=chosen)
        .values_list("merged_into_id", flat=True)
    )
    orphans = Entity.objects.filter(
        Q(declared=False) | Q(pk__in=chosen), pk__in=entity_pks
    ).exclude(pk__in={*still, *attributed, *merged})
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


def history_redact(workspace_id: int, mem_ids: list[str]) -> int:
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


def sources_remove(workspace_id: int, sources: set[str]) -> None:
    """The records of the writers (``Memory.source``) the erased memories had that no memory
    left has (their names go with their last memory)."""
    left = Memory.objects.filter(workspace_id=workspace_id, source__in=sources).values("source")
    SourceRecord.objects.filter(
        workspace_id=workspace_id, kind=SourceRecord.Kind.WRITER, key__in=sources
    ).exclude(key__in=left).delete()
