from memories.operations import memory_remember


def test_outsider_gets_404_on_every_endpoint_and_sees_nothing(alice, charlie):
    memory = memory_remember(
        agent=alice.agent, text="Acme's renewal is in March.", scope="team:accounts"
    ).memory
    base = f"/api/v1/memories/{memory.mem_id}"
    assert charlie.client.get(base).status_code == 404
    unknown = charlie.client.get("/api/v1/memories/ffffffffffffffff")
    assert unknown.status_code == 404
    assert charlie.client.get(base).json() == {"detail": f"no memory {memory.mem_id!r}"}
    assert unknown.json() == {"detail": "no memory 'ffffffffffffffff'"}
    response = charlie.client.post(
        f"{base}/feedback", {"action": "demote", "reason": "x"}, format="json"
    )
    assert response.status_code == 404
    assert charlie.client.post(f"{base}/forget", {"reason": "x"}, format="json").status_code == 404
    hits = charlie.client.post("/api/v1/search", {"query": "Acme renewal March"}, format="json")
    assert hits.json()["results"] == []
    memory.refresh_from_db()
    assert memory.significance == 0.8 and memory.status == "active"


def test_private_scope_is_private_and_shared_scope_is_shared(alice, bob):
    private = memory_remember(agent=alice.agent, text="Alice's draft: renewal pricing idea.").memory
    shared = memory_remember(
        agent=alice.agent, text="Renewal pricing is 5% up.", scope="team:accounts"
    ).memory
    assert bob.client.get(f"/api/v1/memories/{private.mem_id}").status_code == 404
    assert bob.client.get(f"/api/v1/memories/{shared.mem_id}").status_code == 200
    hits = bob.client.post("/api/v1/search", {"query": "renewal pricing"}, format="json").json()
    assert [r["mem_id"] for r in hits["results"]] == [shared.mem_id]
