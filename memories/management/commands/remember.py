import json

from django.core.management.base import BaseCommand, CommandError

from memories.errors import MemoryEngineError
from memories.management.commands._agent import add_agent_arguments, command_error, resolve_agent
from memories.presenters import memory_detail
from memories.serializers import RememberInput, parse
from memories.services import memory_remember


class Command(BaseCommand):
    help = "Remember one memory as an agent; prints the stored memory as JSON."

    def add_arguments(self, parser):
        parser.add_argument("text")
        add_agent_arguments(parser)
        for name in (
            "category",
            "memory_type",
            "significance",
            "valid_from",
            "valid_until",
            "observed_at",
            "created_at",
            "source",
            "scope",
            "supersedes",
            "session",
            "thread",
        ):
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name)
        parser.add_argument(
            "--stare-scores", dest="stare_scores", help='JSON object, e.g. \'{"s": 0.9, "t": 0.4}\''
        )

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        data = {
            name: options[name] for name in RememberInput().fields if options.get(name) is not None
        }
        if "stare_scores" in data:
            try:
                data["stare_scores"] = json.loads(data["stare_scores"])
            except json.JSONDecodeError as exc:
                raise CommandError("--stare-scores: must be a JSON object") from exc
        try:
            memory = memory_remember(agent=agent, **parse(RememberInput, data))
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        self.stdout.write(json.dumps(memory_detail(memory), indent=2))
