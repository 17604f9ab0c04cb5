"""The indexes of idempotent writes, built concurrently (so outside a transaction): a unique
one on the workspace's idempotency keys, and one to find a scope's memory by content hash."""

from django.db import migrations, models

from memories.concurrent_indexes import AddIndexConcurrentlyOnce, RunIndexSQLConcurrentlyOnce

UNIQUE = (
    "CREATE UNIQUE INDEX CONCURRENTLY memory_unique_idempotency_key "
    "ON memories_memory (workspace_id, idempotency_key) WHERE NOT (idempotency_key = '')"
)


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0010_memory_idempotency")]

    operations = [
        AddIndexConcurrentlyOnce(
            model_name="memory",
            index=models.Index(fields=["scope", "content_hash"], name="memory_content_hash"),
        ),
        RunIndexSQLConcurrentlyOnce(
            "memory_unique_idempotency_key",
            UNIQUE,
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memory_unique_idempotency_key",
            state_operations=[
                migrations.AddConstraint(
                    model_name="memory",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("idempotency_key", ""), _negated=True),
                        fields=("workspace", "idempotency_key"),
                        name="memory_unique_idempotency_key",
                    ),
                ),
            ],
        ),
    ]
