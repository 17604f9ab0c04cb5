"""An index for the lookup every write with a session makes: the last memories of that session
in the scope (``services.episode_before``). Without it the lookup reads all of the scope's
memories. Built concurrently, so outside a transaction."""

from django.db import migrations, models

from memories.concurrent_indexes import AddIndexConcurrentlyOnce


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0007_memory_episode_embedding_follows")]

    operations = [
        AddIndexConcurrentlyOnce(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("session", ""), _negated=True),
                fields=["scope", "session", "created_at"],
                name="memory_episode",
            ),
        ),
    ]
