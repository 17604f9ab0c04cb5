"""An entity's history, and the memories whose entities were not extracted yet: built
concurrently, as both tables may be large."""

from django.db import migrations, models

from memories.concurrent_indexes import AddIndexConcurrentlyOnce


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0017_entities_and_links")]

    operations = [
        AddIndexConcurrentlyOnce(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("relations_version__isnull", True)),
                fields=["workspace", "id"],
                name="memory_unlinked",
            ),
        ),
        AddIndexConcurrentlyOnce(
            model_name="provenanceevent",
            index=models.Index(
                condition=models.Q(("subject_entity__isnull", False)),
                fields=["subject_entity", "created_at"],
                name="provenance_entity_time",
            ),
        ),
    ]
