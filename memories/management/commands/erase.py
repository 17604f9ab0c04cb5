from django.core.management.base import BaseCommand

from memories.errors import MemoryEngineError
from memories.management.acting import command_error, workspace_option
from memories.services import memories_erase
from memories.services.purge import older_warning, purge_storage


class Command(BaseCommand):
    help = (
        "Erase memories for good: one (--mem-id), or all of a source, an agent (what it wrote "
        "and its private scope), a session, an entity (those that mention it or whose claim it "
        "made; the entity goes too) or a metadata filter (JSON, docs/metadata.md). Their text, "
        "vectors, metadata, links and history go, and their words wherever they were copied; "
        "a tombstone per memory stays (which, when, why). The tables are then vacuumed and the "
        "text indexes rebuilt, so the words leave the database's files too. --dry-run lists "
        "them and changes nothing. `forget` is the soft delete."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="The workspace's slug.")
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument("--mem-id", help="One memory.")
        chosen.add_argument("--source", help="Every memory of this source.")
        chosen.add_argument("--agent", help="Every memory this agent wrote, and its private ones.")
        chosen.add_argument("--session", help="Every memory of this session.")
        chosen.add_argument(
            "--entity",
            help="Every memory that mentions this entity (its id, name or alias) or whose claim "
            "it made; the entity goes too once nothing names it, even a declared one.",
        )
        chosen.add_argument(
            "--metadata",
            help='Every memory whose metadata matches this filter, e.g. \'{"customer": "orion"}\'.',
        )
        parser.add_argument("--reason", default="", help="Why (required; kept in the tombstone).")
        parser.add_argument("--dry-run", action="store_true", help="List them; change nothing.")

    def handle(self, *args, **options):
        workspace = workspace_option(options["workspace"])
        by, value = next(
            (by, options[key])
            for by, key in (
                ("memory", "mem_id"),
                ("source", "source"),
                ("agent", "agent"),
                ("session", "session"),
                ("entity", "entity"),
                ("metadata", "metadata"),
            )
            if options[key] is not None
        )
        try:
            erasure = memories_erase(
                workspace=workspace,
                by=by,
                value=value,
                reason=options["reason"],
                dry_run=options["dry_run"],
            )
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        if erasure.dry_run:
            self.stdout.write(
                f"would erase {erasure.count:,} memories: " + " ".join(erasure.mem_ids)
            )
            return
        self.stdout.write(
            f"erased {erasure.count:,} memories ({erasure.episodes_rewritten:,} episodes "
            f"rewritten, {erasure.entities_removed:,} entities removed)"
        )
        if erasure.count:
            done = purge_storage(workspace.pk)  # now (the worker does other apps' tables)
            self.stdout.write("purged: tables vacuumed, text indexes rebuilt")
            if done["older_snapshots"]:
                self.stderr.write(older_warning(done["older_snapshots"]))
