"""The MCP server: the ``mm_*`` tools and the compiled memory file as a resource.

Every tool is a thin adapter over the services and selectors the REST API uses, with the same
argument names and the same validation (``memories.serializers``): a bad argument comes back
as a tool error (``isError``) whose text is the REST API's 400 body, e.g.
``{"significance": ["must be between 0 and 1 (got 1.5)."]}``.

The published input schemas carry enums and ranges so a client can check before it calls, but
the server validates with the engine's own rules (a schema-only ``Any`` type), so that the
messages are the REST API's.

Who acts: over stdio, the agent of the token the process was started with; over HTTP, the
agent of each request's ``Authorization: Bearer`` token (``http_app``), refused before any tool
runs when it is missing or wrong.
"""

import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Annotated, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import WithJsonSchema

from memories import services
from memories.bulk import memory_remember_bulk
from memories.compile import DISPLAY_MODES, compile_options, compiled_memory_file
from memories.decay import PRESET_NAMES
from memories.errors import MemoryEngineError, NotFound, ValidationFailed
from memories.models import Agent, Memory
from memories.presenters import (
    bulk_result_to_dict,
    compiled_to_dict,
    hit_to_dict,
    memory_detail,
    results_table,
)
from memories.search import memory_search
from memories.serializers import (
    CompileInput,
    FeedbackInput,
    ForgetInput,
    RememberInput,
    SearchInput,
    parse,
    parse_bulk,
)
from memories.services import FEEDBACK_ACTIONS

COMPILED_URI = "memory://compiled"
#: The acting agent of the current request (HTTP) or process (stdio), set by the transport.
current_agent: ContextVar[Agent | None] = ContextVar("meaning_memory_agent", default=None)
INSTRUCTIONS = (
    "Meaning Memory keeps what you and your team should remember across runs. Read the "
    "compiled memory file (resource memory://compiled, or mm_compile) at the start of a run; "
    "mm_search before answering from memory; mm_remember what is worth keeping (a decision, a "
    "commitment, a preference, a fact); mm_feedback when a memory proved important or wrong; "
    "mm_forget what must not be used again. Each memory has a mem_id for feedback."
)


def _arg(schema: dict[str, Any], description: str) -> Any:
    """An argument published with ``schema`` (enums, ranges) and checked by the engine."""
    return Annotated[Any, WithJsonSchema({**schema, "description": description})]


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


UNIT = {"type": "number", "minimum": 0, "maximum": 1}
TIME = {"type": "string", "format": "date-time"}
TEXT = {"type": "string"}
SCORES = {
    "type": "object",
    "properties": {d: _optional(UNIT) for d in "stare"},
    "additionalProperties": False,
}
CATEGORY = {"type": "string", "enum": Memory.Category.values}
MEMORY_TYPE = {"type": "string", "enum": Memory.MemoryType.values}

Text = _arg(TEXT, "What to remember, in one or a few sentences (required).")
Query = _arg(TEXT, "What you are looking for, in your own words.")
MemId = _arg({"type": "string", "pattern": "^[0-9a-f]{16}$"}, "The memory's mem_id.")
Reason = _arg({"type": "string", "minLength": 1}, "Why (required; kept in the history).")


def _tool_error(errors: dict[str, list[str]] | str) -> CallToolResult:
    body = errors if isinstance(errors, dict) else {"detail": errors}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _given(**arguments: Any) -> dict[str, Any]:
    """The arguments the caller set (None means not given, as an absent JSON field)."""
    return {name: value for name, value in arguments.items() if value is not None}


class McpTools:
    """The tools, bound to how the acting agent is found."""

    def __init__(self, agent_of: Callable[[Context], Awaitable[Agent]]) -> None:
        self.agent_of = agent_of

    async def run(self, ctx: Context, action: Callable[[Agent], CallToolResult]) -> CallToolResult:
        """Run ``action`` as the acting agent in a thread (the ORM is synchronous); domain
        errors become tool errors with the REST API's body."""
        try:
            agent = await self.agent_of(ctx)
        except PermissionError as exc:
            return _tool_error(str(exc))
        try:
            return await sync_to_async(_in_request(action), thread_sensitive=True)(agent)
        except ValidationFailed as exc:
            return _tool_error(exc.errors)
        except NotFound as exc:
            return _tool_error(exc.message)
        except MemoryEngineError as exc:
            return _tool_error(exc.message)


