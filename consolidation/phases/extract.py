"""Extract: standalone facts a model finds in episodic memories."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from consolidation import facts
from consolidation.phases.context import EPISODIC, PhaseContext, newest_id, written_since
from memories.embeddings import current_model_name, get_embedder
from memories.models import (
    Link,
    Memory,
)
from memories.services.provenance import Action, record
from memories.services.remember import content_hash


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
    """The fact as a memory with its ``derived_from`` links; False when its scope already has
    it (a chunk done again after a stop)."""
    scope_id = sources[0].scope_id
    digest = content_hash(scope_id=scope_id, source=EXTRACTION_SOURCE, text=fact.text)
    if Memory.objects.filter(scope_id=scope_id, content_hash=digest).exists():
        return False
    vector = get_embedder().embed([fact.text])[0]
    memory = Memory.objects.create(
        workspace_id=context.workspace_id,
        scope_id=scope_id,
        text=fact.text,
        category=Memory.Category.FACT,
        memory_type=Memory.MemoryType.SEMANTIC,
        source=EXTRACTION_SOURCE,
        created_at=max(m.created_at for m in sources),
        embedding=vector,
        embedding_model=current_model_name(),
        content_hash=digest,
        metadata={
            "extracted_from": [m.mem_id for m in sources],
            "model": settings.MM_EXTRACTION_MODEL,
        },
        **{f"{d}_score": v for d, v in fact.scores.items()},
        **{f"{d}_origin": Memory.ScoreOrigin.EXTRACTION for d in fact.scores},
    )
    Link.objects.bulk_create(
        [
            Link(
                workspace_id=context.workspace_id,
                source=memory,
                target_memory=source,
                kind="derived_from",
                origin=Link.Origin.CONSOLIDATION,
                evidence={"model": settings.MM_EXTRACTION_MODEL},
            )
            for source in sources
        ]
    )
    record(
        memory,
        Action.REMEMBER,
        new={"text": fact.text, "extracted_from": [m.mem_id for m in sources]},
        reason=f"consolidation: extracted by {settings.MM_EXTRACTION_MODEL}",
    )
    return True
