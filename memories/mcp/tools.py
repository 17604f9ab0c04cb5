"""The ``mm_*`` tools: descriptions, annotations, input schemas and handlers.

The input schemas are generated from the REST API's serializers (``memories.shapes``), and each
handler parses its raw arguments with the same serializer, calls one service or selector and
presents the result as the REST API does.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from memories import services
from memories.compile import compiled_memory_file
from memories.models import Agent
from memories.operations import (
    memory_search,
    messages_remember,
    remember_command,
    remember_commands,
)
from memories.presenters import (
    bulk_results_to_dict,
    compiled_to_dict,
    divergence_to_dict,
    erasure_to_dict,
    hits_to_list,
    memory_detail,
    memory_to_dict,
    path_to_dict,
    results_table,
    stored_link_to_dict,
    traversal_to_dict,
)
from memories.reading import read_as
from memories.selectors.divergences import divergences_visible
from memories.selectors.memories import memory_list_page
from memories.selectors.paging import page_of
from memories.selectors.reader import Reader
from memories.selectors.traversal import path_between, traverse_from
from memories.serializers import (
    CompileInput,
    DivergenceListInput,
    EraseInput,
    ExplainPathInput,
    FeedbackInput,
    ForgetInput,
    LinkAddInput,
    MemIdInput,
    MemoryPageInput,
    MessagesInput,
    RememberInput,
    SearchInput,
    TraverseInput,
    parse,
)
from memories.services import link_add, memory_erase, memory_feedback, memory_forget
from memories.shapes import json_schema, object_schema

# --- Argument shapes: the REST API's, plus mem_id where the REST API takes it from the URL ------


class FeedbackArguments(MemIdInput, FeedbackInput):
    """mm_feedback's arguments."""


class ForgetArguments(MemIdInput, ForgetInput):
    """mm_forget's arguments."""


class EraseArguments(MemIdInput, EraseInput):
    """mm_erase's arguments."""


class LinkArguments(MemIdInput, LinkAddInput):
    """mm_link's arguments: the memory linked from, and the link."""


REMEMBER = json_schema(RememberInput)
SCHEMAS: dict[str, dict[str, Any]] = {
    "mm_remember": REMEMBER,
    "mm_bulk_remember": object_schema(
        {
            "memories": {
                "type": "array",
                "items": REMEMBER,
                "minItems": 1,
                "maxItems": settings.MM_BULK_MAX_ITEMS,
                "description": "The memories, each with the arguments of mm_remember.",
            }
        },
        ["memories"],
    ),
    "mm_remember_messages": json_schema(MessagesInput),
    "mm_search": json_schema(SearchInput),
    "mm_feedback": json_schema(FeedbackArguments),
    "mm_forget": json_schema(ForgetArguments),
    "mm_erase": json_schema(EraseArguments),
    "mm_compile": json_schema(CompileInput),
    "mm_link": json_schema(LinkArguments),
    "mm_traverse_relationships": json_schema(TraverseInput),
    "mm_explain_path": json_schema(ExplainPathInput),
    "mm_divergences": json_schema(DivergenceListInput),
    "mm_list": json_schema(MemoryPageInput),
}

