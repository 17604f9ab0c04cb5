"""The MCP server's tools: the memory tools, consolidation's and the readiness report's, put
together here (the project), so that no app imports another's adapters."""

from __future__ import annotations

from consolidation.mcp import TOOLS as CONSOLIDATION_TOOLS
from memories.mcp import TOOLS as MEMORY_TOOLS
from memories.mcp import Tool
from readiness.mcp import TOOLS as READINESS_TOOLS


def engine_tools() -> tuple[Tool, ...]:
    return (*MEMORY_TOOLS, *CONSOLIDATION_TOOLS, *READINESS_TOOLS)
