"""Every key of a workspace's table carries ``workspace_id`` (docs/SCALING.md, "Ready for
Citus"), part one: the public ids (``mem_id``, ``link_id`` …) and the unique pairs are unique
with the workspace; the foreign keys between workspace tables leave Django, to come back as
composite keys ``(column, workspace_id)`` once every primary key includes the workspace
(``consolidation`` 0005, after that app's own foreign keys are gone too); a memory's degree
row carries its workspace, kept by the same triggers, which now name the workspace in every
statement they run."""

import importlib

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import memories.models

_degree = importlib.import_module("memories.migrations.0019_memory_degree")
_mentions = importlib.import_module("memories.migrations.0020_mention_codes")
DIMENSIONS = _mentions.DIMENSIONS

#: 0019's and 0020's functions, each statement naming the workspace of the row it follows.
FUNCTIONS = f"""
DROP FUNCTION IF EXISTS memories_degree_add(bigint, integer);
CREATE OR REPLACE FUNCTION memories_degree_add(memory bigint, workspace bigint, delta integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF memory IS NULL OR delta = 0 THEN
        RETURN;
    END IF;
    IF delta > 0 THEN
        INSERT INTO memories_memorydegree (memory_id, workspace_id, links)
        VALUES (memory, workspace, delta)
        ON CONFLICT (memory_id, workspace_id)
        DO UPDATE SET links = memories_memorydegree.links + delta;
    ELSE  -- a memory being deleted may have lost its row already
        UPDATE memories_memorydegree SET links = links + delta
            WHERE memory_id = memory AND workspace_id = workspace;
    END IF;
END $$;

CREATE OR REPLACE FUNCTION memories_link_degree() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.removed_at IS NULL THEN
        PERFORM memories_degree_add(OLD.source_id, OLD.workspace_id, -1);
        PERFORM memories_degree_add(OLD.target_memory_id, OLD.workspace_id, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.removed_at IS NULL THEN
        PERFORM memories_degree_add(NEW.source_id, NEW.workspace_id, 1);
        PERFORM memories_degree_add(NEW.target_memory_id, NEW.workspace_id, 1);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memories_memory_degree() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        IF OLD.follows_id IS NOT NULL THEN
            PERFORM memories_degree_add(OLD.id, OLD.workspace_id, -1);
            PERFORM memories_degree_add(OLD.follows_id, OLD.workspace_id, -1);
        END IF;
        IF OLD.superseded_by_id IS NOT NULL THEN
            PERFORM memories_degree_add(OLD.id, OLD.workspace_id, -1);
            PERFORM memories_degree_add(OLD.superseded_by_id, OLD.workspace_id, -1);
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        IF NEW.follows_id IS NOT NULL THEN
            PERFORM memories_degree_add(NEW.id, NEW.workspace_id, 1);
            PERFORM memories_degree_add(NEW.follows_id, NEW.workspace_id, 1);
        END IF;
        IF NEW.superseded_by_id IS NOT NULL THEN
            PERFORM memories_degree_add(NEW.id, NEW.workspace_id, 1);
            PERFORM memories_degree_add(NEW.superseded_by_id, NEW.workspace_id, 1);
        END IF;
    END IF;
    RETURN NULL;
END $$;

-- Every degree counted again from the tables (after a load that bypassed the triggers).
CREATE OR REPLACE FUNCTION memories_recount_degrees() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    counted bigint;
BEGIN
    DELETE FROM memories_memorydegree;
    INSERT INTO memories_memorydegree (memory_id, workspace_id, links)
    SELECT id, workspace_id, count(*) FROM (
        SELECT id, workspace_id FROM memories_memory WHERE follows_id IS NOT NULL
        UNION ALL SELECT follows_id, workspace_id FROM memories_memory
            WHERE follows_id IS NOT NULL
        UNION ALL SELECT id, workspace_id FROM memories_memory
            WHERE superseded_by_id IS NOT NULL
        UNION ALL SELECT superseded_by_id, workspace_id FROM memories_memory
            WHERE superseded_by_id IS NOT NULL
        UNION ALL SELECT source_id, workspace_id FROM memories_link WHERE removed_at IS NULL
        UNION ALL SELECT target_memory_id, workspace_id FROM memories_link
            WHERE removed_at IS NULL AND target_memory_id IS NOT NULL
    ) AS ends
    GROUP BY id, workspace_id;
    GET DIAGNOSTICS counted = ROW_COUNT;
    RETURN counted;
END $$;

CREATE OR REPLACE FUNCTION memories_link_mention_code() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.target_entity_id IS NULL THEN
        NEW.source_scope_id := NULL;
        NEW.source_code := NULL;
    ELSE
        SELECT m.scope_id, binary_quantize(m.embedding)::bit({DIMENSIONS})
            INTO NEW.source_scope_id, NEW.source_code
            FROM memories_memory m
            WHERE m.id = NEW.source_id AND m.workspace_id = NEW.workspace_id;
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION memories_memory_mention_code() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memories_link
        SET source_scope_id = NEW.scope_id,
            source_code = binary_quantize(NEW.embedding)::bit({DIMENSIONS})
        WHERE source_id = NEW.id AND workspace_id = NEW.workspace_id
            AND target_entity_id IS NOT NULL;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memories_refill_mention_codes() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    counted bigint;
BEGIN
    UPDATE memories_link l
        SET source_scope_id = m.scope_id,
            source_code = binary_quantize(m.embedding)::bit({DIMENSIONS})
        FROM memories_memory m
        WHERE m.id = l.source_id AND m.workspace_id = l.workspace_id
            AND l.target_entity_id IS NOT NULL;
    GET DIAGNOSTICS counted = ROW_COUNT;
    RETURN counted;
END $$;
"""