DESCRIPTIONS = {
    "mm_remember": "Store one memory. Call it when something is worth knowing in a later run: a "
    "decision, a commitment, a preference, a fact, a procedure. Returns the stored memory with "
    "its mem_id. Sent again with the same idempotency_key, it stores nothing new and returns the "
    "memory stored under that key.",
    "mm_bulk_remember": "Store many memories at once (an import, the notes of a meeting). All "
    "are checked first: one bad item refuses the batch and nothing is stored. Items already "
    "stored come back as existing; the engine adds the scores its bundled scorer is "
    "calibrated for.",
    "mm_remember_messages": "Store a conversation in one call: its session and its messages "
    "([{role, name, content, at}]), each an episodic memory that reads '<name>: <content>', "
    "attributed to its speaker, written at its time. Each message is stored once, so send the "
    "whole conversation again, or longer, as it grows. With an extraction model configured, "
    "the consolidation run after it stores the facts found in them.",
    "mm_search": "Search the memories you may see. Call it before answering from memory. "
    "Returns a markdown table (| # | mem_id | Sig | Eligible | Category | Date | Text |) and, as "
    "structured content, each hit with the figures that explain its rank. Only memories valid "
    "now are searched unless you give as_of or currently_valid; written_from and written_until "
    "(days such as 2026-03-01, or timestamps) keep those written in that span. related_to, "
    "entity and min_r "
    "keep the memories linked to one memory, those that mention an entity, or those with at "
    "least that many connections.",
    "mm_link": "Link a memory (mem_id) to another memory you may see (to) or to an entity "
    "(entity: its id), with a type such as supports, contradicts, part_of or relates_to. "
    "Returns the link. The same link again returns the one already there.",
    "mm_traverse_relationships": "Follow links from a memory (from: its mem_id) or an entity "
    "(its id), up to depth 1-3, optionally by link_types and direction (out, in, both). Returns "
    "the memories and entities reached, nearest first, each with its path: every link's type, "
    "who or what made it, its evidence and time. For tracing where something came from, not "
    "for finding things (use mm_search). Opt-in: an error names MM_TRAVERSAL while it is off.",
    "mm_explain_path": "The shortest path between two memories, or a memory and an entity "
    "(from, to), links followed either way up to depth (1-3, default 3): each step's link type, "
    "who or what made it, its evidence and time; found false when there is none. Opt-in "
    "(MM_TRAVERSAL).",
    "mm_divergences": "Memories by different writers about the same thing that disagree, as "
    "divergence detection found them, newest first: both memories, the score, the detector "
    "that decided (rules, geometry or model), its evidence, and the state (open, resolved, "
    "dismissed; status filters). Only those between two memories you may see. Use it before "
    "relying on a fact another agent may have recorded differently. An error names "
    "MM_DIVERGENCE while detection is off.",
    "mm_list": "Browse the memories you may see without a query, newest first (ordering: "
    "significance for the most significant first), a page at a time (page, page_size), with "
    "the search's filters that need no query (category, source, perspective, entity, "
    "min_s_score …). For reading what is there; to answer a question, use mm_search.",
    "mm_feedback": "Tell the engine how a memory served you, with a reason. Returns the memory "
    "with its history.",
    "mm_forget": "Forget a memory that must not be used again (it is kept, with its history, for "
    "people to review). Give the reason.",
    "mm_erase": "Erase a memory for good: its text, vectors, links and history, and its words "
    "wherever they were copied, are removed, and cannot be brought back; only a tombstone "
    "(which memory, who, when, why) stays. For what must not be kept at all (personal data "
    "someone asked to remove, a secret written by mistake); to stop using a memory, use "
    "mm_forget. Give the reason.",
    "mm_compile": "The compiled memory file: the memories that matter most, by category, built "
    "to a token budget. Load it at the start of a run. Each line starts with one mark per STARE "
    "dimension (● score ≥ 0.6, ○ below, — none).",
}
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
DESTROYS = ToolAnnotations(read_only_hint=False, destructive_hint=True)
READS = ToolAnnotations(read_only_hint=True)

# --- Handlers: (agent, raw arguments) → result, run in a worker thread ------------------------


