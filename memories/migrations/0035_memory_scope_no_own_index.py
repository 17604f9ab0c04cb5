"""A memory's scope without an index of its own: ``memory_content_hash`` (scope, content_hash)
serves lookups by scope, and the planner took the scope's own index to find an idempotency key
in a scope written since the last ANALYZE, reading every memory of it (one row expected).

Only the index is dropped: the foreign key stays as it is (Django's own operation would drop
and add it again, checking every row of the table)."""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "memories_memory_scope_id_3e75c283"


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0034_entity_one_per_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="memory",
                    name="scope",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="memories",
                        to="memories.scope",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{INDEX}"',
                    reverse_sql=f'CREATE INDEX "{INDEX}" ON "memories_memory" ("scope_id")',
                ),
            ],
        ),
    ]
