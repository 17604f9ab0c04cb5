"""The link indexes that answer a search's entity and degree probes from the index alone carry
the workspace too, now that every such probe names it (docs/SCALING.md, "Ready for Citus")."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0029_citus_keys"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="link",
            name="link_in",
        ),
        migrations.RemoveIndex(
            model_name="link",
            name="link_entity",
        ),
        migrations.RemoveIndex(
            model_name="link",
            name="link_entity_code",
        ),
        migrations.AddIndex(
            model_name="link",
            index=models.Index(
                condition=models.Q(("removed_at__isnull", True), ("target_memory__isnull", False)),
                fields=["target_memory", "source"],
                include=("workspace",),
                name="link_in",
            ),
        ),
        migrations.AddIndex(
            model_name="link",
            index=models.Index(
                condition=models.Q(("removed_at__isnull", True), ("target_entity__isnull", False)),
                fields=["target_entity", "source"],
                include=("workspace",),
                name="link_entity",
            ),
        ),
        migrations.AddIndex(
            model_name="link",
            index=models.Index(
                condition=models.Q(("removed_at__isnull", True), ("target_entity__isnull", False)),
                fields=["target_entity", "source_scope_id"],
                include=("source", "source_code", "workspace"),
                name="link_entity_code",
            ),
        ),
    ]
