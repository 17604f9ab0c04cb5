"""A memory's vector kept in its row: ``toast_tuple_target`` at its largest (8160 bytes).

With its 384-dimension vector (1,536 bytes), a memory of a few hundred characters passes the
2 KB past which PostgreSQL moves a row's largest values to the TOAST table; the vector went
there, so every exact distance (a metadata filter's memories ranked one by one, a keyword
candidate's cosine, consolidation's near pairs) read it through the TOAST table's index.

Rows written from now on are kept whole; rows already written stay as they are until they are
written again (``VACUUM FULL memories_memory``, or ``meaning-memory purge --full``, rewrites
them all). Only the table's storage parameter changes: no lock beyond a moment's."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0040_memory_words_metadata")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory SET (toast_tuple_target = 8160)",
            "ALTER TABLE memories_memory RESET (toast_tuple_target)",
        ),
    ]