def _in_request(action: Callable[[Agent], CallToolResult]) -> Callable[[Agent], CallToolResult]:
    """Run ``action`` as Django runs a request: database connections handed back at the end
    (to the pool, when there is one), not left open in the worker thread."""

    def run(agent: Agent) -> CallToolResult:
        try:
            return action(agent)
        finally:
            connections.close_all()

    return run


async def _authenticate(token: str) -> Agent | None:
    def run(token: str) -> Agent | None:
        try:
            return services.agent_authenticate(token)
        finally:
            connections.close_all()

    return await sync_to_async(run, thread_sensitive=True)(token)


def build_server(agent_of: Callable[[Context], Awaitable[Agent]]) -> MCPServer:
    """The MCP server; ``agent_of`` finds the acting agent of a request."""
    server = MCPServer(name="meaning-memory", instructions=INSTRUCTIONS, version="1")
    tools = McpTools(agent_of)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False)
    reads = ToolAnnotations(read_only_hint=True)

    @server.tool(
        annotations=writes,
        description="Store one memory. Call it when something is worth knowing in a later run: "
        "a decision, a commitment, a preference, a fact, a procedure. Returns the stored memory "
        "with its mem_id. Sent again with the same idempotency_key, it stores nothing new and "
        "returns the memory stored under that key.",
    )
    async def mm_remember(
        ctx: Context,
        text: Text,
        category: _arg(CATEGORY, "Kind of memory; default fact.") = None,
        memory_type: _arg(
            MEMORY_TYPE, "semantic (default), episodic, procedural or working."
        ) = None,
        significance: _arg(UNIT, "How much it matters, 0 to 1; default 0.80.") = None,
        stare_scores: _arg(
            SCORES, "Your scores 0 to 1 for s, t, a, r, e; leave out what you cannot judge."
        ) = None,
        valid_from: _arg(TIME, "When it starts being true (ISO 8601); default open.") = None,
        valid_until: _arg(TIME, "When it stops being true (ISO 8601); default open.") = None,
        observed_at: _arg(TIME, "When it happened (ISO 8601).") = None,
        source: _arg(TEXT, "Who says so; default your agent name.") = None,
        scope: _arg(
            TEXT, "Scope to write to, e.g. team:accounts; default your private scope."
        ) = None,
        supersedes: _arg(TEXT, "mem_id of the memory this one replaces.") = None,
        session: _arg(TEXT, "Conversation or run this belongs to.") = None,
        thread: _arg(TEXT, "Ongoing story this belongs to.") = None,
        metadata: _arg({"type": "object"}, "Any JSON object to keep with it.") = None,
        idempotency_key: _arg(
            {"type": "string", "maxLength": 200},
            "Your key for this write, so a retry stores it once.",
        ) = None,
    ) -> CallToolResult:
        data = _given(
            text=text, category=category, memory_type=memory_type, significance=significance,
            stare_scores=stare_scores, valid_from=valid_from, valid_until=valid_until,
            observed_at=observed_at, source=source, scope=scope, supersedes=supersedes,
            session=session, thread=thread, metadata=metadata, idempotency_key=idempotency_key,
        )  # fmt: skip

        def action(agent: Agent) -> CallToolResult:
            memory = services.memory_remember(agent=agent, **parse(RememberInput, data))
            status = "already stored" if memory.existing else "stored"
            return _result(f"{status}: {memory.mem_id}", memory_detail(memory))

        return await tools.run(ctx, action)

    @server.tool(
        annotations=writes,
        description="Store many memories at once (e.g. an import). All are checked first: one "
        f"bad item refuses the batch and nothing is stored. At most {settings.MM_BULK_MAX_ITEMS} "
        "items. Items already stored come back as existing; the engine scores what its "
        "bundled scorer is calibrated for.",
    )
    async def mm_bulk_remember(
        ctx: Context,
        memories: _arg(
            {"type": "array", "items": {"type": "object"}, "minItems": 1,
             "maxItems": settings.MM_BULK_MAX_ITEMS},
            "Each item the arguments of mm_remember (text required).",
        ),
    ) -> CallToolResult:  # fmt: skip
        def action(agent: Agent) -> CallToolResult:
            results = memory_remember_bulk(agent=agent, items=parse_bulk({"memories": memories}))
            stored = sum(1 for r in results if r.status == "stored")
            data = {
                "stored": stored,
                "existing": len(results) - stored,
                "results": [bulk_result_to_dict(r) for r in results],
            }
            return _result(f"{stored} stored, {len(results) - stored} already there", data)

        return await tools.run(ctx, action)

    @server.tool(
        annotations=reads,
        description="Search the memories you may see. Call it before answering from memory. "
        "Returns a markdown table (| # | mem_id | Sig | Eligible | Category | Date | Text |) and, "
        "as structured content, each hit with the figures that explain its rank. Only memories "
        "valid now are searched unless you give as_of or currently_valid.",
    )
    async def mm_search(
        ctx: Context,
        query: Query,
        limit: _arg(
            {"type": "integer", "minimum": 1, "maximum": settings.MM_SEARCH_MAX_LIMIT},
            "How many results; default 10.",
        ) = None,
        as_of: _arg(TIME, "Search the memories valid at this instant.") = None,
        currently_valid: _arg(
            {"type": "boolean"}, "true: valid now; false: no longer valid."
        ) = None,
        category: _arg(CATEGORY, "Only this category.") = None,
        memory_type: _arg(MEMORY_TYPE, "Only this memory type.") = None,
        source: _arg(TEXT, "Only memories from this source.") = None,
        min_s_score: _arg(UNIT, "Only memories with an S score at least this.") = None,
        min_t_score: _arg(UNIT, "Only memories with a T score at least this.") = None,
        min_a_score: _arg(UNIT, "Only memories with an A score at least this.") = None,
        min_r_score: _arg(UNIT, "Only memories with an R score at least this.") = None,
        min_e_score: _arg(UNIT, "Only memories with an E score at least this.") = None,
    ) -> CallToolResult:
        data = _given(
            query=query, limit=limit, as_of=as_of, currently_valid=currently_valid,
            category=category, memory_type=memory_type, source=source, min_s_score=min_s_score,
            min_t_score=min_t_score, min_a_score=min_a_score, min_r_score=min_r_score,
            min_e_score=min_e_score,
        )  # fmt: skip

        def action(agent: Agent) -> CallToolResult:
            hits = memory_search(agent=agent, **parse(SearchInput, data))
            results = [hit_to_dict(hit, position) for position, hit in enumerate(hits, 1)]
            return _result(results_table(hits), {"results": results})

        return await tools.run(ctx, action)

    @server.tool(
        annotations=writes,
        description="Tell the engine how a memory served you, with a reason: important (it "
        "mattered: significance halfway to 1), demote (it misled or did not matter: halved), pin "
        "(always keep it in the compiled file), unpin. Returns the memory with its history.",
    )
    async def mm_feedback(
        ctx: Context,
        mem_id: MemId,
        action: _arg({"type": "string", "enum": list(FEEDBACK_ACTIONS)}, "What to do."),
        reason: Reason,
    ) -> CallToolResult:
        data = _given(action=action, reason=reason)

        def run(agent: Agent) -> CallToolResult:
            memory = services.memory_feedback(
                agent=agent, mem_id=str(mem_id), **parse(FeedbackInput, data)
            )
            return _result(f"{data.get('action')}: {memory.mem_id}", memory_detail(memory))

        return await tools.run(ctx, run)

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
        description="Forget a memory that must not be used again (it is kept, with its history, "
        "for people to review). Give the reason.",
    )
    async def mm_forget(ctx: Context, mem_id: MemId, reason: Reason) -> CallToolResult:
        data = _given(reason=reason)

        def run(agent: Agent) -> CallToolResult:
            memory = services.memory_forget(
                agent=agent, mem_id=str(mem_id), **parse(ForgetInput, data)
            )
            return _result(f"forgotten: {memory.mem_id}", memory_detail(memory))

        return await tools.run(ctx, run)

    @server.tool(
        annotations=reads,
        description="The compiled memory file: the memories that matter most, by category, "
        "built to a token budget. Load it at the start of a run. Each line starts with one mark "
        "per STARE dimension (● score ≥ 0.6, ○ below, — none).",
    )
    async def mm_compile(
        ctx: Context,
        budget: _arg({"type": "integer", "minimum": 200,
                      "maximum": settings.MM_COMPILE_MAX_BUDGET_TOKENS},
                     f"Tokens; default {settings.MM_COMPILE_BUDGET_TOKENS}.") = None,
        as_of: _arg(TIME, "The file as of this instant; default now.") = None,
        display_mode: _arg({"type": "string", "enum": list(DISPLAY_MODES)},
                           "marks, verbose (the numbers) or off.") = None,
        decay: _arg({"type": "string", "enum": list(PRESET_NAMES)},
                    "A decay preset for every category.") = None,
        show_ids: _arg({"type": "boolean"}, "End each line with its mem_id.") = None,
    ) -> CallToolResult:  # fmt: skip
        data = _given(
            budget=budget, as_of=as_of, display_mode=display_mode, decay=decay, show_ids=show_ids
        )

        def run(agent: Agent) -> CallToolResult:
            return _compiled(agent, parse(CompileInput, data))

        return await tools.run(ctx, run)

    @server.tool(
        annotations=reads,
        description="The STARE readiness report: which of the engine's capabilities are "
        "mature, and the evidence. Not available yet in this version: the result says so.",
    )
    async def mm_stare_readiness(ctx: Context) -> CallToolResult:
        await tools.agent_of(ctx)
        return _result(
            "The STARE readiness report is not available yet in this version of the engine.",
            {"available": False},
        )

    @server.resource(
        COMPILED_URI,
        name="compiled-memory-file",
        description="Your compiled memory file with the default budget (markdown).",
        mime_type="text/markdown",
    )
    async def compiled_file() -> str:
        # A static resource gets no request context: the transport says who acts.
        agent = current_agent.get()
        if agent is None:
            raise ResourceError("no agent: connect with an agent token")
        compiled = await sync_to_async(
            _in_request(lambda agent: _compiled(agent, {})), thread_sensitive=True
        )(agent)
        return compiled.content[0].text

    return server


