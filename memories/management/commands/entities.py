import csv
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories.errors import ValidationFailed
from memories.management.acting import command_error, workspace_option
from memories.services import entities_declare

#: Separators of a CSV file's aliases column.
ALIAS_SEPARATORS = ("|", ";")


class Command(BaseCommand):
    help = (
        "The workspace's gazetteer. 'import FILE': declare the entities of a file (JSON: a list "
        'of {"name", "type", "aliases"}; JSON Lines: one such object a line; CSV: columns '
        "name, type, aliases with aliases separated by | or ;). The whole file is checked "
        "first and stored in one transaction, or not at all."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        imported = sub.add_parser("import", help="Declare the entities of a file.")
        imported.add_argument("file", type=Path)
        imported.add_argument("--workspace", required=True, help="Workspace slug.")

    def handle(self, *args, **options):
        workspace = workspace_option(options["workspace"])
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"no file {str(path)!r}")
        items = read_entities(path)
        try:
            results = entities_declare(workspace_id=workspace.pk, items=items)
        except ValidationFailed as exc:
            raise command_error(exc) from exc
        created = sum(1 for r in results if r.created)
        self.stdout.write(
            f"entities: {len(results):,} declared ({created:,} new, "
            f"{len(results) - created:,} known already)"
        )


def read_entities(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".csv":
            rows = list(csv.DictReader(text.splitlines()))
            missing = {"name", "type"} - set(rows[0] if rows else {})
            if rows and missing:
                raise CommandError(
                    f"{path.name}: the CSV has no column {', '.join(sorted(missing))}"
                )
            return [_from_csv(row) for row in rows]
        if path.suffix in (".jsonl", ".ndjson"):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path.name}: not valid JSON (line {exc.lineno}): {exc.msg}") from exc
    if isinstance(data, dict) and isinstance(data.get("entities"), list):
        data = data["entities"]
    if not isinstance(data, list):
        raise CommandError(f'{path.name}: must hold a list of entities (or {{"entities": [...]}})')
    return data


def _from_csv(row: dict) -> dict:
    aliases = row.get("aliases") or ""
    for separator in ALIAS_SEPARATORS:
        aliases = aliases.replace(separator, "\n")
    return {
        "name": row.get("name") or "",
        "type": (row.get("type") or "").strip(),
        "aliases": [a.strip() for a in aliases.splitlines() if a.strip()],
    }
