"""The served app: Django (API, admin, dashboard, static files) and the MCP endpoint at /mcp."""

import os

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

from meaning_memory.env import web_process
from memories.heap import configure as configure_heap

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "meaning_memory.settings")
# Before any thread starts: how the allocator keeps what requests free (``memories.heap``).
configure_heap()

# Static files (admin, API docs) are served by the app itself: one process, nothing to collect.
# A web process: its requests' database work has a statement timeout (see the settings).
with web_process():
    django_application = ASGIStaticFilesHandler(get_asgi_application())


def build_application():
    """The app: ``/mcp`` to a new MCP endpoint, and lifespan events to it too (it runs its
    session manager there, once per instance; Django has no lifespan); the rest to Django.
    Everything behind fair use (``meaning_memory.fairuse``), whose callers' addresses are the
    peers' or, from a trusted proxy only, the forwarded ones (``meaning_memory.proxies``)."""
    from meaning_memory.fairuse import FairUse
    from meaning_memory.mcp import engine_tools  # needs the apps loaded above
    from meaning_memory.proxies import client_addresses
    from memories.mcp import http_app

    mcp_application = http_app(engine_tools())

    async def application(scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
            await mcp_application(scope, receive, send)
        else:
            await django_application(scope, receive, send)

    return client_addresses(FairUse(application))


application = build_application()
