"""A memory's episode vector and the memory it follows in its session.

``follows`` is filled for existing memories from the order of their session (as 0005 filled
``episode_text``). ``episode_embedding`` stays empty for them: computing it needs the embedder,
and search uses a memory's own vector where it has no episode vector.
"""

import django.db.models.deletion
import pgvector.django.vector
from django.db import migrations, models

FOLLOWS_BACKFILL = """
UPDATE memories_memory m SET follows_id = e.follows_id
FROM (
    SELECT id, lag(id) OVER w AS follows_id
    FROM memories_memory
    WHERE session <> '' AND status <> 'forgotten'
    WINDOW w AS (PARTITION BY workspace_id, scope_id, session ORDER BY created_at, id)
) e
WHERE m.id = e.id AND e.follows_id IS NOT NULL
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0006_workspace_gin_indexes_again")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="episode_embedding",
            field=pgvector.django.vector.VectorField(blank=True, dimensions=384, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="follows",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="memories.memory",
            ),
        ),
        migrations.RunSQL(FOLLOWS_BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
