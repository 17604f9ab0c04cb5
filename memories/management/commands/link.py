import json
import time

from django.core.management.base import BaseCommand, CommandError

from memories.errors import MemoryEngineError
from memories.management.acting import (
    add_agent_arguments,
    command_error,
    resolve_agent,
    workspace_option,
)
from memories.presenters import stored_link_to_dict
from memories.serializers import LinkAddInput, parse
from memories.services import link_add, link_backfill
from memories.shapes import add_options, command_input


class Command(BaseCommand):
    help = (
        "Without MEM_ID: extract entities and links for the memories of --workspace that have "
        "none yet (written before entities existed, or with MM_ENTITY_EXTRACTION off), oldest "
        "first, in batches; stopped, it goes on from where it was the next time, and run again "
        "it stores nothing twice. With MEM_ID: link that memory, as an agent, to another "
        "memory (--to) or an entity (--entity), as mm_link does; prints the link as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("mem_id", nargs="?", help="The memory to link from (as an agent).")
        add_options(parser, LinkAddInput)
        add_agent_arguments(parser)
        backfill = parser.add_argument_group("extraction (without MEM_ID)")
        backfill.add_argument("--batch", type=int, default=200, help="Memories per transaction.")
        backfill.add_argument("--limit", type=int, help="Stop after this many memories.")

    def handle(self, *args, **options):
        if options["mem_id"]:
            return self._link(options)
        if not options.get("workspace"):
            raise CommandError("--workspace: the workspace whose memories to link")
        workspace = workspace_option(options["workspace"])
        if options["batch"] < 1:
            raise CommandError("--batch: must be at least 1")
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit: must be at least 1")
        started = time.monotonic()

        def progress(done):
            rate = done.memories / max(time.monotonic() - started, 1e-9)
            total = done.memories + done.remaining
            line = (
                f"link: {done.memories:,}/{total:,} memories, {done.links:,} links "
                f"({rate:,.0f} memories/s)"
            )
            if self.stderr.isatty():
                self.stderr.write("\r" + line, ending="")
            else:
                self.stderr.write(line)

        done = link_backfill(
            workspace=workspace, batch=options["batch"], limit=options["limit"], progress=progress
        )
        if self.stderr.isatty() and done.memories:
            self.stderr.write("")
        seconds = time.monotonic() - started
        self.stdout.write(
            f"link: {done.memories:,} memories, {done.links:,} links in {seconds:.1f} s; "
            f"{done.remaining:,} left"
        )

    def _link(self, options):
        agent = resolve_agent(options)
        data = command_input(LinkAddInput, options)
        try:
            result = link_add(
                agent=agent, mem_id=options["mem_id"], **parse(LinkAddInput, data, from_text=True)
            )
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        self.stdout.write(json.dumps(stored_link_to_dict(result.link), indent=2))
