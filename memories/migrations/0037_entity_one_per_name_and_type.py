"""An entity is its name and its type: namesakes of different types ("Jordan" the person and
the country) may stand apart again, so a curator can undo the merges the upgrade to one entity
per name made (migration 0034). The new constraint is weaker than the old: no row changes."""

from django.db import migrations, models
from django.db.models import Q


class Migration(migrations.Migration):
    dependencies = [("memories", "0036_entity_merges_traced")]

    operations = [
        migrations.RemoveConstraint(model_name="entity", name="entity_one_per_name"),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.UniqueConstraint(
                condition=Q(merged_into__isnull=True),
                fields=("workspace", "normalized", "kind"),
                name="entity_one_per_name_and_type",
            ),
        ),
    ]
