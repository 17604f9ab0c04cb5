"""A mention's copy of its memory's scope and vector sign bits (``Link.source_scope_id``,
``Link.source_code``), the triggers that keep them true whoever writes (a bulk COPY
included), and their first fill."""

import pgvector.django.bit
from django.db import migrations, models

DIMENSIONS = 384

FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION memories_link_mention_code() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.target_entity_id IS NULL THEN
        NEW.source_scope_id := NULL;
        NEW.source_code := NULL;
    ELSE
        SELECT m.scope_id, binary_quantize(m.embedding)::bit({DIMENSIONS})
            INTO NEW.source_scope_id, NEW.source_code
            FROM memories_memory m WHERE m.id = NEW.source_id;
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION memories_memory_mention_code() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memories_link
        SET source_scope_id = NEW.scope_id,
            source_code = binary_quantize(NEW.embedding)::bit({DIMENSIONS})
        WHERE source_id = NEW.id AND target_entity_id IS NOT NULL;
    RETURN NULL;
END $$;

CREATE TRIGGER memories_link_mention_code BEFORE INSERT OR UPDATE OF source_id, target_entity_id
    ON memories_link FOR EACH ROW EXECUTE FUNCTION memories_link_mention_code();
CREATE TRIGGER memories_memory_mention_code AFTER UPDATE OF scope_id, embedding
    ON memories_memory FOR EACH ROW WHEN (
        OLD.scope_id IS DISTINCT FROM NEW.scope_id OR OLD.embedding IS DISTINCT FROM NEW.embedding
    ) EXECUTE FUNCTION memories_memory_mention_code();

-- Every mention's copy filled again from its memory (after a load that bypassed the triggers).
CREATE OR REPLACE FUNCTION memories_refill_mention_codes() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    counted bigint;
BEGIN
    UPDATE memories_link l
        SET source_scope_id = m.scope_id,
            source_code = binary_quantize(m.embedding)::bit({DIMENSIONS})
        FROM memories_memory m
        WHERE m.id = l.source_id AND l.target_entity_id IS NOT NULL;
    GET DIAGNOSTICS counted = ROW_COUNT;
    RETURN counted;
END $$;

SELECT memories_refill_mention_codes();
"""

REVERSE = """
DROP TRIGGER IF EXISTS memories_link_mention_code ON memories_link;
DROP TRIGGER IF EXISTS memories_memory_mention_code ON memories_memory;
DROP FUNCTION IF EXISTS memories_link_mention_code();
DROP FUNCTION IF EXISTS memories_memory_mention_code();
DROP FUNCTION IF EXISTS memories_refill_mention_codes();
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0019_memory_degree")]

    operations = [
        migrations.AddField(
            model_name="link",
            name="source_code",
            field=pgvector.django.bit.BitField(
                blank=True, editable=False, length=DIMENSIONS, null=True
            ),
        ),
        migrations.AddField(
            model_name="link",
            name="source_scope_id",
            field=models.BigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.RunSQL(FUNCTIONS, REVERSE),
    ]
