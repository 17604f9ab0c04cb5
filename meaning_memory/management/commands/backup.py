from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from meaning_memory.backup import BackupError, backup


class Command(BaseCommand):
    help = (
        "Back up the whole database into a new directory: pg_dump's custom format "
        "(database.dump) and a manifest (when, versions, migrations, counts, sha256). It reads "
        "one consistent snapshot, so the engine may go on serving. `meaning-memory restore "
        "DIR` puts it back."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path, help="A new (or empty) directory.")

    def handle(self, *args, **options):
        try:
            manifest = backup(options["directory"])
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        counts = manifest["counts"]
        self.stderr.write(
            f"backup: {options['directory']}: {manifest['bytes']:,} bytes, "
            f"{counts['memories_memory']:,} memories in {counts['memories_workspace']:,} "
            f"workspaces (PostgreSQL {manifest['server_version']}, sha256 "
            f"{manifest['sha256'][:12]}…)"
        )
