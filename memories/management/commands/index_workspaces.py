from django.core.management.base import BaseCommand

from memories.indexing import workspace_indexes_sync


class Command(BaseCommand):
    help = (
        "Give each large workspace of a shared table its own vector and full-text indexes, and "
        "each common value of MM_METADATA_INDEX_KEYS its own vector index (and drop those no "
        "longer needed). Idempotent; run it after bulk imports."
    )

    def handle(self, *args, **options):
        result = workspace_indexes_sync()
        self.stdout.write(
            f"workspace indexes: {len(result.created)} created, "
            f"{len(result.dropped)} dropped, {len(result.kept)} kept"
        )
        values = result.values
        self.stdout.write(
            f"metadata value indexes: {len(values.created)} created, "
            f"{len(values.dropped)} dropped, {len(values.kept)} kept"
        )
