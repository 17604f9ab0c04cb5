"""A memory's episode: the texts just before it in its session, indexed with it.

``episode_text`` holds the texts of the (at most two) memories written just before a memory in
the same session and scope; ``search_vector`` now indexes them too, with weight B (the memory's
own words have weight A). A generated column's expression cannot be altered, so the column is
dropped and added again, which drops its indexes: the global GIN index is added back here, the
per-workspace GIN indexes by the next migration. Existing memories get their episode from the
memories before them, in order of ``created_at``.
"""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.db import migrations, models

EPISODE_BACKFILL = """
UPDATE memories_memory m SET episode_text = e.episode_text
FROM (
    SELECT id, concat_ws(E'\\n', lag(text, 2) OVER w, lag(text, 1) OVER w) AS episode_text
    FROM memories_memory
    WHERE session <> '' AND status <> 'forgotten'
    WINDOW w AS (PARTITION BY workspace_id, scope_id, session ORDER BY created_at, id)
) e
WHERE m.id = e.id AND e.episode_text <> ''
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0004_hnsw_ef_construction_128")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="episode_text",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.RunSQL(EPISODE_BACKFILL, reverse_sql=migrations.RunSQL.noop),
        migrations.RemoveIndex(model_name="memory", name="memory_search_vector_gin"),
        migrations.RemoveField(model_name="memory", name="search_vector"),
        migrations.AddField(
            model_name="memory",
            name="search_vector",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.contrib.postgres.search.CombinedSearchVector(
                    django.contrib.postgres.search.SearchVector(
                        "text", config="english", weight="A"
                    ),
                    "||",
                    django.contrib.postgres.search.SearchVector(
                        "episode_text", config="english", weight="B"
                    ),
                    django.contrib.postgres.search.SearchConfig("english"),
                ),
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="memory_search_vector_gin"
            ),
        ),
        migrations.RunSQL(
            "ALTER TABLE memories_memory ALTER COLUMN search_vector SET STATISTICS 1000",
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
