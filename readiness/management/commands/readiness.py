import json
from pathlib import Path

from django.core.management.base import BaseCommand

from readiness.release import write_release
from readiness.report import full_text, readiness_report, table


class Command(BaseCommand):
    help = (
        "Print the STARE readiness report (--full: with the open checks; --json). "
        "--write-release FILE: write this database's latest runs as release evidence."
    )

    def add_arguments(self, parser):
        parser.add_argument("--full", action="store_true")
        parser.add_argument("--json", action="store_true")
        parser.add_argument(
            "--write-release",
            type=Path,
            metavar="FILE",
            help="Write the latest run of each check here (readiness/data/release_evidence.json "
            "ships with the package), after stare-eval on the evaluation data.",
        )

    def handle(self, *args, **options):
        if options["write_release"]:
            written = write_release(options["write_release"])
            self.stdout.write(
                f"{written} checks' latest runs written to {options['write_release']}"
            )
            return
        reports = readiness_report()
        if options["json"]:
            self.stdout.write(json.dumps([r.to_dict() for r in reports], indent=2))
        else:
            self.stdout.write(full_text(reports) if options["full"] else table(reports), ending="")
