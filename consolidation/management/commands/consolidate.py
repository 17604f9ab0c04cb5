import json

from django.core.management.base import BaseCommand, CommandError

from consolidation.phases import PHASES
from consolidation.services import consolidation_execute, consolidation_start
from memories.errors import MemoryEngineError
from memories.management.acting import command_error, workspace_option


class Command(BaseCommand):
    help = (
        "Consolidate a workspace's memories: its phases in order (--phases to name some), each "
        "from where its previous run stopped. --dry-run reports what each phase would do and "
        "writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="The workspace's slug.")
        parser.add_argument(
            "--phases",
            help="Comma-separated, of: " + ", ".join(PHASES) + " (default: those switched on).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Change nothing.")
        parser.add_argument("--json", action="store_true", help="Print the run as JSON.")

    def handle(self, *args, **options):
        workspace = workspace_option(options["workspace"])
        phases = options["phases"].split(",") if options["phases"] is not None else None

        def progress(phase: str, done: int, total: int) -> None:
            width = 30
            filled = width * done // max(total, 1)
            line = f"{phase:10} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,}"
            if self.stderr.isatty():
                self.stderr.write("\r" + line, ending="")
            elif done == total:
                self.stderr.write(line)

        try:
            run = consolidation_start(
                workspace=workspace,
                trigger="command",
                phases=phases,
                dry_run=options["dry_run"],
            )
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        run = consolidation_execute(run, progress=progress)
        if self.stderr.isatty():
            self.stderr.write("")
        if options["json"]:
            summary = {
                "run_id": run.run_id,
                "status": run.status,
                "dry_run": run.dry_run,
                "phases": run.phases,
                "counts": run.counts,
                "timings": run.timings,
                "error": run.error,
            }
            self.stdout.write(json.dumps(summary, indent=2))
        else:
            self.stdout.write(
                f"run {run.run_id} {run.status} ({'dry run' if run.dry_run else 'applied'})"
            )
            for phase in run.phases:
                counts = ", ".join(f"{k} {v:,}" for k, v in run.counts.get(phase, {}).items())
                seconds = run.timings.get(phase)
                took = f" in {seconds:.2f} s" if seconds is not None else ""
                self.stdout.write(f"  {phase}: {counts or 'not run'}{took}")
        if run.status == run.Status.FAILED:
            raise CommandError(f"consolidation run {run.run_id} failed: {run.error}")
