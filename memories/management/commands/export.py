import json
from datetime import UTC, datetime, time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_date, parse_datetime

from memories.management.acting import workspace_option
from memories.selectors.export import export_records


class Command(BaseCommand):
    help = (
        "Write a workspace as JSON Lines (to standard output, or --output): its scopes, agents "
        "(names, never tokens), entities, memories with their scores, validity, attribution "
        "and history, links, threads and divergences; `meaning-memory import` reads it into "
        "another workspace or install."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="The workspace's slug.")
        parser.add_argument(
            "--since",
            help="Only the memories written at or after this time (ISO 8601: 2026-11-01 or "
            "2026-11-01T09:00:00+00:00), the links and threads changed since, and the "
            "divergences about them; scopes, agents and entities always.",
        )
        parser.add_argument(
            "--vectors",
            action="store_true",
            help="Add each memory's vectors (an import with the same embedding model uses them "
            "instead of embedding again; the file is about four times larger).",
        )
        parser.add_argument("--output", "-o", type=Path, help="A file to write (default: stdout).")

    def handle(self, *args, **options):
        workspace = workspace_option(options["workspace"])
        since = _since(options["since"]) if options["since"] else None
        out = options["output"].open("w", encoding="utf-8") if options["output"] else None
        written, counts = 0, ""
        try:
            for record in export_records(workspace, since=since, vectors=options["vectors"]):
                line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
                if out is not None:
                    out.write(line + "\n")
                else:
                    self.stdout.write(line)
                written += 1
                if record["type"] == "end":
                    counts = ", ".join(f"{n:,} {kind}" for kind, n in record["counts"].items())
        finally:
            if out is not None:
                out.close()
        self.stderr.write(f"export: {workspace.slug}: {counts or 'nothing'} ({written:,} lines)")


def _since(value: str) -> datetime:
    moment = parse_datetime(value)
    if moment is None and (day := parse_date(value)) is not None:
        moment = datetime.combine(day, time.min)
    if moment is None:
        raise CommandError(f"--since: {value!r} is not an ISO 8601 date or date and time")
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
