from django.core.management.base import BaseCommand
from django.db import connections

from meaning_memory.mcp import engine_tools
from memories.management.acting import add_agent_arguments, resolve_agent
from memories.mcp import stdio_server
from memories.selectors import agent_by_name
from memories.services import agent_authenticate


class Command(BaseCommand):
    help = (
        "Serve the MCP tools over stdio for one agent (--token, $MM_TOKEN, or --workspace and "
        "--agent): for desktop and coding agents that start the server themselves."
    )

    def add_arguments(self, parser):
        add_agent_arguments(parser)

    def handle(self, *args, **options):
        agent = resolve_agent(options)  # a bad token stops here, before any tool runs
        if options.get("workspace") and options.get("agent"):
            workspace, name = options["workspace"], options["agent"]

            def find_agent():
                return agent_by_name(workspace_slug=workspace, name=name)
        else:
            token = options["token"]

            def find_agent():
                return agent_authenticate(token)

        connections.close_all()  # each call opens and hands back its own
        self.stderr.write(f"meaning-memory MCP server on stdio for {agent}")
        stdio_server(find_agent, engine_tools()).run("stdio")
