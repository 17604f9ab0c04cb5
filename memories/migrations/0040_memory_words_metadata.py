"""Words and metadata in one GIN index (``memory_words_metadata``) in place of one for each:
a search with a metadata filter narrows each query word's matches to the memories the filter
keeps within the index, instead of testing every match's row (``memories.search.metadata``).
Built concurrently before the two it replaces are dropped, as the memories table may be large;
then each workspace's own full-text index is built again with the metadata in it
(``memories.indexing``; which workspaces have their own indexes stays as it is)."""

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import RemoveIndexConcurrently
from django.db import migrations

from memories.concurrent_indexes import AddIndexConcurrentlyOnce


def rebuild_workspace_indexes(apps, schema_editor):
    from memories.indexing import workspace_indexes_rebuild_outdated

    workspace_indexes_rebuild_outdated()


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0039_memory_metadata_index")]

    operations = [
        AddIndexConcurrentlyOnce(
            model_name="memory",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector", "metadata"],
                name="memory_words_metadata",
                opclasses=["tsvector_ops", "jsonb_path_ops"],
            ),
        ),
        RemoveIndexConcurrently(model_name="memory", name="memory_search_vector_gin"),
        RemoveIndexConcurrently(model_name="memory", name="memory_metadata"),
        migrations.RunPython(rebuild_workspace_indexes, migrations.RunPython.noop),
    ]