def tool_result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def tool_error(body: dict[str, Any]) -> CallToolResult:
    """A tool error whose text is the REST API's error body."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def remember(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    result = services.remember(agent, remember_command(arguments))
    status = "stored" if result.created else "already stored"
    return tool_result(
        f"{status}: {result.memory.mem_id}",
        memory_detail(result.memory, Reader.of_agent(agent), written_now=result.created),
    )


def bulk_remember(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    results = services.remember_many(
        agent=agent, commands=remember_commands(arguments, request=True)
    )
    data = bulk_results_to_dict(results)
    return tool_result(f"{data['stored']} stored, {data['existing']} already there", data)


def remember_messages(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    data = bulk_results_to_dict(messages_remember(agent=agent, arguments=arguments))
    return tool_result(f"{data['stored']} stored, {data['existing']} already there", data)


def search(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    reader = Reader.of_agent(agent)
    hits = read_as(agent, lambda: memory_search(reader, arguments=arguments))
    return tool_result(results_table(hits), {"results": hits_to_list(hits)})


def feedback(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    parsed = parse(FeedbackArguments, arguments)
    memory = memory_feedback(agent=agent, **parsed)
    return tool_result(
        f"{parsed['action']}: {memory.mem_id}", memory_detail(memory, Reader.of_agent(agent))
    )


def forget(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    memory = memory_forget(agent=agent, **parse(ForgetArguments, arguments))
    return tool_result(f"forgotten: {memory.mem_id}", memory_detail(memory, Reader.of_agent(agent)))


def erase(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    erasure = memory_erase(agent=agent, **parse(EraseArguments, arguments))
    return tool_result(f"erased: {', '.join(erasure.mem_ids)}", erasure_to_dict(erasure))


def link(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    result = link_add(agent=agent, **parse(LinkArguments, arguments))
    data = stored_link_to_dict(result.link)
    status = "linked" if result.created else "already linked"
    return tool_result(
        f"{status}: {data['from']} {data['type']} {data['to'] or data['entity']}", data
    )


def _node_line(node: dict[str, Any]) -> str:
    if node["kind"] == "memory":
        return f"{node['mem_id']} {node['text']}"
    return f"{node['entity_id']} {node['name']} ({node['type']})"


def traverse(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    values = parse(TraverseInput, arguments)
    start, reached = traverse_from(Reader.of_agent(agent), start=values.pop("from"), **values)
    data = traversal_to_dict(start, reached)
    lines = [f"from {_node_line(data['from'])}: {data['count']} reached"]
    for item in data["nodes"]:
        last = item["path"][-1]
        lines.append(
            f"- depth {item['depth']}: {_node_line(item['node'])} "
            f"(by {last['type']}, {last['direction']})"
        )
    return tool_result("\n".join(lines), data)


def explain_path(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    values = parse(ExplainPathInput, arguments)
    start, end, found = path_between(
        Reader.of_agent(agent), start=values.pop("from"), end=values.pop("to"), **values
    )
    data = path_to_dict(start, end, found)
    if not data["found"]:
        return tool_result("no path within reach", data)
    lines = [_node_line(data["from"])]
    for step in data["path"]:
        arrow = "→" if step["direction"] == "out" else "←"
        lines.append(f"  {arrow} {step['type']} ({step['made_by']}) {_node_line(step['to'])}")
    return tool_result("\n".join(lines), data)


def divergences(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    values = parse(DivergenceListInput, arguments)
    rows, page = page_of(
        divergences_visible(Reader.of_agent(agent), status=values.get("status") or None), values
    )
    found = [divergence_to_dict(d) for d in rows]
    lines = [
        f"{d['divergence_id']} ({d['status']}, {d['score']:.2f}, {d['detector']}): "
        + " ≠ ".join(f"{m['mem_id']} {m['text'][:80]!r}" for m in d["memories"])
        for d in found
    ]
    return tool_result("\n".join(lines) or "no divergences", {**page, "results": found})


def list_memories(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    values = parse(MemoryPageInput, arguments)
    reader = Reader.of_agent(agent)

    def listed() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        rows, page = memory_list_page(reader, values, timezone.now())
        return page, [memory_to_dict(m) for m in rows]

    page, found = read_as(agent, listed)
    lines = [f"{m['mem_id']} ({m['category']}, {m['significance']:.2f}): {m['text'][:100]}"
             for m in found]  # fmt: skip
    return tool_result("\n".join(lines) or "no memories", {**page, "results": found})


def compile_file(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    values = parse(CompileInput, arguments)
    reader = Reader.of_agent(agent)
    compiled = read_as(agent, lambda: compiled_memory_file(reader, **values))
    return tool_result(compiled.markdown, compiled_to_dict(compiled))


@dataclass(frozen=True)
class Tool:
    """One MCP tool: what it is called, what it takes (a JSON Schema generated from its input
    shape), what it says of itself, and its handler ``(agent, raw arguments) → result``, run
    in a worker thread; an engine error it raises becomes a tool error."""

    name: str
    schema: dict[str, Any]
    description: str
    annotations: ToolAnnotations
    handler: Callable[[Agent, dict[str, Any]], CallToolResult]


#: The memory tools. The server is given these and the other apps' (``meaning_memory.mcp``).
TOOLS = (
    Tool("mm_remember", SCHEMAS["mm_remember"], DESCRIPTIONS["mm_remember"], WRITES, remember),
    Tool(
        "mm_bulk_remember",
        SCHEMAS["mm_bulk_remember"],
        DESCRIPTIONS["mm_bulk_remember"],
        WRITES,
        bulk_remember,
    ),
    Tool(
        "mm_remember_messages",
        SCHEMAS["mm_remember_messages"],
        DESCRIPTIONS["mm_remember_messages"],
        WRITES,
        remember_messages,
    ),
    Tool("mm_search", SCHEMAS["mm_search"], DESCRIPTIONS["mm_search"], READS, search),
    Tool("mm_feedback", SCHEMAS["mm_feedback"], DESCRIPTIONS["mm_feedback"], WRITES, feedback),
    Tool("mm_forget", SCHEMAS["mm_forget"], DESCRIPTIONS["mm_forget"], DESTROYS, forget),
    Tool("mm_erase", SCHEMAS["mm_erase"], DESCRIPTIONS["mm_erase"], DESTROYS, erase),
    Tool("mm_compile", SCHEMAS["mm_compile"], DESCRIPTIONS["mm_compile"], READS, compile_file),
    Tool("mm_link", SCHEMAS["mm_link"], DESCRIPTIONS["mm_link"], WRITES, link),
    Tool(
        "mm_traverse_relationships",
        SCHEMAS["mm_traverse_relationships"],
        DESCRIPTIONS["mm_traverse_relationships"],
        READS,
        traverse,
    ),
    Tool(
        "mm_explain_path",
        SCHEMAS["mm_explain_path"],
        DESCRIPTIONS["mm_explain_path"],
        READS,
        explain_path,
    ),
    Tool(
        "mm_divergences",
        SCHEMAS["mm_divergences"],
        DESCRIPTIONS["mm_divergences"],
        READS,
        divergences,
    ),
    Tool("mm_list", SCHEMAS["mm_list"], DESCRIPTIONS["mm_list"], READS, list_memories),
)
