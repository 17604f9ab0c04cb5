"""Idempotency keys per scope, not per workspace: a key used in a scope the writer cannot see
must not be refused (the refusal told the writer that a memory it cannot see exists). The new
unique index is built concurrently before the old one is dropped, so no moment goes without
one; every key the old index allowed, the new one allows (it is a weaker rule)."""

from django.db import migrations, models

from memories.concurrent_indexes import RunIndexSQLConcurrentlyOnce

UNIQUE = (
    "CREATE UNIQUE INDEX CONCURRENTLY memory_unique_scope_idempotency_key "
    "ON memories_memory (scope_id, idempotency_key) WHERE NOT (idempotency_key = '')"
)


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0014_login_throttle")]

    operations = [
        RunIndexSQLConcurrentlyOnce(
            "memory_unique_scope_idempotency_key",
            UNIQUE,
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memory_unique_scope_idempotency_key",
            state_operations=[
                migrations.AddConstraint(
                    model_name="memory",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("idempotency_key", ""), _negated=True),
                        fields=("scope", "idempotency_key"),
                        name="memory_unique_scope_idempotency_key",
                    ),
                ),
            ],
        ),
        migrations.RunSQL(
            "DROP INDEX CONCURRENTLY IF EXISTS memory_unique_idempotency_key",
            reverse_sql=(
                "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS memory_unique_idempotency_key "
                "ON memories_memory (workspace_id, idempotency_key) "
                "WHERE NOT (idempotency_key = '')"
            ),
            state_operations=[
                migrations.RemoveConstraint(
                    model_name="memory", name="memory_unique_idempotency_key"
                ),
            ],
        ),
    ]
