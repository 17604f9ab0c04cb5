"""An entity's mentions by scope with their codes, for the entity filter's shortlist: built
concurrently, as the links table may be large."""

from django.db import migrations, models

from memories.concurrent_indexes import AddIndexConcurrentlyOnce


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0020_mention_codes")]

    operations = [
        AddIndexConcurrentlyOnce(
            model_name="link",
            index=models.Index(
                condition=models.Q(("removed_at__isnull", True), ("target_entity__isnull", False)),
                fields=["target_entity", "source_scope_id"],
                include=("source", "source_code"),
                name="link_entity_code",
            ),
        ),
    ]
