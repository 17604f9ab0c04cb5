"""Compile: each agent's compiled memory file kept."""

from __future__ import annotations

from consolidation.phases.context import PhaseContext
from consolidation.snapshots import snapshot_keep
from memories.compile import compiled_memory_file
from memories.models import (
    Agent,
)
from memories.selectors.reader import Reader


def run(context: PhaseContext) -> dict[str, int]:
    """Each agent's compiled memory file (default options) compiled and kept
    (``consolidation.snapshots``), for agents that load it at start; one that quotes a memory
    erased meanwhile is not kept."""
    agents = list(Agent.objects.filter(workspace_id=context.workspace_id).order_by("id"))
    tokens = 0
    for number, agent in enumerate(agents, 1):
        compiled = compiled_memory_file(Reader.of_agent(agent))
        tokens += compiled.tokens
        if not context.run.dry_run:
            snapshot_keep(agent=agent, compiled=compiled, run=context.run)
        context.step("compile", number, len(agents))
    return {"agents": len(agents), "tokens": tokens}
