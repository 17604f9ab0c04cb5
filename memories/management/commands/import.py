import time
from pathlib import Path

from django.core.management.base import BaseCommand
from django_q.tasks import async_task

from memories.errors import MemoryEngineError
from memories.management.acting import command_error
from memories.services.transfer import import_file


class Command(BaseCommand):
    help = (
        "Import a file written by `meaning-memory export` into a workspace (default: the one "
        "it was exported from; made if new). The whole file is checked first (its fields by the "
        "rules of remember, no record twice, every reference resolved) and a refused file "
        "writes nothing; memories already "
        "there are left as they are, so importing twice stores nothing new, and an import "
        "stopped halfway goes on where it stopped when run again."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--workspace", help="The workspace to import into.")

    def handle(self, *args, **options):
        started = time.monotonic()

        def progress(phase: str, done: int, total: int) -> None:
            width = 30
            filled = width * done // max(total, 1)
            rate = done / max(time.monotonic() - started, 1e-9)
            line = (
                f"{phase:9} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} "
                f"({rate:,.0f}/s)"
            )
            if self.stderr.isatty():
                self.stderr.write("\r" + line, ending="" if done < total else "\n")
            elif done == total:
                self.stderr.write(line)

        try:
            result = import_file(
                options["file"], workspace_slug=options["workspace"], progress=progress
            )
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        stored = result.stored.get("memory", 0)
        if stored:
            async_task("memories.tasks.link_workspace", result.workspace.id)
        kinds = ("entity", "memory", "link", "thread", "divergence")
        lines = [
            f"{kind}: {result.stored.get(kind, 0):,} stored, "
            f"{result.already.get(kind, 0):,} already there"
            for kind in kinds
        ]
        lines += [f"left out: {n:,} {why}" for why, n in result.skipped.items()]
        if result.agents_created:
            lines.append(
                "agents made (with a token nobody holds; `meaning-memory createagent "
                "--new-token` gives one): " + ", ".join(result.agents_created)
            )
        if result.users_missing:
            lines.append(
                "users not in this install (their changes are kept without them): "
                + ", ".join(sorted(result.users_missing))
            )
        seconds = time.monotonic() - started
        self.stderr.write(
            f"import into {result.workspace.slug} in {seconds:.1f} s "
            f"({result.embedded:,} memories embedded here):\n  " + "\n  ".join(lines)
        )
