"""The MCP server over streamable HTTP, behind a check of the Host header and the agent token."""

import json
from collections.abc import Sequence
from contextvars import ContextVar

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.transport_security import TransportSecuritySettings

from memories.database_errors import unavailable
from memories.mcp.server import INVALID_TOKEN, EngineServer, in_thread
from memories.mcp.tools import Tool
from memories.models import Agent
from memories.services import agent_authenticate

#: The acting agent of the current HTTP request, set by ``BearerTokenRequired``.
current_agent: ContextVar[Agent | None] = ContextVar("meaning_memory_agent", default=None)


async def authenticate(token: str) -> Agent | None:
    return await in_thread(agent_authenticate, token)


async def _request_agent() -> Agent | None:
    return current_agent.get()


def http_app(tools: Sequence[Tool]):
    """The streamable HTTP endpoint (ASGI), mounted at ``/mcp`` by ``meaning_memory.asgi``:
    stateless (required: the acting agent travels in the request's context), one JSON response
    per request, behind ``BearerTokenRequired``, which also checks the Host header as Django
    does (so the SDK's own check, which knows no ``.example.com`` patterns, is off)."""
    app = EngineServer(_request_agent, tools).streamable_http_app(
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
            try:
                agent = await authenticate(token.strip())
            except Exception as exc:
                trouble = unavailable(exc)
                if trouble is None:
                    raise
                await _refuse(send, 503, trouble.message, retry_after=trouble.retry_after)
                return
        if agent is None:
            await _refuse(send, 401, INVALID_TOKEN)
            return
        reset = current_agent.set(agent)
        try:
            await self.app(scope, receive, send)
        finally:
            current_agent.reset(reset)


async def _refuse(send, status: int, detail: str, *, retry_after: int | None = None) -> None:
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="meaning-memory"'))
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps({"detail": detail}).encode()})
