"""The MCP server: the ``mm_*`` tools and the compiled memory file as a resource.

Every tool is a thin adapter over the services and selectors the REST API uses, with the same
argument names and the same validation: a tool call's raw arguments go to the REST API's
serializers (``memories.serializers``), so a misspelt, missing or bad argument comes back as a
tool error (``isError``) whose text is the REST API's 400 body, e.g.
``{"significance": ["must be between 0 and 1 (got 1.5)."]}``. The published input schemas
(``SCHEMAS``) are generated from those serializers (``memories.shapes``), with the same enums
and ranges, so that a client can check before it calls; the SDK's own argument handling is
bypassed (``EngineServer.call_tool``), so nothing else decides.

Who acts: over stdio, the agent of the token the process was started with, checked again on
every call (a revoked token stops working at once); over HTTP, the agent of each request's
``Authorization: Bearer`` token, checked by ``BearerTokenRequired`` before the MCP app sees the
request, and handed to the tools in a context variable. The HTTP app is stateless: each request
is handled in its own context, so that variable is the request's.

Modules: ``tools`` (what each tool takes, says and does), ``server`` (the server object, stdio),
``http`` (the HTTP app and its token check). The server is given its tools: these, and the
other apps' (the readiness report's, ``readiness.mcp``), put together by ``meaning_memory.mcp``.
"""

from memories.mcp.http import BearerTokenRequired, current_agent, http_app
from memories.mcp.server import (
    COMPILED_URI,
    INSTRUCTIONS,
    INVALID_TOKEN,
    EngineServer,
    stdio_server,
)
from memories.mcp.tools import SCHEMAS, TOOLS, Tool, tool_error, tool_result

__all__ = [
    "COMPILED_URI",
    "INSTRUCTIONS",
    "INVALID_TOKEN",
    "SCHEMAS",
    "TOOLS",
    "Tool",
    "BearerTokenRequired",
    "EngineServer",
    "current_agent",
    "http_app",
    "stdio_server",
    "tool_error",
    "tool_result",
]
