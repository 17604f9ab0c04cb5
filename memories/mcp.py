"""The MCP server: the ``mm_*`` tools and the compiled memory file as a resource.

Every tool is a thin adapter over the services and selectors the REST API uses, with the same
argument names and the same validation: a tool call's raw arguments go to the REST API's
serializers (``memories.serializers``), so a misspelt, missing or bad argument comes back as a
tool error (``isError``) whose text is the REST API's 400 body, e.g.
``{"significance": ["must be between 0 and 1 (got 1.5)."]}``. The published input schemas
(``SCHEMAS``) carry the same enums and ranges so that a client can check before it calls; the
SDK's own argument handling is bypassed (``EngineServer.call_tool``), so nothing else decides.

Who acts: over stdio, the agent of the token the process was started with, checked again on
every call (a revoked token stops working at once); over HTTP, the agent of each request's
``Authorization: Bearer`` token, checked by ``BearerTokenRequired`` before the MCP app sees the
request, and handed to the tools in a context variable. The HTTP app is stateless: each request
is handled in its own context, so that variable is the request's.
"""

import json
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.http.request import split_domain_port, validate_host
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from memories import rules, services
from memories.bulk import memory_remember_bulk
from memories.compile import DISPLAY_MODES, compiled_memory_file
from memories.decay import PRESET_NAMES
from memories.embeddings import EmbedderError
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

logger = logging.getLogger(__name__)

COMPILED_URI = "memory://compiled"
INVALID_TOKEN = "Invalid or revoked token."
#: The acting agent of the current HTTP request, set by ``BearerTokenRequired``.
current_agent: ContextVar[Agent | None] = ContextVar("meaning_memory_agent", default=None)
INSTRUCTIONS = (
    "Meaning Memory keeps what you and your team should remember across runs. Read the "
    "compiled memory file (resource memory://compiled, or mm_compile) at the start of a run; "
    "mm_search before answering from memory; mm_remember what is worth keeping (a decision, a "
    "commitment, a preference, a fact); mm_feedback when a memory proved important or wrong; "
    "mm_forget what must not be used again. Each memory has a mem_id for feedback."
)

# --- Input schemas -----------------------------------------------------------------------------


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


UNIT = {"type": "number", "minimum": 0, "maximum": 1}
TIME = {"type": "string", "format": "date-time"}
SHORT = {"type": "string", "maxLength": 200}
MEM_ID = _described({"type": "string", "minLength": 1}, "The memory's mem_id (16 hex characters).")
REASON = _described({"type": "string", "minLength": 1}, "Why (required; kept in the history).")
CATEGORY = {"type": "string", "enum": Memory.Category.values}
MEMORY_TYPE = {"type": "string", "enum": Memory.MemoryType.values}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


