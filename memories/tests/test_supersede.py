from datetime import timedelta

from django.utils import timezone

from memories.models import Memory, ProvenanceEvent
from memories.operations import memory_remember


def search(actor, **body):
    response = actor.client.post("/api/v1/search", body, format="json")
    assert response.status_code == 200, response.json()
    return [r["mem_id"] for r in response.json()["results"]]


def test_supersedes_closes_the_old_window_and_keeps_it_findable_in_the_past(alice):
    start = timezone.now() - timedelta(days=100)
    old = memory_remember(
        agent=alice.agent, text="Zephyr's account manager is Priya.", valid_from=start
    ).memory
    response = alice.client.post(
        "/api/v1/memories",
        {"text": "Zephyr's account manager is Tom.", "supersedes": old.mem_id},
        format="json",
    )
    assert response.status_code == 201, response.json()
    new = Memory.objects.get(mem_id=response.json()["mem_id"])
    old.refresh_from_db()

    assert old.status == Memory.Status.SUPERSEDED
    assert old.superseded_by == new
    assert old.valid_until == new.valid_from is not None
    event = ProvenanceEvent.objects.get(memory=old, action="supersede")
    assert event.old_values["status"] == "active"
    assert event.new_values == {
        "status": "superseded",
        "valid_until": old.valid_until.isoformat(),
        "superseded_by": new.mem_id,
    }
    assert ProvenanceEvent.objects.filter(memory=new, action="supersede").exists()

    now_ids = search(alice, query="Who is Zephyr's account manager?", currently_valid=True)
    assert new.mem_id in now_ids and old.mem_id not in now_ids
    past = (start + timedelta(days=10)).isoformat()
    past_ids = search(alice, query="Who is Zephyr's account manager?", as_of=past)
    assert old.mem_id in past_ids and new.mem_id not in past_ids
    expired = search(alice, query="Who is Zephyr's account manager?", currently_valid=False)
    assert expired == [old.mem_id]


def test_cannot_supersede_twice(alice):
    old = memory_remember(agent=alice.agent, text="Plan A.").memory
    memory_remember(agent=alice.agent, text="Plan B.", supersedes=old.mem_id)
    count = Memory.objects.count()
    response = alice.client.post(
        "/api/v1/memories", {"text": "Plan C.", "supersedes": old.mem_id}, format="json"
    )
    assert response.status_code == 400
    assert "superseded, not active" in response.json()["supersedes"][0]
    assert Memory.objects.count() == count


def test_new_window_must_start_after_the_old_one(alice):
    old = memory_remember(
        agent=alice.agent, text="Price is 10 EUR.", valid_from=timezone.now() - timedelta(days=5)
    ).memory
    response = alice.client.post(
        "/api/v1/memories",
        {
            "text": "Price is 12 EUR.",
            "supersedes": old.mem_id,
            "valid_from": (timezone.now() - timedelta(days=10)).isoformat(),
        },
        format="json",
    )
    assert response.status_code == 400
    assert "valid_from" in response.json()
    assert Memory.objects.count() == 1
    old.refresh_from_db()
    assert old.status == Memory.Status.ACTIVE and old.valid_until is None


def test_cannot_supersede_another_workspaces_memory(alice, charlie):
    theirs = memory_remember(agent=charlie.agent, text="Globex secret.").memory
    response = alice.client.post(
        "/api/v1/memories", {"text": "Mine.", "supersedes": theirs.mem_id}, format="json"
    )
    assert response.status_code == 404  # as for one that does not exist
    assert "no memory" in response.json()["supersedes"][0]
    theirs.refresh_from_db()
    assert theirs.status == Memory.Status.ACTIVE


def test_replacement_of_a_shared_memory_stays_shared(alice, bob):
    shared = memory_remember(
        agent=alice.agent, text="Renewal owner is Alice.", scope="team:accounts"
    ).memory
    response = bob.client.post(
        "/api/v1/memories",
        {"text": "Renewal owner is Bob.", "supersedes": shared.mem_id},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["scope"] == "team:accounts"
    ids = search(alice, query="Who owns the renewal?")
    assert response.json()["mem_id"] in ids and shared.mem_id not in ids


def test_replacement_cannot_move_to_another_scope(alice, bob):
    shared = memory_remember(
        agent=alice.agent, text="Renewal owner is Alice.", scope="team:accounts"
    ).memory
    count = Memory.objects.count()
    response = bob.client.post(
        "/api/v1/memories",
        {"text": "Renewal owner is Bob.", "supersedes": shared.mem_id, "scope": "private"},
        format="json",
    )
    assert response.status_code == 400
    assert "team:accounts" in response.json()["scope"][0]
    assert Memory.objects.count() == count
    shared.refresh_from_db()
    assert shared.status == Memory.Status.ACTIVE


def test_future_cutover_keeps_the_old_memory_valid_until_then(alice):
    old = memory_remember(agent=alice.agent, text="Support hotline is +1 555 0100.").memory
    cutover = timezone.now() + timedelta(days=7)
    new = memory_remember(
        agent=alice.agent,
        text="Support hotline is +1 555 0199.",
        supersedes=old.mem_id,
        valid_from=cutover,
    ).memory
    now_ids = search(alice, query="support hotline number")
    assert now_ids == [old.mem_id]
    later = search(
        alice, query="support hotline number", as_of=(cutover + timedelta(days=1)).isoformat()
    )
    assert later == [new.mem_id]
