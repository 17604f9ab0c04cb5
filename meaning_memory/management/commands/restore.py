from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db.migrations.loader import MigrationLoader

from meaning_memory.backup import BackupError, restore


class Command(BaseCommand):
    help = (
        "Restore a backup made by `meaning-memory backup` in place of the database: checked "
        "(sha256), restored beside it, counted, then swapped in; the database it replaces is "
        "kept as <name>_before_restore_<time> (--drop-previous to drop it). Stop the engine "
        "first. A backup by an older version is migrated after it is restored."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path, help="A directory `backup` wrote.")
        parser.add_argument(
            "--drop-previous",
            action="store_true",
            help="Drop the database the backup replaces instead of keeping it.",
        )

    def handle(self, *args, **options):
        loader = MigrationLoader(None, ignore_no_migrations=True)
        known: dict[str, set[str]] = {}
        for app, name in loader.disk_migrations:
            known.setdefault(app, set()).add(name)
        try:
            restored = restore(
                options["directory"],
                known_migrations=known,
                keep_previous=not options["drop_previous"],
            )
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        call_command("migrate", interactive=False, verbosity=0)
        manifest = restored.manifest
        kept = (
            f"; the database it replaced is kept as {restored.previous!r}"
            if restored.previous
            else ""
        )
        self.stderr.write(
            f"restore: {options['directory']} (made {manifest['created_at']}) is now database "
            f"{restored.database!r}: {manifest['counts']['memories_memory']:,} memories{kept}"
        )