#: Undone: 0019's and 0020's functions as they were (their last statements, a recount and a
#: refill, run again, harmlessly).
PREVIOUS_FUNCTIONS = (
    "DROP FUNCTION IF EXISTS memories_degree_add(bigint, bigint, integer);\n"
    + _degree.FUNCTIONS
    + _mentions.FUNCTIONS.split("CREATE TRIGGER")[0]
)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0028_agent_wrote_at"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="divergence",
            name="divergence_one_per_pair",
        ),
        migrations.RemoveConstraint(
            model_name="link",
            name="link_unique_memory",
        ),
        migrations.RemoveConstraint(
            model_name="link",
            name="link_unique_entity",
        ),
        migrations.RemoveConstraint(
            model_name="memory",
            name="memory_unique_scope_idempotency_key",
        ),
        migrations.AddField(
            model_name="memorydegree",
            name="workspace",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.workspace",
            ),
        ),
        migrations.RunSQL(
            "UPDATE memories_memorydegree d SET workspace_id = m.workspace_id"
            " FROM memories_memory m WHERE m.id = d.memory_id",
            migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="memorydegree",
            name="workspace",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.workspace",
            ),
        ),
        migrations.RunSQL(FUNCTIONS, PREVIOUS_FUNCTIONS),
        migrations.AlterField(
            model_name="divergence",
            name="divergence_id",
            field=models.CharField(
                default=memories.models.new_public_id, editable=False, max_length=16
            ),
        ),
        migrations.AlterField(
            model_name="divergence",
            name="first",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="divergence",
            name="link",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="memories.link",
            ),
        ),
        migrations.AlterField(
            model_name="divergence",
            name="second",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="entity",
            name="entity_id",
            field=models.CharField(
                default=memories.models.new_public_id, editable=False, max_length=16
            ),
        ),
        migrations.AlterField(
            model_name="entity",
            name="merged_into",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="merged",
                to="memories.entity",
            ),
        ),
        migrations.AlterField(
            model_name="link",
            name="link_id",
            field=models.CharField(
                default=memories.models.new_public_id, editable=False, max_length=16
            ),
        ),
        migrations.AlterField(
            model_name="link",
            name="source",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="links_out",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="link",
            name="target_entity",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="links",
                to="memories.entity",
            ),
        ),
        migrations.AlterField(
            model_name="link",
            name="target_memory",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="links_in",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="attributed_to",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                help_text="Who made the claim.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="attributed",
                to="memories.entity",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="follows",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="mem_id",
            field=models.CharField(
                default=memories.models.new_mem_id, editable=False, max_length=16
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="superseded_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="supersedes",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="memorydegree",
            name="memory",
            field=models.OneToOneField(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                primary_key=True,
                related_name="degree",
                serialize=False,
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="provenanceevent",
            name="memory",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="provenance",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="provenanceevent",
            name="subject_entity",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="events",
                to="memories.entity",
            ),
        ),
        migrations.AlterField(
            model_name="thread",
            name="thread_id",
            field=models.CharField(
                default=memories.models.new_public_id, editable=False, max_length=16
            ),
        ),
        migrations.AlterField(
            model_name="threadmember",
            name="memory",
            field=models.OneToOneField(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="thread_member",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="threadmember",
            name="thread",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="members",
                to="memories.thread",
            ),
        ),
        migrations.AddConstraint(
            model_name="divergence",
            constraint=models.UniqueConstraint(
                fields=("second", "first", "workspace"), name="divergence_one_per_pair"
            ),
        ),
        migrations.AddConstraint(
            model_name="divergence",
            constraint=models.UniqueConstraint(
                fields=("divergence_id", "workspace"), name="divergence_unique_divergence_id"
            ),
        ),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.UniqueConstraint(
                fields=("entity_id", "workspace"), name="entity_unique_entity_id"
            ),
        ),
        migrations.AddConstraint(
            model_name="link",
            constraint=models.UniqueConstraint(
                fields=("link_id", "workspace"), name="link_unique_link_id"
            ),
        ),
        migrations.AddConstraint(
            model_name="link",
            constraint=models.UniqueConstraint(
                condition=models.Q(("removed_at__isnull", True), ("target_memory__isnull", False)),
                fields=("source", "target_memory", "kind", "workspace"),
                name="link_unique_memory",
            ),
        ),
        migrations.AddConstraint(
            model_name="link",
            constraint=models.UniqueConstraint(
                condition=models.Q(("removed_at__isnull", True), ("target_entity__isnull", False)),
                fields=("source", "target_entity", "kind", "workspace"),
                name="link_unique_entity",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                fields=("mem_id", "workspace"), name="memory_unique_mem_id"
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                condition=models.Q(("idempotency_key", ""), _negated=True),
                fields=("scope", "idempotency_key", "workspace"),
                name="memory_unique_scope_idempotency_key",
            ),
        ),
        migrations.AddConstraint(
            model_name="thread",
            constraint=models.UniqueConstraint(
                fields=("thread_id", "workspace"), name="thread_unique_thread_id"
            ),
        ),
    ]
