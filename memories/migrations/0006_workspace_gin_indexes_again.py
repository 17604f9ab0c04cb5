"""Build again the per-workspace GIN indexes that 0005 dropped with the old ``search_vector``.

Concurrently, like ``meaning-memory index_workspaces`` (which this runs), so outside a
transaction.
"""

from django.db import migrations


def rebuild(apps, schema_editor):
    from memories.indexing import workspace_indexes_sync

    workspace_indexes_sync()


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0005_memory_episode_text")]

    operations = [migrations.RunPython(rebuild, migrations.RunPython.noop)]
