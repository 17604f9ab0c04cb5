"""No existence oracle (issue 37, finding 3): what an agent is told when it names an entity
(the link's evidence, the entity's time, a declaration's status) is computed from what it may
read, so it cannot learn which names another agent wrote in a private scope."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from memories.models import Entity


def remember(actor, text, name, **fields):
    answer = actor.client.post(
        "/api/v1/memories",
        {"text": text, "entities": [{"name": name, "type": "customer"}], **fields},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["mem_id"]


def told(actor, mem_id, name):
    """What ``actor`` is told of its memory's mention of ``name``: the link's evidence, and
    the entity's time."""
    memory = actor.client.get(f"/api/v1/memories/{mem_id}").json()
    [link] = [link for link in memory["links"] if link.get("entity", {}).get("name", "") == name]
    [entity] = [e for e in memory["entities"] if e["name"] == name]
    return link["evidence"], datetime.fromisoformat(entity["created_at"])


def test_a_name_only_another_agents_private_memory_wrote_is_new_to_the_writer(alice, bob):
    remember(bob, "Helios Bank called about their renewal (private).", "Helios Bank")
    after_bob = timezone.now()

    known_elsewhere = remember(alice, "Helios Bank asked for an invoice.", "Helios Bank")
    unknown = remember(alice, "Nimbus Foods asked for an invoice.", "Nimbus Foods")

    evidence, seen = told(alice, known_elsewhere, "Helios Bank")
    evidence_unknown, _ = told(alice, unknown, "Nimbus Foods")
    assert evidence == {"given": "Helios Bank", "type": "customer", "resolved": "new entity"}
    assert evidence_unknown == {**evidence, "given": "Nimbus Foods"}
    assert seen >= after_bob  # not the time bob's private memory first named it
    # Bob, who wrote it first, still sees his own time.
    bobs = bob.client.get("/api/v1/entities?query=helios").json()["results"]
    assert datetime.fromisoformat(bobs[0]["created_at"]) < after_bob


def test_a_name_the_writer_may_read_resolves_as_known(alice, bob):
    remember(bob, "Helios Bank renews in March.", "Helios Bank", scope="team:accounts")

    mine = remember(alice, "Helios Bank asked for an invoice.", "Helios Bank")

    evidence, _ = told(alice, mine, "Helios Bank")
    assert evidence["resolved"] == "exact"


def test_declaring_a_name_another_agent_wrote_privately_answers_as_for_a_new_one(alice, bob):
    remember(bob, "Orion Retail asked about pricing (private).", "Orion Retail")
    before = timezone.now()

    theirs = alice.client.post(
        "/api/v1/entities", {"name": "Orion retail", "type": "customer"}, format="json"
    )
    unknown = alice.client.post(
        "/api/v1/entities", {"name": "Nimbus Foods", "type": "customer"}, format="json"
    )

    assert theirs.status_code == unknown.status_code == 201
    declared = theirs.json()
    assert declared["name"] == "Orion retail"  # as the declaration names it
    assert datetime.fromisoformat(declared["created_at"]) >= before
    assert set(declared) == set(unknown.json())
    # One row per type and name in a workspace: bob's mentions now name the declared entity.
    assert Entity.objects.filter(normalized="orion retail").count() == 1


def test_declaring_a_name_the_agent_may_read_answers_200(alice, bob):
    remember(bob, "Orion Retail asked about pricing.", "Orion Retail", scope="team:accounts")

    answer = alice.client.post(
        "/api/v1/entities", {"name": "Orion Retail", "type": "customer"}, format="json"
    )

    assert answer.status_code == 200


