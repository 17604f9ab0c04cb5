"""The MCP server's tools: the memory tools and the readiness report's, put together here (the
project), so that neither app imports the other's adapters."""

from __future__ import annotations

from memories.mcp import TOOLS as MEMORY_TOOLS
from memories.mcp import Tool
from readiness.mcp import TOOLS as READINESS_TOOLS


def engine_tools() -> tuple[Tool, ...]:
    return (*MEMORY_TOOLS, *READINESS_TOOLS)
