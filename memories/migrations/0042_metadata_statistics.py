"""Statistics of the metadata from ten times the sample (``SET STATISTICS 1000``).

The planner estimates how many memories a containment filter keeps by testing it on a sample
of whole metadata documents (every document differs, so the sample's histogram is all it has):
with the default hundred, a customer with one memory in a hundred is guessed from one or two
documents. A metadata filtered search picks how it reads its vector candidates from that
estimate (``memories.search.metadata``), so it is taken from a thousand. ``ANALYZE`` reads ten
times the rows, and planning a filtered statement tests the filter on ten times the
documents."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0041_memory_vectors_inline")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory ALTER COLUMN metadata SET STATISTICS 1000",
            "ALTER TABLE memories_memory ALTER COLUMN metadata SET STATISTICS -1",
        ),
    ]
