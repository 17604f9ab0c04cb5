"""A memory's enrichment still to do (``memories.models.enrichment``): its primary key and its
key to the memory carry the workspace (docs/SCALING.md, "Ready for Citus"), and the row goes
with its memory whoever deletes it."""

import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0042_metadata_statistics"),
    ]

    operations = [
        migrations.CreateModel(
            name="MemoryEnrichment",
            fields=[
                (
                    "memory",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="enrichment",
                        serialize=False,
                        to="memories.memory",
                    ),
                ),
                ("given", models.JSONField(blank=True, default=dict)),
                (
                    "state",
                    models.CharField(
                        choices=[("pending", "Pending"), ("failed", "Failed")],
                        default="pending",
                        max_length=8,
                    ),
                ),
                ("attempts", models.PositiveSmallIntegerField(default=0)),
                ("last_error", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "next_at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
                (
                    "agent",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="memories.agent",
                    ),
                ),
                (
                    "workspace",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memories.workspace",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        condition=models.Q(("state", "pending")),
                        fields=["next_at"],
                        name="enrichment_due",
                    ),
                    models.Index(fields=["workspace", "state"], name="enrichment_workspace"),
                ],
            },
        ),
        migrations.RunSQL(
            """
            ALTER TABLE memories_memoryenrichment
                DROP CONSTRAINT memories_memoryenrichment_pkey,
                ADD CONSTRAINT memories_memoryenrichment_pkey PRIMARY KEY (memory_id, workspace_id),
                ADD CONSTRAINT memories_memoryenrichment_memory_id_ws_fk
                    FOREIGN KEY (memory_id, workspace_id)
                    REFERENCES memories_memory (id, workspace_id)
                    ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;
            """,
            """
            ALTER TABLE memories_memoryenrichment
                DROP CONSTRAINT memories_memoryenrichment_memory_id_ws_fk,
                DROP CONSTRAINT memories_memoryenrichment_pkey,
                ADD CONSTRAINT memories_memoryenrichment_pkey PRIMARY KEY (memory_id);
            """,
        ),
    ]
