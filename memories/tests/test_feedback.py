import pytest

from memories.models import Memory, ProvenanceEvent
from memories.operations import memory_remember


def feedback(actor, mem_id, **body):
    return actor.client.post(f"/api/v1/memories/{mem_id}/feedback", body, format="json")


def test_important_moves_significance_halfway_to_one(alice):
    memory = memory_remember(agent=alice.agent, text="Renewal is in March.").memory
    response = feedback(alice, memory.mem_id, action="important", reason="drives the budget")
    assert response.status_code == 200, response.json()
    assert response.json()["significance"] == pytest.approx(0.9)
    event = ProvenanceEvent.objects.get(memory=memory, action="important")
    assert event.old_values == {"significance": 0.8}
    assert event.new_values == {"significance": pytest.approx(0.9)}
    assert event.reason == "drives the budget" and event.agent == alice.agent


def test_demote_halves_significance_and_records_reason(alice):
    memory = memory_remember(agent=alice.agent, text="Lunch was pizza.", significance=0.6).memory
    response = feedback(alice, memory.mem_id, action="demote", reason="trivia")
    assert response.json()["significance"] == pytest.approx(0.3)
    event = ProvenanceEvent.objects.get(memory=memory, action="demote")
    assert (event.old_values, event.new_values, event.reason) == (
        {"significance": 0.6},
        {"significance": pytest.approx(0.3)},
        "trivia",
    )


def test_pin_and_unpin(alice):
    memory = memory_remember(agent=alice.agent, text="Never deploy on Fridays.").memory
    assert feedback(alice, memory.mem_id, action="pin", reason="team rule").json()["pinned"]
    assert not feedback(alice, memory.mem_id, action="unpin", reason="rule lifted").json()["pinned"]
    actions = list(
        ProvenanceEvent.objects.filter(memory=memory).values_list(
            "action", "old_values", "new_values"
        )
    )
    assert actions[1:] == [
        ("pin", {"pinned": False}, {"pinned": True}),
        ("unpin", {"pinned": True}, {"pinned": False}),
    ]
    memory.refresh_from_db()
    assert memory.significance == 0.8


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({"action": "important"}, "reason", "required"),
        ({"action": "important", "reason": "   "}, "reason", "required"),
        ({"action": "love", "reason": "why not"}, "action", "not one of"),
        ({"reason": "why not"}, "action", "required"),
    ],
)
def test_bad_feedback_is_refused_and_nothing_changes(alice, body, field, rule):
    memory = memory_remember(agent=alice.agent, text="Renewal is in March.").memory
    events = ProvenanceEvent.objects.count()
    response = feedback(alice, memory.mem_id, **body)
    assert response.status_code == 400
    assert rule in " ".join(response.json()[field])
    assert ProvenanceEvent.objects.count() == events
    memory.refresh_from_db()
    assert (memory.significance, memory.pinned) == (0.8, False)


def test_forget_is_soft_and_hides_the_memory_from_search(alice):
    memory = memory_remember(agent=alice.agent, text="The vault code is 1234.").memory
    response = alice.client.post(
        f"/api/v1/memories/{memory.mem_id}/forget",
        {"reason": "secret, should not be stored"},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["status"] == "forgotten"
    assert Memory.objects.filter(pk=memory.pk).exists()
    event = ProvenanceEvent.objects.get(memory=memory, action="forget")
    assert event.reason == "secret, should not be stored"
    hits = alice.client.post("/api/v1/search", {"query": "vault code"}, format="json").json()
    assert hits["results"] == []


def test_forget_needs_a_reason(alice):
    memory = memory_remember(agent=alice.agent, text="Keep me.").memory
    response = alice.client.post(f"/api/v1/memories/{memory.mem_id}/forget", {}, format="json")
    assert response.status_code == 400 and "reason" in response.json()
    memory.refresh_from_db()
    assert memory.status == Memory.Status.ACTIVE
