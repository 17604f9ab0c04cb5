import json

from django.core.management.base import BaseCommand

from memories.errors import MemoryEngineError
from memories.management.acting import add_agent_arguments, command_error, resolve_agent
from memories.operations import memory_search
from memories.presenters import hits_to_list, results_table
from memories.selectors.reader import Reader
from memories.serializers import SearchInput
from memories.shapes import add_options, command_input


class Command(BaseCommand):
    help = "Search as an agent; prints the markdown results table (or JSON with --json)."

    def add_arguments(self, parser):
        add_options(parser, SearchInput, positional=["query"])
        add_agent_arguments(parser)
        parser.add_argument("--json", action="store_true", help="Print results as JSON.")

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        try:
            hits = memory_search(
                Reader.of_agent(agent),
                arguments=command_input(SearchInput, options),
                from_text=True,
            )
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        if options["json"]:
            self.stdout.write(json.dumps({"results": hits_to_list(hits)}, indent=2))
        else:
            self.stdout.write(results_table(hits), ending="")
