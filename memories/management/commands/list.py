import json

from django.core.management.base import BaseCommand
from django.utils import timezone

from memories.management.acting import (
    add_agent_arguments,
    parsed_options,
    resolve_agent,
)
from memories.presenters import memory_to_dict
from memories.selectors.memories import memory_list_page
from memories.selectors.reader import Reader
from memories.serializers import MemoryPageInput
from memories.shapes import add_options


class Command(BaseCommand):
    help = (
        "Browse the memories an agent may see without a query, newest first (--ordering "
        "significance for the most significant), a page at a time, with the search's filters "
        "that need no query (GET /api/v1/memories, the MCP tool mm_list)."
    )

    def add_arguments(self, parser):
        add_options(parser, MemoryPageInput)
        add_agent_arguments(parser)
        parser.add_argument("--json", action="store_true", help="Print the page as JSON.")

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        values = parsed_options(MemoryPageInput, options)
        rows, page = memory_list_page(Reader.of_agent(agent), values, timezone.now())
        found = [memory_to_dict(memory) for memory in rows]
        if options["json"]:
            self.stdout.write(json.dumps({**page, "results": found}, indent=2))
            return
        for memory in found:
            self.stdout.write(
                f"{memory['mem_id']} ({memory['category']}, {memory['significance']:.2f}): "
                f"{memory['text'][:100]}"
            )
        if page["more"]:
            self.stdout.write(f"(more: --page {page['page'] + 1})")
