from django.core.management.base import BaseCommand

from memories.errors import MemoryEngineError
from memories.management.acting import (
    add_agent_arguments,
    command_error,
    parsed_options,
    resolve_agent,
)
from memories.serializers import ForgetInput
from memories.services import memory_forget
from memories.shapes import add_options


class Command(BaseCommand):
    help = (
        "Forget a memory as an agent (POST /api/v1/memories/<mem_id>/forget): it is never "
        "returned or compiled again, and kept with its history for people to review."
    )

    def add_arguments(self, parser):
        parser.add_argument("mem_id", help="The memory's mem_id.")
        add_options(parser, ForgetInput)
        add_agent_arguments(parser)

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        try:
            values = parsed_options(ForgetInput, options)
            memory = memory_forget(agent=agent, mem_id=options["mem_id"], **values)
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        self.stdout.write(f"{memory.mem_id}: forgotten")
