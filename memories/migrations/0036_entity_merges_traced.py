"""Every automatic change leaves a trace: the namesakes that upgrading to one entity per name
(0034) merged into one had no event in their history. Each entity merged into another with no
``merge`` event of its own gets one now, by no user, saying which upgrade merged it and into
what, so a curator sees on the entity's page what the engine did and why."""

from django.db import migrations

REASON = (
    "merged by the upgrade to one entity per name (migration 0034): entities that shared a "
    "normalised name became one, the surest type kept"
)


def trace_merges(apps, schema_editor):
    Entity = apps.get_model("memories", "Entity")
    ProvenanceEvent = apps.get_model("memories", "ProvenanceEvent")
    db = schema_editor.connection.alias
    traced = set(
        ProvenanceEvent.objects.using(db)
        .filter(action="merge", subject_entity__isnull=False)
        .values_list("subject_entity_id", flat=True)
    )
    merged = (
        Entity.objects.using(db)
        .filter(merged_into__isnull=False)
        .exclude(pk__in=traced)
        .select_related("merged_into")
    )
    events = [
        ProvenanceEvent(
            workspace_id=entity.workspace_id,
            subject_entity_id=entity.pk,
            action="merge",
            old_values={"merged_into": None, "type": entity.kind},
            new_values={
                "merged_into": entity.merged_into.entity_id,
                "name": entity.merged_into.name,
                "type": entity.merged_into.kind,
                "moved": [],
            },
            reason=REASON,
        )
        for entity in merged.iterator()
    ]
    ProvenanceEvent.objects.using(db).bulk_create(events, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [("memories", "0035_memory_scope_no_own_index")]

    operations = [migrations.RunPython(trace_merges, migrations.RunPython.noop)]
