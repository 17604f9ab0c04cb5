import json

from django.core.management.base import BaseCommand

from readiness.report import full_text, readiness_report, table


class Command(BaseCommand):
    help = "Print the STARE readiness report (--full: with the open checks; --json)."

    def add_arguments(self, parser):
        parser.add_argument("--full", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        reports = readiness_report()
        if options["json"]:
            self.stdout.write(json.dumps([r.to_dict() for r in reports], indent=2))
        else:
            self.stdout.write(full_text(reports) if options["full"] else table(reports), ending="")
