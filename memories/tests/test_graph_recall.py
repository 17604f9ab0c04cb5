"""Graph-aware recall (``expand: "graph"`` on a search): the candidates re-ordered by how closely
links join them to the most relevant ones, with the graph's share in each hit's explanation, and
never through a memory the reader may not see."""

import pytest

from meaning_memory.testing import by_mem_id, mem_ids, searched
from memories.operations import memory_remember


@pytest.fixture(autouse=True)
def _writers_entities_only(settings):
    """Only the entities each test names (the offline model would add its own readings)."""
    settings.MM_ENTITY_EXTRACTION = False


def remember(actor, text, *names, **fields):
    entities = [{"name": name, "type": "customer"} for name in names]
    return memory_remember(agent=actor.agent, text=text, entities=entities, **fields).memory


def search(actor, **body):
    return searched(actor, **{"limit": 20, **body})


order, by_id = mem_ids, by_mem_id


def test_a_memory_sharing_an_entity_with_the_best_hits_moves_up(alice, settings):
    settings.MM_GRAPH_WEIGHT, settings.MM_GRAPH_SEEDS = 1.0, 2
    alone = remember(alice, "Acme mentioned a renewal in passing on the onboarding call.", "Acme")
    due = remember(alice, "The Zephyr renewal is due in March.", "Zephyr")
    pricing = remember(alice, "Zephyr renewal pricing goes up five percent.", "Zephyr")
    joined = remember(alice, "Call notes: onboarding questions from the customer.", "Zephyr")

    plain = search(alice, query="renewal")
    # The two seeds are the two most relevant; the call notes come last.
    assert order(plain) == [alone.mem_id, due.mem_id, pricing.mem_id, joined.mem_id]
    assert all("graph" not in hit["explanation"] for hit in plain)

    graph = search(alice, query="renewal", expand="graph")
    assert sorted(order(graph)) == sorted(order(plain))  # re-ordered, nothing added
    assert order(graph).index(joined.mem_id) < order(graph).index(due.mem_id)
    figures = by_id(graph)[joined.mem_id]["explanation"]["graph"]
    assert figures["activation"] == pytest.approx(1.0)  # as much as pricing: both join `due`
    assert figures["contribution"] == pytest.approx(1.0)
    assert figures["seed"] is False
    assert figures["relevance_before"] == pytest.approx(
        by_id(plain)[joined.mem_id]["explanation"]["relevance"], abs=1e-6
    )
    assert [item["name"] for item in figures["via"]] == ["Zephyr"]
    # A seed is activated only by what joins it to the other seeds: Acme's walk returning to
    # it through an entity only it mentions counts for nothing, and Zephyr's first seed is
    # joined to no other seed.
    for seed in (alone, due):
        assert by_id(graph)[seed.mem_id]["explanation"]["graph"]["seed"] is True
        assert by_id(graph)[seed.mem_id]["explanation"]["graph"]["activation"] == 0
    assert by_id(graph)[alone.mem_id]["explanation"]["graph"]["via"] == []


def test_links_between_memories_join_them_too_and_the_weight_scales_the_share(alice, settings):
    settings.MM_GRAPH_SEEDS = 1
    best = remember(alice, "The Zephyr renewal is due in March.")
    linked = remember(
        alice, "Paperwork is in the shared drive.", links=[{"to": best.mem_id, "type": "part_of"}]
    )
    other = remember(alice, "Lunch menu for Friday.")
    hits = by_id(search(alice, query="renewal", expand="graph"))
    assert hits[best.mem_id]["explanation"]["graph"]["seed"] is True
    figures = hits[linked.mem_id]["explanation"]["graph"]
    assert figures["activation"] == pytest.approx(1.0)
    assert figures["via"] == [{"mem_id": best.mem_id, "link_type": "part_of"}]
    assert figures["contribution"] == pytest.approx(0.1)  # MM_GRAPH_WEIGHT's default
    assert hits[other.mem_id]["explanation"]["graph"]["activation"] == 0
    settings.MM_GRAPH_WEIGHT = 0.0
    hits = search(alice, query="renewal", expand="graph")
    assert order(hits) == order(search(alice, query="renewal"))  # no weight, no change


def test_the_walk_never_passes_through_a_memory_the_reader_cannot_see(
    alice, bob, charlie, settings
):
    settings.MM_GRAPH_SEEDS = 1
    shared = "team:accounts"
    seed = remember(alice, "The Zephyr renewal is due in March.", "Zephyr", scope=shared)
    far = remember(alice, "Beacon wants a call about invoices.", "Beacon", scope=shared)
    # Alice's private note is the only bridge between Zephyr and Beacon.
    bridge = remember(alice, "Zephyr and Beacon share an owner.", "Zephyr", "Beacon")
    remember(charlie, "The Zephyr renewal at Globex, with Beacon.", "Zephyr", "Beacon")

    hers = by_id(search(alice, query="renewal", expand="graph"))
    assert hers[far.mem_id]["explanation"]["graph"]["activation"] > 0  # through the bridge
    assert bridge.mem_id in hers

    his = search(bob, query="renewal", expand="graph")
    assert bridge.mem_id not in by_id(his)
    assert by_id(his)[seed.mem_id]["explanation"]["graph"]["seed"] is True
    assert by_id(his)[far.mem_id]["explanation"]["graph"]["activation"] == 0
    assert bridge.mem_id not in str(his)

    theirs = search(charlie, query="renewal", expand="graph")
    assert {seed.mem_id, far.mem_id, bridge.mem_id}.isdisjoint(by_id(theirs))


def test_filters_and_the_limit_hold_with_the_graph(alice, settings):
    settings.MM_GRAPH_WEIGHT = 1.0
    for n in range(6):
        remember(alice, f"Zephyr renewal note {n}.", "Zephyr", category="fact")
    remember(alice, "Zephyr renewal decision.", "Zephyr", category="decision")
    hits = search(alice, query="renewal", expand="graph", limit=3)
    assert len(hits) == 3
    decisions = search(alice, query="renewal", expand="graph", category="decision")
    assert [hit["text"] for hit in decisions] == ["Zephyr renewal decision."]


@pytest.mark.parametrize("value", ["bogus", 1, ["graph"], ""])
def test_a_bad_expand_is_a_400_naming_the_field_and_the_choices(alice, value):
    response = alice.client.post(
        "/api/v1/search", {"query": "renewal", "expand": value}, format="json"
    )
    assert response.status_code == 400
    assert "expand" in response.json(), response.json()
    assert "graph" in str(response.json()["expand"])
