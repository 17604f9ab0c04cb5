"""Idempotent writes: a writer's ``idempotency_key`` and the ``content_hash`` of scope, source
and text. Adding the columns with a constant default rewrites nothing; then one UPDATE fills the
existing rows' hash (a write of every row) with the formula of ``services.content_hash``."""

from django.db import migrations, models

FILL = """
UPDATE memories_memory SET content_hash = encode(sha256(convert_to(
    scope_id::text || ':' || length(source)::text || ':' || source || text, 'UTF8')), 'hex')
WHERE content_hash = ''
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0009_memory_compile_index")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="idempotency_key",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.AddField(
            model_name="memory",
            name="content_hash",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
    ]
