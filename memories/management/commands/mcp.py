from django.core.management.base import BaseCommand

from memories.management.commands._agent import add_agent_arguments, resolve_agent


class Command(BaseCommand):
    help = (
        "Serve the MCP tools over stdio for one agent (--token, $MM_TOKEN, or --workspace and "
        "--agent): for desktop and coding agents that start the server themselves."
    )

    def add_arguments(self, parser):
        add_agent_arguments(parser)

    def handle(self, *args, **options):
        from memories.mcp import stdio_server

        agent = resolve_agent(options)  # a bad token stops here, before any tool runs
        stdio_server(agent).run("stdio")
