"""Keep statistics on up to 10,000 of the most common words instead of 1,000.

Search asks PostgreSQL's statistics which of a query's words are in more memories of a workspace
than it can rank (``memories.search.common_words``). With the default statistics target only
the 1,000 most common words are listed, and at a million memories the last of them is still in
thousands: the words just below it, too common to rank but not listed, would pull in an
arbitrary sample of their matches. ANALYZE then samples 300,000 rows instead of 30,000.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_memory_workspace_scope_statistics")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory ALTER COLUMN search_vector SET STATISTICS 1000",
            reverse_sql="ALTER TABLE memories_memory ALTER COLUMN search_vector SET STATISTICS -1",
        ),
    ]