REMEMBER = _object(
    {
        "text": _described(
            {"type": "string", "minLength": 1, "maxLength": settings.MM_MAX_TEXT_CHARS},
            "What to remember, in one or a few sentences.",
        ),
        "category": _described(CATEGORY, "Kind of memory; default fact."),
        "memory_type": _described(MEMORY_TYPE, "Default semantic."),
        "significance": _described(UNIT, "How much it matters, 0 to 1; default 0.80."),
        "stare_scores": _described(
            {
                "type": "object",
                "properties": {d: _nullable(UNIT) for d in "stare"},
                "additionalProperties": False,
            },
            "Your scores 0 to 1 for s, t, a, r, e; leave out what you cannot judge.",
        ),
        "valid_from": _described(_nullable(TIME), "When it starts being true; default open."),
        "valid_until": _described(_nullable(TIME), "When it stops being true; default open."),
        "observed_at": _described(_nullable(TIME), "When it happened."),
        "created_at": _described(
            _nullable(TIME), "When it was really written (importing history); not in the future."
        ),
        "source": _described(SHORT, "Who says so; default your agent name."),
        "scope": _described(
            {"type": "string"}, "Scope to write to, e.g. team:accounts; default your private one."
        ),
        "supersedes": _described(
            _nullable({"type": "string"}), "mem_id of the memory this one replaces."
        ),
        "session": _described(SHORT, "The conversation or run it belongs to."),
        "thread": _described(SHORT, "The ongoing story it belongs to."),
        "metadata": _described({"type": "object"}, "Any JSON object to keep with it."),
        "idempotency_key": _described(
            _nullable({"type": "string", "maxLength": rules.IDEMPOTENCY_KEY_MAX}),
            "Your key for this write: a retry with it stores nothing new.",
        ),
    },
    ["text"],
)
SCHEMAS: dict[str, dict[str, Any]] = {
    "mm_remember": REMEMBER,
    "mm_bulk_remember": _object(
        {
            "memories": _described(
                {
                    "type": "array",
                    "items": REMEMBER,
                    "minItems": 1,
                    "maxItems": settings.MM_BULK_MAX_ITEMS,
                },
                "The memories, each with the arguments of mm_remember.",
            )
        },
        ["memories"],
    ),
    "mm_search": _object(
        {
            "query": _described(
                {"type": "string", "minLength": 1}, "What you are looking for, in your words."
            ),
            "limit": _described(
                {"type": "integer", "minimum": 1, "maximum": settings.MM_SEARCH_MAX_LIMIT},
                "How many results; default 10.",
            ),
            "as_of": _described(_nullable(TIME), "Search the memories valid at this instant."),
            "currently_valid": _described(
                _nullable({"type": "boolean"}), "true: valid now; false: no longer valid."
            ),
            "category": _described(_nullable(CATEGORY), "Only this category."),
            "memory_type": _described(_nullable(MEMORY_TYPE), "Only this memory type."),
            "source": _described(_nullable({"type": "string"}), "Only this source."),
            **{
                f"min_{d}_score": _described(
                    _nullable(UNIT), f"Only memories with a {d.upper()} score at least this."
                )
                for d in "stare"
            },
        },
        ["query"],
    ),
    "mm_feedback": _object(
        {
            "mem_id": MEM_ID,
            "action": _described(
                {"type": "string", "enum": list(FEEDBACK_ACTIONS)},
                "important: it mattered (significance halfway to 1); demote: it misled or did "
                "not matter (halved); pin: always keep it in the compiled file; unpin.",
            ),
            "reason": REASON,
        },
        ["mem_id", "action", "reason"],
    ),
    "mm_forget": _object({"mem_id": MEM_ID, "reason": REASON}, ["mem_id", "reason"]),
    "mm_compile": _object(
        {
            "budget": _described(
                {
                    "type": "integer",
                    "minimum": rules.MIN_COMPILE_BUDGET,
                    "maximum": settings.MM_COMPILE_MAX_BUDGET_TOKENS,
                },
                f"Tokens (cl100k_base); default {settings.MM_COMPILE_BUDGET_TOKENS}.",
            ),
            "as_of": _described(_nullable(TIME), "The file as of this instant; default now."),
            "display_mode": _described(
                {"type": "string", "enum": list(DISPLAY_MODES)},
                "marks (● ○ —), verbose (the numbers) or off.",
            ),
            "decay": _described(
                {"type": "string", "enum": list(PRESET_NAMES)}, "A decay preset for every category."
            ),
            "show_ids": _described(
                _nullable({"type": "boolean"}), "End each line with its mem_id."
            ),
        },
        [],
    ),
    "mm_stare_readiness": _object({}, []),
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
    "mm_search": "Search the memories you may see. Call it before answering from memory. "
    "Returns a markdown table (| # | mem_id | Sig | Eligible | Category | Date | Text |) and, as "
    "structured content, each hit with the figures that explain its rank. Only memories valid "
    "now are searched unless you give as_of or currently_valid.",
    "mm_feedback": "Tell the engine how a memory served you, with a reason. Returns the memory "
    "with its history.",
    "mm_forget": "Forget a memory that must not be used again (it is kept, with its history, for "
    "people to review). Give the reason.",
    "mm_compile": "The compiled memory file: the memories that matter most, by category, built "
    "to a token budget. Load it at the start of a run. Each line starts with one mark per STARE "
    "dimension (● score ≥ 0.6, ○ below, — none).",
    "mm_stare_readiness": "The STARE readiness report: for each capability (by STARE "
    "dimension) how mature its code is, whether it is switched on, what evidence backs it "
    "(recorded check runs only) and the verdict; then the checks still open and what they block. "
    "Call it before relying on a dimension's scores.",
}
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
READS = ToolAnnotations(read_only_hint=True)
ANNOTATIONS = {
    "mm_remember": WRITES,
    "mm_bulk_remember": WRITES,
    "mm_search": READS,
    "mm_feedback": WRITES,
    "mm_forget": ToolAnnotations(read_only_hint=False, destructive_hint=True),
    "mm_compile": READS,
    "mm_stare_readiness": READS,
}

