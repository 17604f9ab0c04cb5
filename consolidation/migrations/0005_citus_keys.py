"""Every key of a workspace's table carries ``workspace_id`` (docs/SCALING.md, "Ready for
Citus"), part two, after ``memories`` 0029: this app's public ids and unique pairs with the
workspace, a word count's workspace, then, every foreign key between workspace tables gone
from both apps, each such table's primary key and remaining single-column unique keys widened
with ``workspace_id``, and the foreign keys back as composite ``(column, workspace_id)``
keys, which also guarantee that a row and what it points to share their workspace.

Django still knows ``id`` as the primary key, and the one-to-one fields as unique: both stay
true (an id comes from its sequence; a composite key pins each row's workspace to its
target's, so unique with the workspace is unique). The keys' names are kept. A later migration
that alters one of these fields must drop and add the widened keys itself."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import memories.models

#: The tables that hold a workspace's data (distributed by ``workspace_id`` on Citus), as they
#: were when this migration was written (``meaning_memory.distribution`` is the list now).
WORKSPACE_TABLES = [
    "memories_memory",
    "memories_entity",
    "memories_link",
    "memories_memorydegree",
    "memories_provenanceevent",
    "memories_divergence",
    "memories_divergencescan",
    "memories_thread",
    "memories_threadmember",
    "memories_sourcerecord",
    "consolidation_consolidationrun",
    "consolidation_phasewatermark",
    "consolidation_compiledsnapshot",
    "consolidation_supersessionproposal",
    "consolidation_threadcorpus",
    "consolidation_wordfrequency",
]

#: Every foreign key from one workspace table to another: (table, column, target table).
WORKSPACE_REFERENCES = [
    ("memories_memory", "superseded_by_id", "memories_memory"),
    ("memories_memory", "attributed_to_id", "memories_entity"),
    ("memories_memory", "follows_id", "memories_memory"),
    ("memories_entity", "merged_into_id", "memories_entity"),
    ("memories_link", "source_id", "memories_memory"),
    ("memories_link", "target_memory_id", "memories_memory"),
    ("memories_link", "target_entity_id", "memories_entity"),
    ("memories_memorydegree", "memory_id", "memories_memory"),
    ("memories_provenanceevent", "memory_id", "memories_memory"),
    ("memories_provenanceevent", "subject_entity_id", "memories_entity"),
    ("memories_divergence", "first_id", "memories_memory"),
    ("memories_divergence", "second_id", "memories_memory"),
    ("memories_divergence", "link_id", "memories_link"),
    ("memories_threadmember", "thread_id", "memories_thread"),
    ("memories_threadmember", "memory_id", "memories_memory"),
    ("consolidation_compiledsnapshot", "run_id", "consolidation_consolidationrun"),
    ("consolidation_supersessionproposal", "older_id", "memories_memory"),
    ("consolidation_supersessionproposal", "newer_id", "memories_memory"),
    ("consolidation_supersessionproposal", "entity_id", "memories_entity"),
]

_KEYS = """
SELECT con.conname, con.contype,
       array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint con
WHERE con.conrelid = %s::regclass AND con.contype IN ('p', 'u')
ORDER BY con.conname
"""


def _foreign_key(table: str, column: str) -> str:
    return f"{table}_{column}_ws_fk"


def _rekey(cursor, table: str, widen: bool) -> None:
    """The table's primary key and unique constraints with ``workspace_id`` last (``widen``),
    or without it where it was added last (undone)."""
    cursor.execute(_KEYS, [table])
    for name, kind, columns in cursor.fetchall():
        if widen and "workspace_id" not in columns:
            columns = [*columns, "workspace_id"]
        elif (
            not widen
            and len(columns) > 1
            and columns[-1] == "workspace_id"
            and name.endswith(("_pkey", "_key"))
        ):
            columns = columns[:-1]
        else:
            continue
        key = "PRIMARY KEY" if kind == "p" else "UNIQUE"
        listed = ", ".join(f'"{c}"' for c in columns)
        cursor.execute(
            f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}",'
            f' ADD CONSTRAINT "{name}" {key} ({listed})'
        )


def widen_keys(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for table in WORKSPACE_TABLES:
            _rekey(cursor, table, widen=True)
        for table, column, target in WORKSPACE_REFERENCES:
            cursor.execute(
                f'ALTER TABLE "{table}" ADD CONSTRAINT "{_foreign_key(table, column)}"'
                f' FOREIGN KEY ("{column}", "workspace_id")'
                f' REFERENCES "{target}" ("id", "workspace_id") DEFERRABLE INITIALLY DEFERRED'
            )


def narrow_keys(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for table, column, _ in WORKSPACE_REFERENCES:
            cursor.execute(
                f'ALTER TABLE "{table}" DROP CONSTRAINT IF EXISTS "{_foreign_key(table, column)}"'
            )
        for table in WORKSPACE_TABLES:
            _rekey(cursor, table, widen=False)


class Migration(migrations.Migration):
    dependencies = [
        ("consolidation", "0004_supersession_proposals"),
        ("memories", "0029_citus_keys"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="supersessionproposal",
            name="proposal_one_per_pair",
        ),
        migrations.RemoveConstraint(
            model_name="wordfrequency",
            name="word_frequency_one_per_word",
        ),
        migrations.AddField(
            model_name="wordfrequency",
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
            "UPDATE consolidation_wordfrequency w SET workspace_id = s.workspace_id"
            " FROM memories_scope s WHERE s.id = w.scope_id",
            migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="wordfrequency",
            name="workspace",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="compiledsnapshot",
            name="run",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="consolidation.consolidationrun",
            ),
        ),
        migrations.AlterField(
            model_name="consolidationrun",
            name="run_id",
            field=models.CharField(
                default=memories.models.new_public_id, editable=False, max_length=16
            ),
        ),
        migrations.AlterField(
            model_name="supersessionproposal",
            name="entity",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.entity",
            ),
        ),
        migrations.AlterField(
            model_name="supersessionproposal",
            name="newer",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="supersessionproposal",
            name="older",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="supersessionproposal",
            name="proposal_id",
            field=models.CharField(
                default=memories.models.new_public_id, editable=False, max_length=16
            ),
        ),
        migrations.AddConstraint(
            model_name="consolidationrun",
            constraint=models.UniqueConstraint(
                fields=("run_id", "workspace"), name="run_unique_run_id"
            ),
        ),
        migrations.AddConstraint(
            model_name="supersessionproposal",
            constraint=models.UniqueConstraint(
                fields=("newer", "older", "workspace"), name="proposal_one_per_pair"
            ),
        ),
        migrations.AddConstraint(
            model_name="supersessionproposal",
            constraint=models.UniqueConstraint(
                fields=("proposal_id", "workspace"), name="proposal_unique_proposal_id"
            ),
        ),
        migrations.AddConstraint(
            model_name="wordfrequency",
            constraint=models.UniqueConstraint(
                fields=("scope", "word", "workspace"), name="word_frequency_one_per_word"
            ),
        ),
        migrations.RunPython(widen_keys, narrow_keys),
    ]
