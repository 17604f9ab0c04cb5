"""The upgrade to one entity per name (migration 0034): namesakes of different types that a
workspace had become one, the surest kept, nothing lost (the others merged into it, their
mentions counted as its own)."""

import importlib

from django.apps import apps
from django.db import connection

from meaning_memory.testing import make_member
from memories.models import Entity, Link, ProvenanceEvent, Workspace
from memories.operations import memory_remember
from memories.relational.gazetteer import normalize
from memories.services.entity_curation import entity_merge

upgrade = importlib.import_module("memories.migrations.0034_entity_one_per_name")


def test_namesakes_are_merged_into_the_surest(alice):
    workspace = alice.agent.workspace
    other = Workspace.objects.create(name="Other", slug="other")
    # One entity per type and name, as before 0034 and again since 0037: namesakes of
    # different types may stand.

    def entity(kind, origin, declared=False, where=workspace, name="Helios Bank"):
        return Entity.objects.create(
            workspace=where,
            kind=kind,
            name=name,
            normalized="helios bank",
            keys=["helios bank"],
            origin=origin,
            declared=declared,
        )

    guessed = entity("organization", "extraction")
    written = entity("customer", "writer")
    declared = entity("project", "gazetteer", declared=True)
    alone = entity("organization", "extraction", where=other)  # another workspace's: kept
    memory = memory_remember(agent=alice.agent, text="A note.").memory
    Link.objects.create(
        workspace=workspace,
        source=memory,
        target_entity=guessed,
        kind="mentions",
        origin="extraction",
    )
    already = entity("topic", "extraction", name="HB")  # merged into the guess before
    Entity.objects.filter(pk=already.pk).update(normalized="hb", keys=["hb"], merged_into=guessed)

    with connection.cursor() as cursor:  # the checks of the rows made above, as if committed
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    with connection.schema_editor() as editor:
        upgrade.typed_by_and_one_per_name(apps, editor)
        # Then, in the same transaction as the migration, its constraint's index: the merges
        # must not leave deferred foreign-key checks pending ("cannot CREATE INDEX ... because
        # it has pending trigger events" on a database with namesakes to merge).
        (constraint,) = [
            o.constraint for o in upgrade.Migration.operations if hasattr(o, "constraint")
        ]
        editor.add_constraint(Entity, constraint)
    live = Entity.objects.filter(workspace=workspace, normalized="helios bank", merged_into=None)
    assert list(live.values_list("pk", "typed_by")) == [(declared.pk, "declared")]
    assert Entity.objects.get(pk=written.pk).merged_into_id == declared.pk
    assert Entity.objects.get(pk=guessed.pk).merged_into_id == declared.pk
    assert Entity.objects.get(pk=already.pk).merged_into_id == declared.pk  # no chain
    assert Entity.objects.get(pk=written.pk).typed_by == "writer"
    assert Entity.objects.get(pk=alone.pk).merged_into_id is None
    # The mention stays where it was; it counts as the kept entity's through the merge.
    assert Link.objects.get(source=memory, target_entity=guessed)
    with connection.cursor() as cursor:  # what the constraint will hold holds
        cursor.execute(
            "SELECT workspace_id, normalized FROM memories_entity WHERE merged_into_id IS NULL "
            "GROUP BY 1, 2 HAVING count(*) > 1"
        )
        assert cursor.fetchall() == []


traced = importlib.import_module("memories.migrations.0036_entity_merges_traced")


def test_the_upgrades_merges_are_in_each_entitys_history(alice):
    """Migration 0036: an entity merged with no merge event (the upgrade's merges) gets one, by
    no user, naming what it was merged into and why; a curator's merge is not traced twice."""
    workspace = alice.agent.workspace

    def entity(name, kind):
        return Entity.objects.create(
            workspace=workspace, kind=kind, name=name, normalized=normalize(name),
            keys=[normalize(name)], origin="extraction",
        )  # fmt: skip

    kept, upgraded = entity("Jordan", "person"), entity("Jordan Country", "place")
    Entity.objects.filter(pk=upgraded.pk).update(merged_into=kept)  # as 0034 did: no event
    curated = entity("Jordan R.", "person")
    entity_merge(
        user=make_member("carol", workspace), entity=curated, into=kept, reason="the same Jordan"
    )
    with connection.schema_editor() as editor:
        traced.trace_merges(apps, editor)
        traced.trace_merges(apps, editor)  # twice: nothing more
    event = ProvenanceEvent.objects.get(subject_entity=upgraded)
    assert (event.action, event.user) == ("merge", None)
    assert "migration 0034" in event.reason
    assert event.new_values["merged_into"] == kept.entity_id
    assert event.old_values["type"] == "place" and event.new_values["type"] == "person"
    assert ProvenanceEvent.objects.filter(subject_entity=curated).count() == 1
