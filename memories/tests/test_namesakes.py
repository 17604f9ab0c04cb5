"""Namesakes that are different things: an entity is its name and its type. A writer, the team
or a curator may say that "Jordan" the country is not Jordan the person; a recogniser's guess
never splits a name; each mention goes to the namesake its context fits (its type, then the
names around it); an agent is never pointed at a namesake only memories it cannot read
named."""

import threading
import time

import pytest
from django.db import connection

from memories.models import Entity, Link, Memory
from memories.operations import memory_remember
from memories.services import entity_declare
from memories.services.relations.resolution import NAME_LOCK_SEED


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


def test_a_curator_splits_off_a_namesake_and_splits_it_back(client, alice, charlie):
    from memories.tests.test_dashboard import member

    person = [{"name": "Jordan", "type": "person"}]
    meeting = remember(alice, "Jordan approved the budget.", entities=person)
    # Written before namesakes could stand apart: the country's mentions went to the person.
    trip = remember(alice, "Jordan signed the visa rules for our trip.", entities=person)
    jordan = Entity.objects.get(normalized="jordan")
    member(client, "carol", alice.agent.workspace, "curator")
    path = f"/w/acme/e/{jordan.entity_id}"
    assert "Split off a namesake" in client.get(path).content.decode()
    # Bad input: named by field, nothing moved.
    for form, message in (
        ({"split": "place", "memories": trip.mem_id, "reason": " "}, "say why"),
        ({"split": "person", "memories": trip.mem_id, "reason": "x"}, "is the kind of thing it is"),
        ({"split": "planet", "memories": trip.mem_id, "reason": "x"}, "is not an entity type"),
        ({"split": "place", "memories": "0000000000000000", "reason": "x"}, "no memory that"),
    ):
        body = client.post(path, form).content.decode()
        assert message in body.replace("&#x27;", "'"), form
    assert mentioned(trip, "Jordan")[0] == "person"
    done = client.post(
        path, {"split": "place", "memories": f" {trip.mem_id}, ", "reason": "the country"}
    )
    assert done.status_code == 302
    assert mentioned(trip, "Jordan") == ("place", "a curator's split")
    assert mentioned(meeting, "Jordan")[0] == "person"
    country = Entity.objects.get(normalized="jordan", kind="place")
    assert country.typed_by == "curator"
    assert "Jordan (place)" in client.get(path).content.decode()  # its namesake, linked
    history = [e.action for e in jordan.events.all()] + [e.action for e in country.events.all()]
    assert history == ["split", "split"]
    # Split back from the country: the mention is the person's again.
    client.post(
        f"/w/acme/e/{country.entity_id}",
        {"split": "person", "memories": trip.mem_id, "reason": "it was him after all"},
    )
    assert mentioned(trip, "Jordan")[0] == "person"
    # A viewer cannot split; another workspace's curator gets a 404 like a missing entity.
    client.logout()
    member(client, "vic", alice.agent.workspace, "viewer")
    forged = client.post(path, {"split": "place", "memories": trip.mem_id, "reason": "x"})
    assert forged.status_code == 403 and mentioned(trip, "Jordan")[0] == "person"
    client.logout()
    member(client, "gus", charlie.agent.workspace, "curator")
    assert (
        client.post(path, {"split": "place", "memories": trip.mem_id, "reason": "x"}).status_code
        == 404
    )


def test_splitting_back_restores_a_memory_that_named_both(alice):
    """ "Jordan met Jordan's trade minister": the memory mentions the person and, once split,
    the country; splitting the person's mention off to the country sets the person's aside (one
    mention of the country), and splitting back brings both back as they were."""
    from django.contrib.auth import get_user_model

    from memories.models import Membership
    from memories.services.entity_curation import entity_split

    both = remember(
        alice,
        "Jordan met the trade minister of Jordan.",
        entities=[{"name": "Jordan", "type": "person"}, {"name": "Jordan", "type": "place"}],
    )
    person = Entity.objects.get(normalized="jordan", kind="person")
    place = Entity.objects.get(normalized="jordan", kind="place")
    curator = get_user_model().objects.create_user("cato", password="pw")
    Membership.objects.create(user=curator, workspace=alice.agent.workspace, role="curator")

    def active():
        return sorted(
            Link.objects.filter(source=both, removed_at__isnull=True).values_list(
                "target_entity__kind", flat=True
            )
        )

    assert active() == ["person", "place"]
    entity_split(user=curator, entity=person, kind="place", memories=[both.mem_id], reason="x")
    assert active() == ["place"]
    entity_split(user=curator, entity=place, kind="person", memories=[both.mem_id], reason="y")
    assert active() == ["person", "place"]


def test_a_conversation_line_s_speaker_is_the_person_among_namesakes(alice):
    # The place first: with no context, the surest typed (the oldest) would be the place.
    remember(alice, "We flew to Jordan.", entities=[{"name": "Jordan", "type": "place"}])
    remember(alice, "Jordan approved it.", entities=[{"name": "Jordan", "type": "person"}])
    said = remember(alice, "Jordan: we shipped the release today.")
    kinds = {
        link.target_entity.kind
        for link in Link.objects.filter(source=said, removed_at__isnull=True).select_related(
            "target_entity"
        )
        if link.evidence.get("rule") == "speaker"
    }
    assert kinds == {"person"}


def test_a_known_name_never_points_a_writer_at_a_private_namesake(alice, bob):
    # bob's private memory makes Jordan a person; alice knows only Jordan the country.
    remember(bob, "Jordan approved it.", entities=[{"name": "Jordan", "type": "person"}])
    remember(alice, "Our office in Jordan opened.", entities=[{"name": "Jordan", "type": "place"}])
    private = Entity.objects.get(normalized="jordan", kind="person")
    for text in ("Jordan is hot in July.", "We flew to Jordan for the launch."):
        memory = remember(alice, text)
        links = Link.objects.filter(source=memory, removed_at__isnull=True)
        assert not links.filter(target_entity=private).exists(), text
        assert not any("namesake" in link.evidence for link in links), text


