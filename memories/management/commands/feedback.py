import json

from django.core.management.base import BaseCommand

from memories.errors import MemoryEngineError
from memories.management.acting import (
    add_agent_arguments,
    command_error,
    parsed_options,
    resolve_agent,
)
from memories.presenters import memory_to_dict
from memories.serializers import FeedbackInput
from memories.services import memory_feedback
from memories.shapes import add_options


class Command(BaseCommand):
    help = (
        "Tell the engine how a memory served you, as an agent (POST "
        "/api/v1/memories/<mem_id>/feedback): important, demote, pin, unpin or forget, with a "
        "reason."
    )

    def add_arguments(self, parser):
        parser.add_argument("mem_id", help="The memory's mem_id.")
        add_options(parser, FeedbackInput, positional=["action"])
        add_agent_arguments(parser)
        parser.add_argument("--json", action="store_true", help="Print the memory as JSON.")

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        try:
            values = parsed_options(FeedbackInput, options)
            memory = memory_feedback(agent=agent, mem_id=options["mem_id"], **values)
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        if options["json"]:
            self.stdout.write(json.dumps(memory_to_dict(memory), indent=2))
        else:
            self.stdout.write(
                f"{memory.mem_id}: {values['action']} (significance {memory.significance:.2f}, "
                f"{memory.status}{', pinned' if memory.pinned else ''})"
            )
