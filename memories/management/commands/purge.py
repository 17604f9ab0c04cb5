from django.core.management.base import BaseCommand, CommandError

from memories.services.purge import PURGED_TABLES, WAIT_SECONDS, older_warning, purge_storage
from memories.signals import purging


def seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number <= 3600:
        raise CommandError(f"--wait: {value!r} is not a number of seconds from 0 to 3600")
    return number


class Command(BaseCommand):
    help = (
        "After erasures: vacuum the tables erasures delete from and rebuild the text indexes "
        "(what the worker does after each erasure). --full rewrites the tables instead, so "
        "that an erased text's bytes are in no file of the database, not even in a page's "
        "free space; each table is locked while it is rewritten (minutes for millions of "
        "memories): run it in a quiet hour. Rows an older snapshot can still see cannot go: "
        "the purge waits for such sessions first (--wait), and says when some outlived it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--full", action="store_true", help="Rewrite the tables.")
        parser.add_argument(
            "--wait",
            default=WAIT_SECONDS,
            help=f"Seconds to wait for older snapshots to end, each time (default "
            f"{WAIT_SECONDS:g}).",
        )

    def handle(self, *args, **options):
        wait = seconds(str(options["wait"]))
        done = purge_storage(full=options["full"], wait=wait)
        others = [
            answer for _, answer in purging.send(sender=type(self), full=options["full"], wait=wait)
        ]
        tables = len(PURGED_TABLES) + sum(answer["tables"] for answer in others)
        older = max([done["older_snapshots"]] + [answer["older_snapshots"] for answer in others])
        self.stdout.write(
            f"purged: {tables} tables "
            f"{'rewritten' if done['full'] else 'vacuumed'}"
            + ("" if done["full"] else f", {done['indexes'] + 1} text indexes rebuilt")
        )
        if older:
            self.stderr.write(older_warning(older))
