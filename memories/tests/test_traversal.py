"""Traversal (opt-in): following links from a memory or an entity and the shortest path between
two nodes, over REST, never reaching or passing through a memory the agent cannot see."""

import pytest

from memories.models import Entity
from memories.operations import memory_remember, memory_remember_bulk

TEAM = "team:accounts"
ZEPHYR = [{"name": "Zephyr Logistics", "type": "customer"}]


def remember(actor, text, **fields):
    return memory_remember(agent=actor.agent, text=text, **fields).memory


def post(actor, path, body):
    return actor.client.post(f"/api/v1/{path}", body, format="json")


@pytest.fixture
def graph(alice, bob, settings):
    """hub ← support ← detail (supports, relates_to); hub and aside mention Zephyr; bob's
    private note supports the hub, and a team memory hangs off bob's note only."""
    settings.MM_TRAVERSAL = True
    settings.MM_ENTITY_EXTRACTION = False
    hub = remember(alice, "The Zephyr renewal is due in March.", scope=TEAM, entities=ZEPHYR)
    support = remember(
        alice,
        "Finance approved the March renewal budget.",
        scope=TEAM,
        links=[{"to": hub.mem_id, "type": "supports"}],
    )
    detail = remember(
        alice,
        "The budget line is under operations.",
        scope=TEAM,
        links=[{"to": support.mem_id, "type": "relates_to"}],
    )
    aside = remember(alice, "Zephyr asked for a new contact.", scope=TEAM, entities=ZEPHYR)
    private = remember(
        bob, "Bob's private note on the renewal.", links=[{"to": hub.mem_id, "type": "supports"}]
    )
    behind = remember(
        bob,
        "A team memory linked only from bob's private note.",
        scope=TEAM,
        links=[{"to": private.mem_id, "type": "relates_to"}],
    )
    entity = Entity.objects.get(workspace_id=alice.agent.workspace_id, name="Zephyr Logistics")
    return {
        "hub": hub,
        "support": support,
        "detail": detail,
        "aside": aside,
        "private": private,
        "behind": behind,
        "entity": entity,
    }


def reached(body):
    return {
        n["node"].get("mem_id") or n["node"]["entity_id"]: (n["depth"], n["path"])
        for n in body["nodes"]
    }


def test_switched_off_both_endpoints_answer_403_naming_the_setting(alice, settings):
    settings.MM_TRAVERSAL = False
    hub = remember(alice, "The renewal is due in March.")
    for path, body in (
        ("traverse", {"from": hub.mem_id}),
        ("explain-path", {"from": hub.mem_id, "to": "0" * 16}),
    ):
        response = post(alice, path, body)
        assert response.status_code == 403
        assert "MM_TRAVERSAL" in response.json()["detail"]


def test_traverse_follows_links_both_ways_with_their_paths(alice, graph):
    g = graph
    body = post(alice, "traverse", {"from": g["hub"].mem_id, "depth": 1}).json()
    one = reached(body)
    assert set(one) == {g["support"].mem_id, g["entity"].entity_id}
    depth, path = one[g["support"].mem_id]
    assert depth == 1 and len(path) == 1
    step = path[0]
    assert (step["type"], step["direction"], step["made_by"]) == ("supports", "in", "agent:alice")
    assert step["from"]["mem_id"] == g["hub"].mem_id and step["to"]["mem_id"] == g["support"].mem_id
    assert step["link_id"] and step["created_at"]
    assert one[g["entity"].entity_id][1][0]["type"] == "mentions"

    two = reached(post(alice, "traverse", {"from": g["hub"].mem_id, "depth": 2}).json())
    assert set(two) == {
        g["support"].mem_id,
        g["entity"].entity_id,
        g["detail"].mem_id,
        g["aside"].mem_id,
    }
    depth, path = two[g["aside"].mem_id]
    assert depth == 2
    assert [(s["type"], s["direction"]) for s in path] == [("mentions", "out"), ("mentions", "in")]
    assert path[0]["to"] == {
        "kind": "entity",
        "entity_id": g["entity"].entity_id,
        "name": "Zephyr Logistics",
        "type": "customer",
    }

    # One way only, and by type.
    out = reached(post(alice, "traverse", {"from": g["support"].mem_id, "direction": "out"}).json())
    assert set(out) == {g["hub"].mem_id, g["entity"].entity_id}
    typed = reached(
        post(
            alice, "traverse", {"from": g["detail"].mem_id, "depth": 3, "link_types": ["supports"]}
        ).json()
    )
    assert typed == {}  # detail's only link is relates_to


