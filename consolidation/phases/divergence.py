"""Divergence: memories by different writers that disagree, flagged."""

from __future__ import annotations

from consolidation.phases.context import PhaseContext
from memories.services.divergence import divergence_run


def run(context: PhaseContext) -> dict[str, int]:
    """Divergence detection over the memories written since its last run
    (``memories.services.divergence``; only when ``MM_DIVERGENCE`` is on)."""
    result = divergence_run(
        workspace=context.run.workspace,
        dry_run=context.run.dry_run,
        progress=lambda done, total: context.step("divergence", done, total),
    )
    return {"memories": result.memories, "pairs": result.pairs, "flagged": len(result.flagged)}
