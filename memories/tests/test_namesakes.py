"""Namesakes that are different things: an entity is its name and its type. A writer, the team
or a curator may say that "Jordan" the country is not Jordan the person; a recogniser's guess
never splits a name; each mention goes to the namesake its context fits (its type, then the
names around it); an agent is never pointed at a namesake only memories it cannot read
named."""

import pytest

from memories.models import Entity, Link
from memories.operations import memory_remember
from memories.services import entity_declare


def remember(actor, text, **fields):
    return memory_remember(agent=actor.agent, text=text, **fields).memory


def mentioned(memory, name):
    """The (type, how chosen) of the entity of that name a memory mentions."""
    (link,) = Link.objects.filter(
        source=memory, target_entity__normalized=name.lower(), removed_at__isnull=True
    ).select_related("target_entity")
    return link.target_entity.kind, link.evidence.get("namesake")


def test_writers_types_make_namesakes_and_each_mention_goes_to_its_own(alice):
    person = remember(
        alice,
        "Jordan approved the rollout plan.",
        entities=[{"name": "Jordan", "type": "person"}],
    )
    place = remember(
        alice,
        "We opened a sales office in Jordan.",
        entities=[{"name": "Jordan", "type": "place"}],
    )
    live = Entity.objects.filter(normalized="jordan", merged_into__isnull=True)
    assert sorted(live.values_list("kind", flat=True)) == ["person", "place"]
    assert mentioned(person, "Jordan")[0] == "person"
    assert mentioned(place, "Jordan")[0] == "place"
    # Written again with a type: the namesake of that type, never a third entity.
    again = remember(
        alice, "Jordan asked for the slides.", entities=[{"name": "JORDAN ", "type": "person"}]
    )
    assert mentioned(again, "Jordan")[0] == "person"
    assert live.count() == 2


def test_a_recogniser_s_guess_never_splits_a_name(alice):
    remember(alice, "Helios Bank asked for an invoice.")
    remember(alice, "Helios Bank renewed.", entities=[{"name": "Helios Bank", "type": "customer"}])
    # The writer's type replaced the model's guess: one entity, its type the writer's.
    assert list(Entity.objects.filter(normalized="helios bank").values_list("kind")) == [
        ("customer",)
    ]
    # A customer is an organisation: another writer's "organization" is the same thing.
    remember(
        alice,
        "Helios Bank signed the order form.",
        entities=[{"name": "Helios Bank", "type": "organization"}],
    )
    assert Entity.objects.filter(normalized="helios bank").count() == 1


def test_the_names_around_a_mention_choose_its_namesake(alice):
    product = [
        {"name": "Mercury", "type": "product"},
        {"name": "Stripe", "type": "organization"},
    ]
    remember(alice, "Mercury is the product Stripe resells.", entities=product)
    project = [{"name": "Mercury", "type": "project"}, {"name": "Ana Ruiz", "type": "person"}]
    remember(alice, "Mercury is the project Ana Ruiz leads.", entities=project)
    # Neither the model's label (an organisation) nor a writer says which: the names around it.
    about_project = remember(alice, "Ana Ruiz moved the Mercury deadline to May.")
    about_product = remember(alice, "Stripe wants a discount on Mercury licences.")
    assert mentioned(about_project, "Mercury") == ("project", "the names around it")
    assert mentioned(about_product, "Mercury")[0] == "product"


def test_the_team_declares_namesakes_and_an_alias_still_conflicts(alice):
    entity_declare(
        workspace_id=alice.agent.workspace_id, agent=alice.agent, name="Phoenix", kind="project"
    )
    entity_declare(
        workspace_id=alice.agent.workspace_id, agent=alice.agent, name="Phoenix", kind="place"
    )
    declared = Entity.objects.filter(normalized="phoenix", declared=True)
    assert sorted(declared.values_list("kind", flat=True)) == ["place", "project"]
    # Declared again with a type: that namesake, no third.
    entity_declare(
        workspace_id=alice.agent.workspace_id,
        agent=alice.agent,
        name="phoenix",
        kind="project",
        aliases=["PHX"],
    )
    assert declared.count() == 2
    assert Entity.objects.get(normalized="phoenix", kind="project").aliases == ["PHX"]


@pytest.mark.parametrize("kind", ["organization", "person"])
def test_an_agent_is_not_pointed_at_a_namesake_it_cannot_read(alice, bob, kind):
    # alice's private memory names Marrowgate Ventures a place; bob cannot read it.
    remember(
        alice,
        "Marrowgate Ventures is where the offsite is.",
        entities=[{"name": "Marrowgate Ventures", "type": "place"}],
    )
    written = remember(
        bob,
        "Marrowgate Ventures sent the term sheet.",
        entities=[{"name": "Marrowgate Ventures", "type": kind}],
        scope="team:accounts",
    )
    # bob's type stands for his memory: another thing than alice's private place.
    assert mentioned(written, "Marrowgate Ventures")[0] == kind
    answer = bob.client.get(f"/api/v1/memories/{written.mem_id}").json()
    assert "place" not in str(answer)


def test_an_export_and_import_keep_namesakes_apart(alice, tmp_path):
    from django.core.management import call_command

    remember(alice, "Jordan signed.", entities=[{"name": "Jordan", "type": "person"}])
    remember(alice, "Jordan's office opened.", entities=[{"name": "Jordan", "type": "place"}])
    path = tmp_path / "acme.jsonl"
    call_command("export", "--workspace", "acme", "--output", str(path))
    call_command("import", str(path), "--workspace", "copy")
    copied = Entity.objects.filter(workspace__slug="copy", normalized="jordan")
    assert sorted(copied.values_list("kind", flat=True)) == ["person", "place"]
    # Imported again into the same workspace: each is found by its name and kind of thing.
    call_command("import", str(path), "--workspace", "copy")
    assert copied.count() == 2