def test_an_entity_is_a_start_and_the_engines_own_links_are_followed(alice, graph):
    g = graph
    from_entity = reached(post(alice, "traverse", {"from": g["entity"].entity_id}).json())
    assert {g["hub"].mem_id, g["aside"].mem_id} <= set(from_entity)

    first = remember(alice, "We met Zephyr on Monday.", scope=TEAM, session="call")
    second = remember(alice, "They want the renewal earlier.", scope=TEAM, session="call")
    newer = remember(alice, "The renewal is due in April.", scope=TEAM, supersedes=g["hub"].mem_id)
    near = reached(post(alice, "traverse", {"from": second.mem_id, "depth": 1}).json())
    assert near[first.mem_id][1][0] | {} == near[first.mem_id][1][0]
    assert (near[first.mem_id][1][0]["type"], near[first.mem_id][1][0]["direction"]) == (
        "follows",
        "out",
    )
    assert near[first.mem_id][1][0]["made_by"] == "engine"
    old = reached(post(alice, "traverse", {"from": newer.mem_id, "depth": 1}).json())
    assert [(s["type"], s["direction"]) for s in old[g["hub"].mem_id][1]] == [("supersedes", "out")]


def test_a_memory_the_agent_cannot_see_is_never_reached_nor_passed_through(alice, bob, graph):
    g = graph
    as_alice = reached(post(alice, "traverse", {"from": g["hub"].mem_id, "depth": 3}).json())
    assert g["private"].mem_id not in as_alice
    assert g["behind"].mem_id not in as_alice  # only reachable through bob's private note
    as_bob = reached(post(bob, "traverse", {"from": g["hub"].mem_id, "depth": 2}).json())
    assert {g["private"].mem_id, g["behind"].mem_id} <= set(as_bob)

    path = post(alice, "explain-path", {"from": g["hub"].mem_id, "to": g["behind"].mem_id})
    assert path.status_code == 200
    assert path.json()["found"] is False and path.json()["path"] == []
    found = post(bob, "explain-path", {"from": g["hub"].mem_id, "to": g["behind"].mem_id}).json()
    assert found["found"] is True and found["length"] == 2
    assert found["path"][0]["to"]["mem_id"] == g["private"].mem_id


def test_starts_and_ends_out_of_sight_are_404s_like_missing_ids(alice, charlie, graph, settings):
    g = graph
    missing = post(alice, "traverse", {"from": "0" * 16})
    hidden = post(alice, "traverse", {"from": g["private"].mem_id})
    assert missing.status_code == hidden.status_code == 404
    assert missing.json()["detail"].replace("0" * 16, "X") == hidden.json()["detail"].replace(
        g["private"].mem_id, "X"
    )
    elsewhere = post(charlie, "traverse", {"from": g["hub"].mem_id})
    assert elsewhere.status_code == 404
    assert post(charlie, "traverse", {"from": g["entity"].entity_id}).status_code == 404
    end_hidden = post(alice, "explain-path", {"from": g["hub"].mem_id, "to": g["private"].mem_id})
    assert end_hidden.status_code == 404 and "to" in end_hidden.json()["detail"]


def test_explain_path_gives_the_shortest_path_step_by_step(alice, graph):
    g = graph
    body = post(alice, "explain-path", {"from": g["detail"].mem_id, "to": g["hub"].mem_id}).json()
    assert body["found"] is True and body["length"] == 2
    assert [(s["type"], s["direction"]) for s in body["path"]] == [
        ("relates_to", "out"),
        ("supports", "out"),
    ]
    assert [s["to"]["mem_id"] for s in body["path"]] == [g["support"].mem_id, g["hub"].mem_id]
    via_entity = post(
        alice, "explain-path", {"from": g["aside"].mem_id, "to": g["hub"].mem_id, "depth": 2}
    ).json()
    assert via_entity["length"] == 2 and via_entity["path"][0]["to"]["kind"] == "entity"
    too_short = post(
        alice, "explain-path", {"from": g["detail"].mem_id, "to": g["hub"].mem_id, "depth": 1}
    ).json()
    assert too_short["found"] is False


