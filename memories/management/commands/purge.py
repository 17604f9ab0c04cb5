from django.core.management.base import BaseCommand

from memories.services.erase import PURGED_TABLES, purge_storage
from memories.signals import purging


class Command(BaseCommand):
    help = (
        "After erasures: vacuum the tables erasures delete from and rebuild the text indexes "
        "(what the worker does after each erasure). --full rewrites the tables instead, so "
        "that an erased text's bytes are in no file of the database, not even in a page's "
        "free space; each table is locked while it is rewritten (minutes for millions of "
        "memories): run it in a quiet hour."
    )

    def add_arguments(self, parser):
        parser.add_argument("--full", action="store_true", help="Rewrite the tables.")

    def handle(self, *args, **options):
        done = purge_storage(full=options["full"])
        others = [table for _, tables in purging.send(sender=type(self), full=options["full"])
                  for table in tables]  # fmt: skip
        self.stdout.write(
            f"purged: {len(PURGED_TABLES) + len(others)} tables "
            f"{'rewritten' if done['full'] else 'vacuumed'}"
            + ("" if done["full"] else f", {done['indexes'] + 1} text indexes rebuilt")
        )