def test_a_type_given_where_the_entity_cannot_be_seen_does_not_change_it(alice, bob):
    """The row of a name is shared: a writer who may not know of it (only another agent's
    private memories name it) cannot retype it, and its owner sees no change; its own type
    makes a namesake of its own."""
    bob.client.post(
        "/api/v1/memories", {"text": "We signed a deal with Helios Bank (private)."}, format="json"
    )
    guessed = Entity.objects.get(normalized="helios bank")
    assert (guessed.kind, guessed.typed_by) == ("organization", "extraction")
    mem_id = remember(alice, "Helios Bank asked for an invoice.", "Helios Bank")
    evidence, _ = told(alice, mem_id, "Helios Bank")
    assert evidence["resolved"] == "new entity"
    guessed.refresh_from_db()
    assert (guessed.kind, guessed.typed_by) == ("organization", "extraction")
    bobs = bob.client.get("/api/v1/entities?query=helios").json()["results"]
    assert [e["type"] for e in bobs] == ["organization"]
    # Nor once her own memory names it too: bob's private memory still does.
    remember(alice, "Helios Bank paid the invoice.", "Helios Bank")
    guessed.refresh_from_db()
    assert (guessed.kind, guessed.typed_by) == ("organization", "extraction")
    # Where every memory that names it is one she may read, her type is the entity's.
    bob.client.post(
        "/api/v1/memories",
        {"text": "We signed a deal with Orion Retail.", "scope": "team:accounts"},
        format="json",
    )
    assert Entity.objects.get(normalized="orion retail").kind == "organization"
    remember(alice, "Orion Retail renewed.", "Orion Retail", scope="team:accounts")
    assert Entity.objects.get(normalized="orion retail").kind == "customer"


def _shown(entity: dict) -> dict:
    """An entity answer without what differs between any two names (its id and name)."""
    return {k: v for k, v in entity.items() if k not in {"entity_id", "name", "created_at"}}


def test_every_field_of_a_declaration_is_that_of_a_new_name(alice, bob):
    """The origin too: a name another agent gave privately, one the recogniser found in its
    private text, and one never written are declared alike ("gazetteer", now)."""
    remember(bob, "Marrowgate Ventures signed the lease (private).", "Marrowgate Ventures")
    bob.client.post(
        "/api/v1/memories",
        {"text": "Talked to Quenby Harlow Partners about the deal."},
        format="json",
    )
    assert Entity.objects.filter(normalized="quenby harlow partners", origin="extraction")
    before = timezone.now()
    answers = [
        alice.client.post("/api/v1/entities", {"name": name, "type": "customer"}, format="json")
        for name in ("Marrowgate Ventures", "Quenby Harlow Partners", "Zorblat Provisions")
    ]
    assert [a.status_code for a in answers] == [201, 201, 201]
    shown = [_shown(a.json()) for a in answers]
    assert shown[0] == shown[1] == shown[2] and shown[2]["origin"] == "gazetteer"
    assert all(datetime.fromisoformat(a.json()["created_at"]) >= before for a in answers)
    # Listed or read afterwards, the same.
    listed = alice.client.get("/api/v1/entities").json()["results"]
    assert {e["origin"] for e in listed} == {"gazetteer"}
    # Bob, who wrote them first, still sees how they came.
    bobs = {e["name"]: e["origin"] for e in bob.client.get("/api/v1/entities").json()["results"]}
    assert bobs["Marrowgate Ventures"] == "writer"
    assert bobs["Quenby Harlow Partners"] == "extraction"


def test_every_field_of_a_written_entity_is_that_of_a_new_name(alice, bob):
    """A writer's entity of a name (and type) only another agent's private text named: the
    memory's answer tells it the same as for a name never written."""
    bob.client.post(
        "/api/v1/memories",
        {"text": "Talked to Quenby Harlow Partners about the deal."},
        format="json",
    )
    before = timezone.now()
    answers = [
        alice.client.post(
            "/api/v1/memories",
            {"text": f"{name} called.", "entities": [{"name": name, "type": "organization"}]},
            format="json",
        )
        for name in ("Quenby Harlow Partners", "Zorblat Provisions")
    ]
    written = [a.json()["entities"] for a in answers]
    assert [len(e) for e in written] == [1, 1]
    assert _shown(written[0][0]) == _shown(written[1][0])
    assert written[0][0]["origin"] == "writer"
    assert datetime.fromisoformat(written[0][0]["created_at"]) >= before
