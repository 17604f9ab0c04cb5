import signal
import time

from django.core.management.base import BaseCommand

from memories.management.acting import workspace_option
from memories.models import MemoryEnrichment
from memories.services.enricher import HELD_SECONDS, enrich_pending, follow, retry_failed


class Command(BaseCommand):
    # The enricher starts (and waits) while the database is away: serve restarts it otherwise.
    requires_system_checks = []
    help = (
        "Enrich the memories written with MM_ENRICH_LATER (their entities, links, claimant and "
        "A score): once, every pending one that is due (default), or as they come (--follow, "
        "what `meaning-memory serve` runs). --retry-failed first makes the failed ones pending "
        "again."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--follow", action="store_true", help="Keep enriching as memories are written."
        )
        parser.add_argument(
            "--retry-failed",
            action="store_true",
            help="Make the enrichments given up on pending again first.",
        )
        parser.add_argument("--workspace", help="Only this workspace's memories (its slug).")

    def handle(self, *args, **options):
        workspace = workspace_option(options["workspace"]) if options["workspace"] else None
        workspace_id = workspace.pk if workspace is not None else None
        if options["retry_failed"]:
            again = retry_failed(workspace_id=workspace_id)
            self.stdout.write(f"{again} failed enrichments are pending again.")
        if options["follow"]:
            self._follow()
            return
        enriched = failed = 0
        while True:
            done = enrich_pending(workspace_id=workspace_id)
            enriched, failed = enriched + done.enriched, failed + done.failed
            if not done.taken:
                break
            if done.held and not (done.enriched or done.retried):
                time.sleep(HELD_SECONDS)  # another transaction holds their memories: a moment
        waiting = MemoryEnrichment.objects.filter(state=MemoryEnrichment.State.PENDING)
        if workspace_id is not None:
            waiting = waiting.filter(workspace_id=workspace_id)
        self.stdout.write(
            f"{enriched} memories enriched, {failed} failed for good; "
            f"{waiting.count()} pending and not due yet."
        )

    def _follow(self) -> None:
        # (``meaning-memory enrich --follow`` runs at MM_ENRICH_NICE: meaning_memory.cli.)
        stopping = []
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopping.append(True))
        follow(stop=lambda: bool(stopping))
