from django.core.management.base import BaseCommand, CommandError

from memories.errors import MemoryEngineError
from memories.management.acting import command_error
from memories.services import agent_create, agent_new_token


class Command(BaseCommand):
    help = (
        "Create an agent (and its workspace if new) and print its API token; with --new-token, "
        "give an existing agent a new one (its old token stops working). The token is shown "
        "once: only its hash is stored."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="Workspace slug.")
        parser.add_argument("--name", required=True, help="Agent name, unique in the workspace.")
        parser.add_argument(
            "--scope",
            action="append",
            default=[],
            dest="scopes",
            help="A shared scope the agent belongs to, e.g. team:accounts "
            "(repeatable; created if new).",
        )
        parser.add_argument(
            "--new-token",
            action="store_true",
            help="The agent exists: give it a new token (a lost one, or an agent an import "
            "made) and let it act again if it was revoked.",
        )

    def handle(self, *args, **options):
        try:
            if options["new_token"]:
                if options["scopes"]:
                    raise CommandError("--scope: not with --new-token (the agent exists)")
                agent, token = agent_new_token(
                    workspace_slug=options["workspace"], name=options["name"]
                )
            else:
                agent, token = agent_create(
                    workspace_slug=options["workspace"],
                    name=options["name"],
                    shared_scopes=options["scopes"],
                )
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        if options["verbosity"] == 0:
            self.stdout.write(token)
            return
        self.stderr.write(
            f"Agent {agent.name!r} in workspace {agent.workspace.slug!r}. "
            "Its token (shown once, keep it secret):"
        )
        self.stdout.write(token)
        self.stderr.write(
            "Try it, with the engine serving (meaning-memory serve):\n"
            "  curl -s http://127.0.0.1:8000/api/v1/memories "
            f"-H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' "
            """-d '{"text": "My first memory."}'"""
        )
        if not token:
            raise CommandError("no token")  # pragma: no cover
