"""Rescore: the bundled scorer's empty dimensions filled."""

from __future__ import annotations

import numpy as np
from django.db.models import Q

from consolidation.phases.context import BATCH, PhaseContext
from memories.embeddings import current_model_name
from memories.models import (
    STARE_DIMENSIONS,
    Memory,
)
from memories.scorer import auto_scores, bundled_scorer, skipped_categories, skipped_dimensions
from memories.services.consolidated import memories_rescore


def run(context: PhaseContext) -> dict[str, int]:
    """The bundled scorer's dimensions filled where they are empty (a memory written while the
    scorer was skipped, or before it existed), for memories embedded by the model the scorer
    was fitted on; a score the writer gave is never touched (origin ``scorer``; stored by
    ``memories.services.consolidated.memories_rescore``, a batch a transaction)."""
    dims = [d for d in STARE_DIMENSIONS if d not in skipped_dimensions()]
    model = bundled_scorer().embedding_model
    if not dims or current_model_name() != model:
        return {"memories": 0, "scored": 0}
    empty = Q()
    for dim in dims:
        empty |= Q(**{f"{dim}_score__isnull": True})
    ids = list(
        Memory.objects.filter(
            empty,
            workspace_id=context.workspace_id,
            status=Memory.Status.ACTIVE,
            embedding_model=model,
        )
        .exclude(category__in=skipped_categories())
        .order_by("id")
        .values_list("id", flat=True)
    )
    scored = 0
    for start in range(0, len(ids), BATCH):
        memories = list(
            Memory.objects.filter(
                workspace_id=context.workspace_id, pk__in=ids[start : start + BATCH]
            ).order_by("id")
        )
        given = [{d for d in dims if getattr(m, f"{d}_score") is not None} for m in memories]
        scores = auto_scores(
            [m.text for m in memories],
            np.array([m.embedding for m in memories], dtype=np.float32),
            [m.category for m in memories],
            given,
        )
        if not context.run.dry_run:
            memories_rescore(memories=memories, scores=scores)
        scored += sum(1 for found in scores if found)
        context.step("rescore", min(start + BATCH, len(ids)), len(ids))
    return {"memories": len(ids), "scored": scored}
