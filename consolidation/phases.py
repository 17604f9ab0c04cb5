"""The phases of a consolidation run, each a function of the run's context that returns its
counts. Each reads the memories written since its watermark (all of them the first time), is
idempotent (run twice, the second finds nothing to do), and in a dry run writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection

from consolidation.models import ConsolidationRun, PhaseWatermark
from memories.models import Memory
from memories.services import memory_merge

#: A memory's text as dedupe compares it: lower case, runs of white space as one space, no
#: white space or closing punctuation at either end.
NORMALIZED_TEXT_SQL = (
    "regexp_replace(regexp_replace(lower(btrim(text)), '[[:space:]]+', ' ', 'g'), "
    "'[[:space:].!?;,]+$', '')"
)


@dataclass
class PhaseContext:
    run: ConsolidationRun
    #: Phase name, done, total: after each step of a phase.
    progress: Callable[[str, int, int], None] | None = None

    @property
    def workspace_id(self) -> int:
        return self.run.workspace_id

    def watermark(self, phase: str) -> int:
        mark = PhaseWatermark.objects.filter(workspace_id=self.workspace_id, phase=phase).first()
        return mark.through_id if mark is not None else 0

    def advance(self, phase: str, through_id: int) -> None:
        """Move the phase's watermark (never back; not in a dry run)."""
        if self.run.dry_run or through_id <= self.watermark(phase):
            return
        PhaseWatermark.objects.update_or_create(
            workspace_id=self.workspace_id, phase=phase, defaults={"through_id": through_id}
        )

    def step(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)


def newest_id(workspace_id: int) -> int:
    found = Memory.objects.filter(workspace_id=workspace_id).order_by("-id").first()
    return found.pk if found is not None else 0


def dedupe(context: PhaseContext) -> dict[str, int]:
    """Exact duplicates: active memories of one scope whose normalised texts are the same,
    whatever their source. Each group touched by a memory written since the watermark keeps
    one survivor (the more significant, then the older) and the others are merged into it
    (``memories.services.merge``: kept as ``merged``, with a ``same_as`` link). A memory whose
    merge was undone (``memory_restore``) stays out of every group."""
    through = context.watermark("dedupe")
    high = newest_id(context.workspace_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH keyed AS (
                SELECT id, scope_id, significance, created_at,
                    md5({NORMALIZED_TEXT_SQL}) AS key
                FROM memories_memory
                WHERE workspace_id = %(workspace)s AND status = 'active' AND id <= %(high)s
                    -- A memory whose merge a curator undid is not merged again by a rule.
                    AND NOT EXISTS (
                        SELECT 1 FROM memories_link undone
                        WHERE undone.source_id = memories_memory.id AND undone.kind = 'same_as'
                            AND undone.removed_at IS NOT NULL
                    )
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
    context.advance("dedupe", high)
    return {"groups": len(groups), "merged": merged, "read_after_id": through}


#: The phases, in the order a run takes them.
PHASES: dict[str, Callable[[PhaseContext], dict[str, int]]] = {"dedupe": dedupe}
