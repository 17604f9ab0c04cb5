"""Consolidation as an MCP tool (served with the memory tools: ``meaning_memory.mcp``)."""

from __future__ import annotations

from typing import Any

from django_q.tasks import async_task
from mcp.types import CallToolResult, ToolAnnotations

from consolidation.presenters import run_to_dict, saga_text, saga_to_dict
from consolidation.saga import saga_recall
from consolidation.serializers import ConsolidateInput, SagaInput
from consolidation.services import consolidation_start
from consolidation.tasks import RUN
from memories.mcp import Tool, tool_result
from memories.models import Agent
from memories.selectors.reader import Reader
from memories.serializers import parse
from memories.shapes import json_schema


def consolidate(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    values = parse(ConsolidateInput, arguments)
    run = consolidation_start(
        workspace=agent.workspace,
        trigger="api",
        phases=values.get("phases"),
        dry_run=values.get("dry_run", False),
        agent=agent,
    )
    async_task(RUN, run.pk)
    return tool_result(
        f"consolidation run {run.run_id} queued: {', '.join(run.phases)}"
        + (" (dry run)" if run.dry_run else ""),
        run_to_dict(run),
    )


def saga(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    recalled = saga_recall(Reader.of_agent(agent), **parse(SagaInput, arguments))
    return tool_result(saga_text(recalled), saga_to_dict(recalled))


TOOLS = (
    Tool(
        "mm_consolidate",
        json_schema(ConsolidateInput),
        "Start a consolidation run of your workspace (a worker runs it): duplicates merged into "
        "one memory, never lost (kept as merged, linked, undoable). Returns the queued run. "
        "dry_run reports what each phase would do and writes nothing. An error names the run "
        "in progress when there is one.",
        ToolAnnotations(read_only_hint=False, destructive_hint=False),
        consolidate,
    ),
    Tool(
        "mm_saga",
        json_schema(SagaInput),
        "Saga recall (preview, not yet reliable): a whole story across sessions. Give a query "
        "(the threads its best hits belong to) or a thread_id. Returns the memories in time "
        "order and a summary made of their own sentences, each with its mem_id. An error says "
        "so while it is switched off (MM_SAGA).",
        ToolAnnotations(read_only_hint=True, destructive_hint=False),
        saga,
    ),
)