@pytest.mark.parametrize(
    "path,body,field",
    [
        ("traverse", {"from": "HUB", "depth": 0}, "depth"),
        ("traverse", {"from": "HUB", "depth": 4}, "depth"),
        ("traverse", {"from": "HUB", "depth": "2"}, "depth"),
        ("traverse", {"from": "HUB", "link_types": ["friend_of"]}, "link_types[0]"),
        ("traverse", {"from": "HUB", "direction": "sideways"}, "direction"),
        ("traverse", {"from": "HUB", "limit": 501}, "limit"),
        ("traverse", {"from": "not-an-id"}, "from"),
        ("traverse", {}, "from"),
        ("explain-path", {"from": "HUB"}, "to"),
    ],
)
def test_bad_traversal_input_is_a_400_naming_the_field(alice, graph, path, body, field):
    body = {k: (graph["hub"].mem_id if v == "HUB" else v) for k, v in body.items()}
    response = post(alice, path, body)
    assert response.status_code == 400, response.json()
    assert field in response.json()


def test_the_path_from_a_node_to_itself_is_found_and_empty(alice, graph):
    hub = graph["hub"].mem_id
    body = post(alice, "explain-path", {"from": hub, "to": hub}).json()
    assert (body["found"], body["length"], body["path"]) == (True, 0, [])
    assert body["from"]["mem_id"] == body["to"]["mem_id"] == hub


def test_a_walk_past_its_time_is_a_400_and_the_connection_stays_usable(alice, settings):
    import random

    from memories.models import Link

    settings.MM_TRAVERSAL = True
    settings.MM_ENTITY_EXTRACTION = False
    items = [{"text": f"Note number {n} about the renewal.", "scope": TEAM} for n in range(80)]
    written = [r.memory for r in memory_remember_bulk(agent=alice.agent, items=items)]
    # Ten links out of every memory: tens of thousands of paths within three links.
    rng = random.Random(7)
    Link.objects.bulk_create(
        Link(
            workspace_id=alice.agent.workspace_id,
            source=memory,
            target_memory=other,
            kind="relates_to",
            origin=Link.Origin.WRITER,
        )
        for memory in written
        for other in rng.sample([m for m in written if m != memory], 10)
    )
    settings.MM_TRAVERSAL_TIMEOUT_MS = 1
    settings.MM_TRAVERSAL_MAX_ROWS = 10_000_000
    # More nodes asked for than there are: the walk reads every path until it is cut.
    response = post(alice, "traverse", {"from": written[0].mem_id, "depth": 3, "limit": 500})
    assert response.status_code == 400, response.json()
    assert "MM_TRAVERSAL_TIMEOUT_MS" in response.json()["depth"][0]
    settings.MM_TRAVERSAL_TIMEOUT_MS = 2_000
    settings.MM_TRAVERSAL_MAX_ROWS = 100
    again = post(alice, "traverse", {"from": written[0].mem_id, "depth": 2, "limit": 5})
    assert again.status_code == 200 and again.json()["count"] == 5


def test_no_path_of_a_walk_visits_a_node_twice(alice, graph):
    """Every path the statement builds, not only the shortest ones kept."""
    from django.db import connection

    from memories.selectors.traversal import MEMORY, WALK

    with connection.cursor() as cursor:
        cursor.execute(
            WALK + "SELECT nodes FROM walk",
            {
                "start_kind": MEMORY,
                "start": graph["hub"].pk,
                "depth": 3,
                "types": None,
                "workspace": alice.agent.workspace_id,
                "everyone": True,
                "scopes": [],
                "out": True,
                "in": True,
            },
        )
        paths = [row[0] for row in cursor.fetchall()]
    assert len(paths) > 5 and all(len(set(nodes)) == len(nodes) for nodes in paths)
