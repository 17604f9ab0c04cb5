"""A kept compiled file records the memories whose words it may hold, so an erasure drops the
files that name an erased memory by its id. Files kept before have none (NULL): an erasure in
their workspace drops them all (``consolidation.erasure``)."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("consolidation", "0005_citus_keys"),
    ]

    operations = [
        migrations.AddField(
            model_name="compiledsnapshot",
            name="memory_ids",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.BigIntegerField(), blank=True, null=True, size=None
            ),
        ),
        migrations.AddIndex(
            model_name="compiledsnapshot",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["memory_ids"], name="snapshot_memory_ids_gin"
            ),
        ),
    ]
