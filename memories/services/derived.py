"""A fact the engine derived from memories (consolidation's extraction phase): stored as a
memory of the sources' scope, with a ``derived_from`` link to each source and its provenance,
once per scope (the same fact found again is the memory stored already)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memories.embeddings import current_model_name, get_embedder
from memories.models import Link, Memory
from memories.services.placing import content_hash
from memories.services.provenance import Action, record


def derived_fact_store(
    *,
    text: str,
    sources: list[Memory],
    source: str,
    model: str,
    scores: dict[str, float],
    origin: str,
    reason: str,
    metadata: dict[str, Any] | None = None,
    created_at: datetime | None = None,
) -> Memory | None:
    """The fact as a semantic memory in the scope of ``sources`` (all of one scope), with the
    scores the model gave (``origin`` each) and a ``derived_from`` link to each source; None
    when that scope has it already (a chunk done again after a stop). Run it inside the
    caller's transaction."""
    first = sources[0]
    digest = content_hash(scope_id=first.scope_id, source=source, text=text)
    if Memory.objects.filter(scope_id=first.scope_id, content_hash=digest).exists():
        return None
    memory = Memory.objects.create(
        workspace_id=first.workspace_id,
        scope_id=first.scope_id,
        text=text,
        category=Memory.Category.FACT,
        memory_type=Memory.MemoryType.SEMANTIC,
        source=source,
        created_at=created_at or max(m.created_at for m in sources),
        embedding=get_embedder().embed([text])[0],
        embedding_model=current_model_name(),
        content_hash=digest,
        metadata={"extracted_from": [m.mem_id for m in sources], **(metadata or {})},
        **{f"{d}_score": v for d, v in scores.items()},
        **{f"{d}_origin": origin for d in scores},
    )
    Link.objects.bulk_create(
        [
            Link(
                workspace_id=first.workspace_id,
                source=memory,
                target_memory=other,
                kind="derived_from",
                origin=Link.Origin.CONSOLIDATION,
                evidence={"model": model},
            )
            for other in sources
        ]
    )
    record(
        memory,
        Action.REMEMBER,
        new={"text": text, "extracted_from": [m.mem_id for m in sources]},
        reason=reason,
    )
    return memory
