"""Metadata filters (``memories.metadata_filter``): a GIN index of each memory's metadata
(``jsonb_path_ops``: containment and SQL/JSON path predicates), built concurrently, as the
memories table may be large."""

import django.contrib.postgres.indexes
from django.db import migrations

from memories.concurrent_indexes import AddIndexConcurrentlyOnce


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0038_provenance_split")]

    operations = [
        AddIndexConcurrentlyOnce(
            model_name="memory",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["metadata"], name="memory_metadata", opclasses=["jsonb_path_ops"]
            ),
        ),
    ]