def _compiled(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    compiled = compiled_memory_file(
        workspace=agent.workspace,
        agent=agent,
        as_of=arguments.pop("as_of", None),
        options=compile_options(**arguments),
    )
    return _result(compiled.markdown, compiled_to_dict(compiled))


# --- Transports ------------------------------------------------------------------------------


def stdio_server(agent: Agent) -> MCPServer:
    """The server for one agent (``meaning-memory mcp --token``); run it in this context."""

    async def agent_of(ctx: Context) -> Agent:
        return agent

    current_agent.set(agent)
    return build_server(agent_of)


async def _agent_from_headers(ctx: Context) -> Agent:
    header = (ctx.headers or {}).get("authorization", "")
    scheme, _, token = header.partition(" ")
    agent = None
    if scheme.lower() == "bearer" and token.strip():
        agent = await _authenticate(token.strip())
    if agent is None:  # the HTTP layer refuses these first; kept for any other transport
        raise PermissionError("Invalid or revoked token.")
    return agent


def http_app():  # type: ignore[no-untyped-def]
    """The streamable HTTP endpoint (ASGI), mounted at ``/mcp`` by ``meaning_memory.asgi``:
    stateless, one JSON response per request, behind the agent token check."""
    hosts = [h for host in settings.ALLOWED_HOSTS for h in (host, f"{host}:*")]
    app = build_server(_agent_from_headers).streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection="*" not in settings.ALLOWED_HOSTS,
            allowed_hosts=hosts,
        ),
    )
    return BearerTokenRequired(app)


class BearerTokenRequired:
    """Refuses an HTTP request without a valid agent token (401) before the MCP app sees it;
    passes lifespan events through (the MCP session manager starts there)."""

    def __init__(self, app) -> None:  # type: ignore[no-untyped-def]
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            scheme, _, token = (
                headers.get(b"authorization", b"").decode(errors="replace").partition(" ")
            )
            agent = None
            if scheme.lower() == "bearer" and token.strip():
                agent = await _authenticate(token.strip())
            if agent is not None:
                reset = current_agent.set(agent)
                try:
                    await self.app(scope, receive, send)
                finally:
                    current_agent.reset(reset)
                return
            if agent is None:
                body = json.dumps({"detail": "Invalid or missing token: send 'Authorization: "
                                   "Bearer <agent token>'."}).encode()  # fmt: skip
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="meaning-memory"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
