"""One entity per workspace and normalised name: who gave each entity's type (``typed_by``),
and the entities that shared a name under different types merged into one, the surest kept."""

from django.conf import settings
from django.db import migrations, models

#: How sure each source of a type is (``memories.models.relations.TYPE_RANK``, as of now).
RANK = {"extraction": 0, "speaker": 1, "writer": 2, "declared": 3, "curator": 4}


def typed_by_and_one_per_name(apps, schema_editor):
    Entity = apps.get_model("memories", "Entity")
    ProvenanceEvent = apps.get_model("memories", "ProvenanceEvent")
    db = schema_editor.connection.alias
    Entity.objects.using(db).filter(declared=True).update(typed_by="declared")
    Entity.objects.using(db).filter(declared=False, origin__in=["writer", "member"]).update(
        typed_by="writer"
    )
    retyped = set(
        ProvenanceEvent.objects.using(db)
        .filter(action="retype", subject_entity__isnull=False)
        .values_list("subject_entity_id", flat=True)
    )
    Entity.objects.using(db).filter(pk__in=retyped).update(typed_by="curator")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT e.workspace_id, e.normalized, e.id, e.typed_by, e.declared,
                (SELECT count(*) FROM memories_link l
                 WHERE l.workspace_id = e.workspace_id AND l.target_entity_id = e.id
                   AND l.removed_at IS NULL)
            FROM memories_entity e
            WHERE e.merged_into_id IS NULL AND (e.workspace_id, e.normalized) IN (
                SELECT workspace_id, normalized FROM memories_entity
                WHERE merged_into_id IS NULL
                GROUP BY workspace_id, normalized HAVING count(*) > 1
            )
            """
        )
        groups = {}
        for workspace_id, normalized, pk, typed_by, declared, links in cursor.fetchall():
            groups.setdefault((workspace_id, normalized), []).append(
                (declared, RANK.get(typed_by, 0), links, -pk)
            )
    for rows in groups.values():
        rows.sort(reverse=True)
        keep = -rows[0][3]
        others = [-row[3] for row in rows[1:]]
        Entity.objects.using(db).filter(merged_into_id__in=others).update(merged_into_id=keep)
        Entity.objects.using(db).filter(pk__in=others).update(merged_into_id=keep)
    # The merges changed foreign keys whose checks PostgreSQL defers to the commit; the
    # constraint's index below, in the same transaction, cannot be built while they are pending.
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0033_entity_retype_event"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="entity", name="entity_unique_name"),
        migrations.AddField(
            model_name="entity",
            name="typed_by",
            field=models.CharField(
                choices=[
                    ("curator", "Curator"),
                    ("declared", "Declared"),
                    ("writer", "Writer"),
                    ("speaker", "Speaker"),
                    ("extraction", "Extraction"),
                ],
                default="extraction",
                help_text="Who gave its type; the recogniser's type follows most of its mentions.",
                max_length=12,
            ),
        ),
        migrations.RunPython(typed_by_and_one_per_name, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.UniqueConstraint(
                condition=models.Q(("merged_into__isnull", True)),
                fields=("workspace", "normalized"),
                name="entity_one_per_name",
            ),
        ),
    ]
