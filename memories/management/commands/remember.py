import json

from django.core.management.base import BaseCommand

from memories.errors import MemoryEngineError
from memories.management.acting import add_agent_arguments, command_error, resolve_agent
from memories.operations import remember_command
from memories.presenters import memory_detail
from memories.selectors.reader import Reader
from memories.serializers import RememberInput
from memories.services import remember
from memories.shapes import add_options, command_input


class Command(BaseCommand):
    help = "Remember one memory as an agent; prints the stored memory as JSON."

    def add_arguments(self, parser):
        add_options(parser, RememberInput, positional=["text"])
        add_agent_arguments(parser)

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        data = command_input(RememberInput, options)
        try:
            result = remember(agent, remember_command(data, from_text=True))
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        self.stdout.write(
            json.dumps(memory_detail(result.memory, Reader.of_agent(agent)), indent=2)
        )
