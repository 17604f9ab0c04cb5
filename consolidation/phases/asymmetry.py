"""Asymmetry: sources' records counted again, A scores recomputed."""

from __future__ import annotations

from consolidation.phases.context import PhaseContext
from memories.services.asymmetry import asymmetry_refresh


def run(context: PhaseContext) -> dict[str, int]:
    """Sources' records counted again from the memories' histories and kept, and the engine's
    A scores recomputed from them (``memories.services.asymmetry``)."""
    result = asymmetry_refresh(
        workspace_id=context.workspace_id,
        dry_run=context.run.dry_run,
        progress=lambda done, total: context.step("asymmetry", done, total),
    )
    return {"sources": result.sources, "memories": result.memories, "rescored": result.rescored}
