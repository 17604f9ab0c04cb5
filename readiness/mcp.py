"""The readiness report as an MCP tool (served with the memory tools: ``meaning_memory.mcp``)."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, ToolAnnotations

from memories.mcp import Tool, tool_result
from memories.models import Agent
from memories.serializers import NoArguments, parse
from memories.shapes import json_schema
from readiness.report import full_text, readiness_report, table


def stare_readiness(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    parse(NoArguments, arguments)
    reports = readiness_report()
    return tool_result(
        full_text(reports),
        {"capabilities": [r.to_dict() for r in reports], "table": table(reports)},
    )


TOOLS = (
    Tool(
        "mm_stare_readiness",
        json_schema(NoArguments),
        "The STARE readiness report: for each capability (by STARE dimension) how mature its "
        "code is, whether it is switched on, what evidence backs it (recorded check runs only) "
        "and the verdict; then the checks still open and what they block. Call it before "
        "relying on a dimension's scores.",
        ToolAnnotations(read_only_hint=True),
        stare_readiness,
    ),
)
