"""Extract: standalone facts a model finds in episodic memories."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from consolidation import facts
from consolidation.phases.context import EPISODIC, PhaseContext, newest_id, written_since
from memories.models import (
    Memory,
)
from memories.services.derived import derived_fact_store


def run(context: PhaseContext) -> dict[str, int]:
    """Standalone facts a model finds in the episodic memories written since the watermark
    (``consolidation.facts``; only when ``MM_EXTRACTION_URL`` is set), a chunk of memories at a
    time, each chunk's facts, links and watermark in one transaction: a model that fails or
    times out fails the phase with its error and leaves the chunks before it stored."""
    through = context.watermark("extract")
    high = newest_id(context.workspace_id)
    rows = list(
        written_since(context, through, high, EPISODIC)
        .exclude(source=EXTRACTION_SOURCE)
        .defer("embedding", "episode_embedding")
    )
    counts = {"memories": len(rows), "facts": 0, "existing": 0, "refused": 0}
    for start in range(0, len(rows), facts.BATCH):
        chunk = rows[start : start + facts.BATCH]
        by_scope: dict[int, list[Memory]] = {}
        for memory in chunk:
            by_scope.setdefault(memory.scope_id, []).append(memory)
        found: list[tuple[facts.Fact, list[Memory]]] = []
        for members in by_scope.values():
            answer = facts.ask([(m.mem_id, m.text) for m in members])
            counts["refused"] += answer.refused
            by_id = {m.mem_id: m for m in members}
            found += [(fact, [by_id[i] for i in fact.sources]) for fact in answer.facts]
        with transaction.atomic():
            for fact, sources in found:
                if context.run.dry_run or _store_fact(context, fact, sources):
                    counts["facts"] += 1
                else:
                    counts["existing"] += 1
            context.advance("extract", chunk[-1].pk)
        context.step("extract", min(start + facts.BATCH, len(rows)), len(rows))
    context.advance("extract", high)
    return {**counts, "read_after_id": through}


#: The source of a memory a model extracted.
EXTRACTION_SOURCE = "extraction"


def _store_fact(context: PhaseContext, fact: facts.Fact, sources: list[Memory]) -> bool:
    """The fact as a memory with its ``derived_from`` links (``derived_fact_store``); False
    when its scope already has it (a chunk done again after a stop)."""
    stored = derived_fact_store(
        text=fact.text,
        sources=sources,
        source=EXTRACTION_SOURCE,
        model=settings.MM_EXTRACTION_MODEL,
        scores=fact.scores,
        origin=Memory.ScoreOrigin.EXTRACTION,
        reason=f"consolidation: extracted by {settings.MM_EXTRACTION_MODEL}",
        metadata={"model": settings.MM_EXTRACTION_MODEL},
    )
    return stored is not None