# --- Handlers: (agent, raw arguments) → result, in a worker thread ------------------------------


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _tool_error(body: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def _with_mem_id(serializer: type, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The REST API takes ``mem_id`` from the URL: here it is one more argument."""
    arguments = dict(arguments)
    mem_id = arguments.pop("mem_id", None)
    errors: dict[str, list[str]] = {}
    if not isinstance(mem_id, str) or not mem_id:
        errors["mem_id"] = ["This field is required." if mem_id is None else "must be a string."]
    try:
        parsed = parse(serializer, arguments)
    except ValidationFailed as exc:
        errors |= exc.errors
    if errors:
        raise ValidationFailed(errors)
    return mem_id, parsed


def remember(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    memory = services.memory_remember(agent=agent, **parse(RememberInput, arguments))
    return _result(
        f"{'already stored' if memory.existing else 'stored'}: {memory.mem_id}",
        memory_detail(memory),
    )


def bulk_remember(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    results = memory_remember_bulk(agent=agent, items=parse_bulk(arguments))
    stored = sum(1 for r in results if r.status == "stored")
    data = {
        "stored": stored,
        "existing": len(results) - stored,
        "results": [bulk_result_to_dict(r) for r in results],
    }
    return _result(f"{stored} stored, {len(results) - stored} already there", data)


def search(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    hits = memory_search(agent=agent, **parse(SearchInput, arguments))
    results = [hit_to_dict(hit, position) for position, hit in enumerate(hits, 1)]
    return _result(results_table(hits), {"results": results})


def feedback(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    mem_id, parsed = _with_mem_id(FeedbackInput, arguments)
    memory = services.memory_feedback(agent=agent, mem_id=mem_id, **parsed)
    return _result(f"{parsed['action']}: {memory.mem_id}", memory_detail(memory))


def forget(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    mem_id, parsed = _with_mem_id(ForgetInput, arguments)
    memory = services.memory_forget(agent=agent, mem_id=mem_id, **parsed)
    return _result(f"forgotten: {memory.mem_id}", memory_detail(memory))


def compile_file(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    compiled = compiled_memory_file(
        workspace=agent.workspace, agent=agent, **parse(CompileInput, arguments)
    )
    return _result(compiled.markdown, compiled_to_dict(compiled))


def stare_readiness(agent: Agent, arguments: dict[str, Any]) -> CallToolResult:
    from readiness.report import full_text, readiness_report, table

    if arguments:
        raise ValidationFailed({name: ["is not a known field."] for name in sorted(arguments)})
    reports = readiness_report()
    return _result(
        full_text(reports),
        {"capabilities": [r.to_dict() for r in reports], "table": table(reports)},
    )


HANDLERS: dict[str, Callable[[Agent, dict[str, Any]], CallToolResult]] = {
    "mm_remember": remember,
    "mm_bulk_remember": bulk_remember,
    "mm_search": search,
    "mm_feedback": feedback,
    "mm_forget": forget,
    "mm_compile": compile_file,
    "mm_stare_readiness": stare_readiness,
}


def _in_request(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``handler`` as Django runs a request: database connections handed back at the end
    (to the pool, when there is one), not left open in the worker thread."""

    def run(*args: Any) -> Any:
        try:
            return handler(*args)
        finally:
            connections.close_all()

    return run


async def _in_thread(handler: Callable[..., Any], *args: Any) -> Any:
    """The synchronous ORM in a worker thread of its own: one agent's long call does not
    hold up another's."""
    return await sync_to_async(_in_request(handler), thread_sensitive=False)(*args)


async def authenticate(token: str) -> Agent | None:
    return await _in_thread(services.agent_authenticate, token)


# --- The server --------------------------------------------------------------------------------


class EngineServer(MCPServer):
    """An MCP server whose tools are the engine's handlers, called with the raw arguments."""

    def __init__(self, agent_of: Callable[[], Awaitable[Agent | None]]) -> None:
        super().__init__(name="meaning-memory", instructions=INSTRUCTIONS, version="1")
        self.agent_of = agent_of
        for name in HANDLERS:
            self.add_tool(
                _not_called,
                name=name,
                description=DESCRIPTIONS[name],
                annotations=ANNOTATIONS[name],
                structured_output=False,  # results vary by tool: no output schema to check
            )
            # The schema is the engine's own (see SCHEMAS), not one derived from a signature.
            self._tool_manager.get_tool(name).parameters = SCHEMAS[name]
        self.resource(
            COMPILED_URI,
            name="compiled-memory-file",
            description="Your compiled memory file with the default budget (markdown).",
            mime_type="text/markdown",
        )(self._compiled_resource)

    async def call_tool(self, name, arguments, context=None):
        handler = HANDLERS.get(name)
        if handler is None:
            return await super().call_tool(name, arguments, context)
        agent = await self.agent_of()
        if agent is None:
            return _tool_error({"detail": INVALID_TOKEN})
        try:
            return await _in_thread(handler, agent, dict(arguments or {}))
        except ValidationFailed as exc:
            return _tool_error(exc.errors)
        except NotFound as exc:
            return _tool_error({"detail": exc.message})
        except EmbedderError as exc:
            return _tool_error({"detail": f"embedder unavailable: {exc}"})
        except MemoryEngineError as exc:
            return _tool_error({"detail": exc.message})
        except Exception:
            logger.exception("MCP tool %s failed", name)
            return _tool_error({"detail": "internal error: the server's log has the details."})

    async def _compiled_resource(self) -> str:
        agent = await self.agent_of()
        if agent is None:
            raise ResourceError(INVALID_TOKEN)
        result = await _in_thread(compile_file, agent, {})
        return result.content[0].text


async def _not_called() -> None:  # pragma: no cover - EngineServer.call_tool dispatches
    raise NotImplementedError


def stdio_server(find_agent: Callable[[], Agent | None]) -> EngineServer:
    """The server of ``meaning-memory mcp``: ``find_agent`` (the token's, or the named agent,
    active) runs again on every call, so a revoked token or agent stops working at once."""

    async def agent_of() -> Agent | None:
        return await _in_thread(find_agent)

    return EngineServer(agent_of)


async def _request_agent() -> Agent | None:
    return current_agent.get()


def http_app():
    """The streamable HTTP endpoint (ASGI), mounted at ``/mcp`` by ``meaning_memory.asgi``:
    stateless (required: the acting agent travels in the request's context), one JSON response
    per request, behind ``BearerTokenRequired``, which also checks the Host header as Django
    does (so the SDK's own check, which knows no ``.example.com`` patterns, is off)."""
    app = EngineServer(_request_agent).streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return BearerTokenRequired(app)


class BearerTokenRequired:
    """Answers an HTTP request with a Host Django would refuse (400) or without a valid agent
    token (401) before the MCP app sees it; otherwise runs it as that agent. Lifespan events
    pass through (the MCP session manager starts there)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {}
        for key, value in scope.get("headers") or []:
            headers.setdefault(key, value.decode("latin-1"))  # the first of repeated headers
        host, _ = split_domain_port(headers.get(b"host", ""))
        if not validate_host(host, settings.ALLOWED_HOSTS):
            await _refuse(send, 400, "Invalid Host header.")
            return
        scheme, _, token = headers.get(b"authorization", "").partition(" ")
        agent = None
        if scheme.lower() == "bearer" and token.strip():
            agent = await authenticate(token.strip())
        if agent is None:
            await _refuse(send, 401, INVALID_TOKEN)
            return
        reset = current_agent.set(agent)
        try:
            await self.app(scope, receive, send)
        finally:
            current_agent.reset(reset)


async def _refuse(send, status: int, detail: str) -> None:
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="meaning-memory"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps({"detail": detail}).encode()})
