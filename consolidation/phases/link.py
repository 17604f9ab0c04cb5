"""Link: related memories linked, entities backfilled."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from consolidation.phases.context import BATCH, PhaseContext, newest_id, written_since
from memories.models import (
    Memory,
)
from memories.selectors.neighbours import SHARE_AN_ENTITY_SQL, nearest_pairs
from memories.services import link_backfill
from memories.services.consolidated import links_relate
from memories.services.relations.typing import retype_by_mentions


def run(context: PhaseContext) -> dict[str, int]:
    """Entities and links for memories that have none yet (``memories.services.link_backfill``,
    when ``MM_ENTITY_EXTRACTION`` is on); the recogniser's type of each entity those written
    since the watermark mention counted again (``retype_by_mentions``); then ``relates_to``
    links from each memory written since the watermark to its nearest active memories of the
    same scope (at most ``MM_RELATES_NEIGHBOURS``) whose cosine similarity is at least
    ``MM_RELATES_MIN_SIMILARITY`` and that are in its session or share an entity with it; never
    between two memories already linked either way, nor where a curator removed such a link
    (stored by ``memories.services.consolidated.links_relate``)."""
    counts = {"extracted": 0, "entity_links": 0}
    if settings.MM_ENTITY_EXTRACTION:
        pending = Memory.objects.filter(
            workspace_id=context.workspace_id, relations_version__isnull=True
        )
        if context.run.dry_run:
            counts["extracted"] = pending.count()
        else:
            done = link_backfill(
                workspace=context.run.workspace,
                progress=lambda p: context.step("link", p.memories, p.memories + p.remaining),
            )
            counts = {"extracted": done.memories, "entity_links": done.links}
    through = context.watermark("link")
    counts["retyped"] = retype_by_mentions(
        context.workspace_id, through, dry_run=context.run.dry_run
    )
    high = newest_id(context.workspace_id)
    ids = list(
        written_since(context, through, high, embedding__isnull=False).values_list("id", flat=True)
    )
    made = 0
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        pairs = _related(context.workspace_id, batch)
        if not context.run.dry_run:
            with transaction.atomic():
                links_relate(workspace_id=context.workspace_id, pairs=pairs)
                context.advance("link", batch[-1])
        made += len(pairs)
        context.step("link", min(start + BATCH, len(ids)), len(ids))
    context.advance("link", high)
    return {**counts, "memories": len(ids), "relates_to": made, "read_after_id": through}


def _related(workspace_id: int, batch: list[int]) -> dict[tuple[int, int], tuple[float, str]]:
    """(newer id, older id) -> (similarity, "session" or "entities") for the batch's memories
    and their neighbours that ``link`` relates."""
    rows = nearest_pairs(
        workspace_id,
        batch,
        neighbours=settings.MM_RELATES_NEIGHBOURS,
        min_similarity=settings.MM_RELATES_MIN_SIMILARITY,
        same_scope=True,
        columns="CASE WHEN m.session <> '' AND o.session = m.session THEN 'session' "
        "ELSE 'entities' END",
        pair_where=f"""(
                (m.session <> '' AND o.session = m.session)
                OR {SHARE_AN_ENTITY_SQL}
            )
            AND NOT EXISTS (
                SELECT 1 FROM memories_link c
                WHERE c.workspace_id = %(workspace)s AND (
                    (c.source_id = m.id AND c.target_memory_id = o.id)
                    OR (c.source_id = o.id AND c.target_memory_id = m.id)
                )
            )""",
    )
    return {(max(a, b), min(a, b)): (float(similarity), why) for a, b, similarity, why in rows}
