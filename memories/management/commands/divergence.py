import json

from django.core.management.base import BaseCommand

from memories.errors import MemoryEngineError
from memories.management.acting import command_error, workspace_option
from memories.services.divergence import divergence_run


class Command(BaseCommand):
    help = (
        "Find memories of --workspace, by different writers and about the same thing, that "
        "disagree (MM_DIVERGENCE must be on): each flagged pair gets a contradicts link and an "
        "open divergence for a curator. Reads the memories written since the previous run "
        "(--full: all of them); --dry-run says what it would flag and writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="The workspace's slug.")
        parser.add_argument("--full", action="store_true", help="Read every memory again.")
        parser.add_argument("--dry-run", action="store_true", help="Flag nothing, write nothing.")
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args, **options):
        workspace = workspace_option(options["workspace"])

        def progress(done: int, total: int) -> None:
            line = f"divergence: {done:,}/{total:,} memories"
            if self.stderr.isatty():
                self.stderr.write("\r" + line, ending="")
            else:
                self.stderr.write(line)

        try:
            result = divergence_run(
                workspace=workspace,
                full=options["full"],
                dry_run=options["dry_run"],
                progress=progress,
            )
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        if self.stderr.isatty():
            self.stderr.write("")
        flagged = [
            {
                "first": pair.first.mem_id,
                "second": pair.second.mem_id,
                "score": round(pair.assessment.score, 6),
                "detector": pair.assessment.detector,
                "evidence": pair.assessment.evidence(),
            }
            for pair in result.flagged
        ]
        if options["json"]:
            summary = {
                "memories": result.memories,
                "pairs": result.pairs,
                "flagged": flagged,
                "seconds": round(result.seconds, 3),
                "dry_run": result.dry_run,
            }
            self.stdout.write(json.dumps(summary, indent=2))
            return
        verb = "would flag" if result.dry_run else "flagged"
        self.stdout.write(
            f"{result.memories:,} memories read, {result.pairs:,} pairs examined "
            f"({result.pairs_per_second:,.0f}/s), {len(flagged)} {verb} in {result.seconds:.1f} s"
        )
        for pair in result.flagged:
            self.stdout.write(
                f"  {pair.first.mem_id} ≠ {pair.second.mem_id} "
                f"({pair.assessment.score:.2f}, {pair.assessment.detector}): "
                f"{pair.first.text[:60]!r} / {pair.second.text[:60]!r}"
            )
