"""The trigger that keeps mentions' copies of a memory's vector signs compares the vectors in a
form ``pg_restore`` can read back: ``pg_dump`` writes ``IS DISTINCT FROM`` between two vectors
without naming pgvector's ``=`` operator, which a restore (run with an empty search path)
cannot then find, so a backup of 0020's trigger did not restore. ``(a = b) IS NOT TRUE`` is
dumped as ``OPERATOR(public.=)``; it also fires when both vectors are null, where the
function's update finds nothing to change."""

from django.db import migrations

TRIGGER = """
DROP TRIGGER IF EXISTS memories_memory_mention_code ON memories_memory;
CREATE TRIGGER memories_memory_mention_code AFTER UPDATE OF scope_id, embedding
    ON memories_memory FOR EACH ROW WHEN (
        OLD.scope_id IS DISTINCT FROM NEW.scope_id OR (OLD.embedding = NEW.embedding) IS NOT TRUE
    ) EXECUTE FUNCTION memories_memory_mention_code();
"""

PREVIOUS = """
DROP TRIGGER IF EXISTS memories_memory_mention_code ON memories_memory;
CREATE TRIGGER memories_memory_mention_code AFTER UPDATE OF scope_id, embedding
    ON memories_memory FOR EACH ROW WHEN (
        OLD.scope_id IS DISTINCT FROM NEW.scope_id OR OLD.embedding IS DISTINCT FROM NEW.embedding
    ) EXECUTE FUNCTION memories_memory_mention_code();
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0025_imported_from")]

    operations = [migrations.RunSQL(TRIGGER, PREVIOUS)]
