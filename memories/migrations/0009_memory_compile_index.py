"""A covering index for the compiled memory file, which reads the ordering columns of every
active memory in a workspace's scopes (``memories.compile``): an index-only scan instead of a
read of the wide rows. Built concurrently, so outside a transaction."""

from django.db import migrations, models

from memories.concurrent_indexes import AddIndexConcurrentlyOnce


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0008_episode_index")]

    operations = [
        AddIndexConcurrentlyOnce(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("status", "active")),
                fields=["workspace", "scope"],
                include=(
                    "id",
                    "significance",
                    "pinned",
                    "created_at",
                    "category",
                    "valid_from",
                    "valid_until",
                ),
                name="memory_compile",
            ),
        ),
    ]
