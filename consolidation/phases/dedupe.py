"""Dedupe: exact duplicates, then near-duplicates, merged reversibly."""

from __future__ import annotations

from django.conf import settings
from django.db import connection

from consolidation import duplicates
from consolidation.phases.context import BATCH, PhaseContext, newest_id, written_since
from memories.models import (
    Link,
    Memory,
)
from memories.selectors.neighbours import nearest_pairs
from memories.services import memory_merge

#: A memory's text as dedupe compares it: lower case, runs of white space as one space, no
#: white space or closing punctuation at either end.
NORMALIZED_TEXT_SQL = (
    "regexp_replace(regexp_replace(lower(btrim(text)), '[[:space:]]+', ' ', 'g'), "
    "'[[:space:].!?;,]+$', '')"
)


#: A memory whose merge a curator undid (``memory_restore``) is merged again by no rule.
NOT_RESTORED_SQL = """NOT EXISTS (
    SELECT 1 FROM memories_link undone
    WHERE undone.workspace_id = %(workspace)s AND undone.source_id = {table}.id
        AND undone.kind = 'same_as'
        AND undone.removed_at IS NOT NULL
)"""


def run(context: PhaseContext) -> dict[str, int]:
    """Exact duplicates, then near-duplicates, among the active memories of each scope, for
    the memories written since the watermark (all of them the first time). Each merge keeps the
    more significant, then the older, and merges the other into it
    (``memories.services.merge``: kept as ``merged``, with a ``same_as`` link and provenance on
    both, undone by ``memory_restore``)."""
    through = context.watermark("dedupe")
    high = newest_id(context.workspace_id)
    counts = _exact(context, through, high)
    if settings.MM_DEDUPE_NEAR:
        counts.update(_near(context, through, high))
    context.advance("dedupe", high)
    return {**counts, "read_after_id": through}


def _exact(context: PhaseContext, through: int, high: int) -> dict[str, int]:
    """Active memories of one scope whose normalised texts and metadata are the same, whatever
    their source (metadata that differ may be two customers' or two users' same words, and a
    merge would lose one's): each group touched by a memory written since the watermark keeps
    one survivor."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH keyed AS (
                SELECT id, scope_id, significance, created_at,
                    md5({NORMALIZED_TEXT_SQL} || COALESCE(metadata::text, '')) AS key
                FROM memories_memory
                WHERE workspace_id = %(workspace)s AND status = 'active' AND id <= %(high)s
                    AND {NOT_RESTORED_SQL.format(table="memories_memory")}
            ),
            touched AS (SELECT DISTINCT scope_id, key FROM keyed WHERE id > %(through)s)
            SELECT array_agg(k.id ORDER BY k.significance DESC, k.created_at, k.id)
            FROM keyed k JOIN touched t ON t.scope_id = k.scope_id AND t.key = k.key
            GROUP BY k.scope_id, k.key
            HAVING count(*) > 1
            ORDER BY min(k.id)
            """,
            {"workspace": context.workspace_id, "through": through, "high": high},
        )
        groups = [ids for (ids,) in cursor.fetchall()]
    merged = 0
    for number, ids in enumerate(groups, 1):
        if not context.run.dry_run:
            memories = Memory.objects.in_bulk(ids)
            survivor = memories[ids[0]]
            for duplicate_id in ids[1:]:
                memory_merge(
                    survivor=survivor,
                    duplicate=memories[duplicate_id],
                    rule="exact duplicate",
                    evidence={"normalized": "lower case, white space, closing punctuation"},
                )
        merged += len(ids) - 1
        context.step("dedupe", number, len(groups))
    return {"groups": len(groups), "merged": merged}


def _near(context: PhaseContext, through: int, high: int) -> dict[str, int]:
    """Pairs of a new memory and one of its ``MM_DEDUPE_NEIGHBOURS`` nearest active memories of
    the same scope that ``consolidation.duplicates.judge`` calls near-duplicates, most similar
    first; a memory merged by an earlier pair is out of the later ones."""
    ids = list(
        written_since(context, through, high, embedding__isnull=False).values_list("id", flat=True)
    )
    pairs: dict[tuple[int, int], float] = {}
    for start in range(0, len(ids), BATCH):
        pairs.update(_neighbours(context.workspace_id, ids[start : start + BATCH]))
        context.step("dedupe (near)", min(start + BATCH, len(ids)), len(ids))
    members = {i for pair in pairs for i in pair}
    workspace_id = context.workspace_id
    rows = Memory.objects.filter(workspace_id=workspace_id, pk__in=members).values_list(
        "pk", "text", "metadata"
    )
    texts = {pk: text for pk, text, _ in rows}
    metadata = {pk: value for pk, _, value in rows}
    entities: dict[int, set[str]] = {pk: set() for pk in members}
    for source, name in Link.objects.filter(
        workspace_id=workspace_id,
        source_id__in=members,
        target_entity__isnull=False,
        removed_at__isnull=True,
    ).values_list("source_id", "target_entity__name"):
        entities[source].add(name)
    refused: dict[str, int] = {}
    found = []
    for (low, high_id), similarity in pairs.items():
        if metadata[low] != metadata[high_id]:
            refused["metadata"] = refused.get("metadata", 0) + 1
            continue  # a merge would lose one's metadata (another customer's, user's)
        verdict = duplicates.judge(
            texts[low],
            texts[high_id],
            similarity,
            min_similarity=settings.MM_DEDUPE_MIN_SIMILARITY,
            min_overlap=settings.MM_DEDUPE_MIN_OVERLAP,
            entities=(entities[low], entities[high_id]),
        )
        for guard in verdict.refused:
            refused[guard] = refused.get(guard, 0) + 1
        if verdict.duplicate:
            found.append((low, high_id, verdict))
    found.sort(key=lambda item: -item[2].similarity)
    gone: set[int] = set()
    merged = 0
    for low, high_id, verdict in found:
        if low in gone or high_id in gone:
            continue
        first, second = Memory.objects.in_bulk([low, high_id]).values()
        survivor, duplicate = sorted(
            (first, second), key=lambda m: (-m.significance, m.created_at, m.pk)
        )
        if not context.run.dry_run:
            memory_merge(
                survivor=survivor,
                duplicate=duplicate,
                rule="near duplicate",
                evidence=verdict.evidence(),
            )
        gone.add(duplicate.pk)
        merged += 1
    return {
        "near_examined": len(pairs),
        "near_merged": merged,
        **{f"near_refused_{guard}": count for guard, count in sorted(refused.items())},
    }


def _neighbours(workspace_id: int, batch: list[int]) -> dict[tuple[int, int], float]:
    """(lower id, higher id) -> cosine similarity, for each of the batch's memories and its
    nearest active memories of the same scope at or above the similarity threshold."""
    rows = nearest_pairs(
        workspace_id,
        batch,
        neighbours=settings.MM_DEDUPE_NEIGHBOURS,
        min_similarity=settings.MM_DEDUPE_MIN_SIMILARITY,
        same_scope=True,
        neighbour_where=NOT_RESTORED_SQL.format(table="n"),
        pair_where=NOT_RESTORED_SQL.format(table="m"),
    )
    return {(min(a, b), max(a, b)): float(s) for a, b, s in rows}