def test_retypes_never_make_two_entities_of_one_name_and_kind_of_thing(alice):
    from memories.services.relations.namesakes import collisions

    workspace = alice.agent.workspace

    def entity(kind, typed_by="extraction"):
        return Entity.objects.create(
            workspace=workspace,
            kind=kind,
            name="ZL",
            normalized="zl",
            keys=["zl"],
            origin="extraction",
            typed_by=typed_by,
        )

    product, place = entity("product"), entity("place")
    # Both would become organisations: the first may, the second would be its twin.
    assert collisions(workspace.pk, {product.pk: "organization", place.pk: "organization"}) == {
        place.pk
    }
    customer = entity("customer", "writer")
    # Beside a customer, an organisation is the same kind of thing: neither may.
    assert collisions(workspace.pk, {product.pk: "organization", place.pk: "organization"}) == {
        product.pk,
        place.pk,
    }
    assert collisions(workspace.pk, {customer.pk: "person"}) == set()


def test_importing_a_merged_namesake_twice_stores_nothing_new(alice, tmp_path):
    from django.core.management import call_command

    from meaning_memory.testing import make_member
    from memories.services import entity_merge

    remember(alice, "Jordan signed.", entities=[{"name": "Jordan", "type": "person"}])
    remember(alice, "Jordan's office opened.", entities=[{"name": "Jordan", "type": "place"}])
    curator = make_member("carol", alice.agent.workspace)
    person, place = (Entity.objects.get(normalized="jordan", kind=k) for k in ("person", "place"))
    entity_merge(user=curator, entity=place, into=person, reason="one Jordan, we thought")
    path = tmp_path / "acme.jsonl"
    call_command("export", "--workspace", "acme", "--output", str(path))
    call_command("import", str(path), "--workspace", "copy")
    copied = Entity.objects.filter(workspace__slug="copy", normalized="jordan")
    rows = sorted(copied.values_list("kind", "merged_into__kind"))
    assert rows == [("person", None), ("place", "person")]  # the merge kept, undoable
    call_command("import", str(path), "--workspace", "copy")
    assert copied.count() == 2
    call_command("import", str(path), "--workspace", "acme")  # into its own workspace
    assert Entity.objects.filter(workspace__slug="acme", normalized="jordan").count() == 2


def test_an_import_joins_namesakes_that_were_only_guesses(alice, tmp_path):
    from django.core.management import call_command

    # As a file from before one entity per name may hold them: the model's two guesses.
    for kind in ("organization", "product"):
        Entity.objects.create(
            workspace=alice.agent.workspace,
            kind=kind,
            name="Apple",
            normalized="apple",
            keys=["apple"],
            origin="extraction",
            typed_by="extraction",
        )
    remember(alice, "Apple sent the contract.", entities=[{"name": "Apple", "type": "customer"}])
    path = tmp_path / "acme.jsonl"
    call_command("export", "--workspace", "acme", "--output", str(path))
    call_command("import", str(path), "--workspace", "copy")
    copied = Entity.objects.filter(workspace__slug="copy", normalized="apple")
    assert copied.filter(merged_into__isnull=True).count() == 1


def test_one_bulk_write_may_name_two_things_of_one_name(alice):
    from memories.operations import memory_remember_bulk

    memory_remember_bulk(
        agent=alice.agent,
        items=[
            {"text": "Jordan approved it.", "entities": [{"name": "Jordan", "type": "person"}]},
            {"text": "We flew to Jordan.", "entities": [{"name": "Jordan", "type": "place"}]},
            {"text": "Jordan called back."},  # the model's guess: one of the two, not a third
        ],
    )
    live = Entity.objects.filter(normalized="jordan", merged_into__isnull=True)
    assert sorted(live.values_list("kind", flat=True)) == ["person", "place"]


@pytest.mark.django_db(transaction=True)
def test_a_write_never_holds_its_claimant_s_new_name_while_waiting_for_a_mention_s(alice):
    """A write resolves its claimant, then its mentions; each new name is locked until the
    write commits. Were the claimant's name locked alone first, a second write holding the
    mention's name and then asking for the claimant's would wait on the first while the first
    waits on it (PostgreSQL ends one of them: a failed write)."""
    workspace = alice.agent.workspace_id
    other = connection.get_new_connection(connection.get_connection_params())
    other.autocommit = True
    other.execute("SET lock_timeout = '20s'")
    other.execute("BEGIN")

    def hold(key):
        other.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))",
            [f"{workspace}:{key}", NAME_LOCK_SEED],
        )

    hold("alderbrook")  # the second write has made the name the first one mentions
    failures = []

    def write():
        try:
            memory_remember(
                agent=alice.agent,
                text="Alderbrook renewed its contract for two years.",
                entities=[{"name": "Alderbrook", "type": "customer"}],
                attributed_to="Quillfeather",
            )
        except Exception as exc:  # noqa: BLE001 - the failure is the finding
            failures.append(exc)
        finally:
            connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    deadline = time.monotonic() + 60
    while other.execute(waiting).fetchone()[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        hold("quillfeather")  # ... and now asks for the first write's claimant
        other.execute("COMMIT")
    finally:
        other.close()
        writer.join(60)
    assert failures == []
    stored = Memory.objects.get(text__startswith="Alderbrook renewed")
    assert stored.attributed_to.normalized == "quillfeather"
    assert Link.objects.filter(source=stored, target_entity__normalized="alderbrook").exists()
