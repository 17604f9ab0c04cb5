"""Tell the planner that a memory's scope determines its workspace.

Without this PostgreSQL multiplies the two filters' selectivities as if they were independent
and underestimates how many rows a workspace's search must consider, which decides between the
HNSW index and an exact scan.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "CREATE STATISTICS memory_workspace_scope (dependencies, ndistinct) "
            "ON workspace_id, scope_id FROM memories_memory",
            reverse_sql="DROP STATISTICS memory_workspace_scope",
        ),
    ]
