"""The MCP server object: the engine's tools and the compiled memory file as a resource."""

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from memories.database_errors import unavailable
from memories.errors import MemoryEngineError
from memories.mcp.tools import Tool, compile_file, tool_error
from memories.metrics import MCP_TOOL_CALLS
from memories.models import Agent
from memories.presenters import error_response

logger = logging.getLogger(__name__)

COMPILED_URI = "memory://compiled"
INVALID_TOKEN = "Invalid or revoked token."
INSTRUCTIONS = (
    "Meaning Memory keeps what you and your team should remember across runs. Read the "
    "compiled memory file (resource memory://compiled, or mm_compile) at the start of a run; "
    "mm_search before answering from memory; mm_remember what is worth keeping (a decision, a "
    "commitment, a preference, a fact); mm_feedback when a memory proved important or wrong; "
    "mm_forget what must not be used again. Each memory has a mem_id for feedback."
)


def _in_request(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``handler`` as Django runs a request: database connections handed back at the end
    (to the pool, when there is one), not left open in the worker thread."""

    def run(*args: Any) -> Any:
        try:
            return handler(*args)
        finally:
            connections.close_all()

    return run


async def in_thread(handler: Callable[..., Any], *args: Any) -> Any:
    """The synchronous ORM in a worker thread of its own: one agent's long call does not
    hold up another's."""
    return await sync_to_async(_in_request(handler), thread_sensitive=False)(*args)


class EngineServer(MCPServer):
    """An MCP server whose tools (``Tool``) are the engine's handlers, called with the raw
    arguments; ``agent_of`` says who acts."""

    def __init__(
        self, agent_of: Callable[[], Awaitable[Agent | None]], tools: Sequence[Tool]
    ) -> None:
        super().__init__(name="meaning-memory", instructions=INSTRUCTIONS, version="1")
        self.agent_of = agent_of
        self.handlers = {tool.name: tool.handler for tool in tools}
        for tool in tools:
            self.add_tool(
                _not_called,
                name=tool.name,
                description=tool.description,
                annotations=tool.annotations,
                structured_output=False,  # results vary by tool: no output schema to check
            )
            # The schema is the engine's own (generated from the input shape), not one derived
            # from a signature.
            self._tool_manager.get_tool(tool.name).parameters = tool.schema
        self.resource(
            COMPILED_URI,
            name="compiled-memory-file",
            description="Your compiled memory file with the default budget (markdown).",
            mime_type="text/markdown",
        )(self._compiled_resource)

    async def call_tool(self, name, arguments, context=None):
        handler = self.handlers.get(name)
        if handler is None:
            return await super().call_tool(name, arguments, context)
        agent = await self.agent_of()
        if agent is None:
            return tool_error({"detail": INVALID_TOKEN})
        try:
            result = await in_thread(handler, agent, dict(arguments or {}))
            MCP_TOOL_CALLS.labels(name, "ok").inc()
            return result
        except MemoryEngineError as exc:
            MCP_TOOL_CALLS.labels(name, "error").inc()
            return tool_error(error_response(exc)[1])
        except Exception as exc:
            MCP_TOOL_CALLS.labels(name, "error").inc()
            trouble = unavailable(exc)
            if trouble is not None:
                logger.warning("MCP tool %s: %s", name, exc)
                return tool_error(error_response(trouble)[1])
            logger.exception("MCP tool %s failed", name)
            return tool_error({"detail": "internal error: the server's log has the details."})

    async def _compiled_resource(self) -> str:
        agent = await self.agent_of()
        if agent is None:
            raise ResourceError(INVALID_TOKEN)
        result = await in_thread(compile_file, agent, {})
        return result.content[0].text


async def _not_called() -> None:  # pragma: no cover - EngineServer.call_tool dispatches
    raise NotImplementedError


def stdio_server(find_agent: Callable[[], Agent | None], tools: Sequence[Tool]) -> EngineServer:
    """The server of ``meaning-memory mcp``: ``find_agent`` (the token's, or the named agent,
    active) runs again on every call, so a revoked token or agent stops working at once."""

    async def agent_of() -> Agent | None:
        return await in_thread(find_agent)

    return EngineServer(agent_of, tools)
