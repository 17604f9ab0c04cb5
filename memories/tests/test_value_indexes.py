"""A vector index of a common metadata value (``memories.value_indexes``): built and dropped by
the index sync for the keys an operator names, read by a search filtered on that value, and
never a way into another workspace or another agent's private memories."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from memories.indexing import workspace_indexes_sync
from memories.models import Memory
from memories.operations import memory_remember, memory_search
from memories.search import metadata as chosen
from memories.selectors.reader import Reader
from memories.value_indexes import PREFIX, ValueIndex

LIST = "/api/v1/memories"
AWKWARD = 'O\'Brien & Søn "quoted" 東京'


def write(actor, customer, n, scope="team:accounts", **metadata) -> list[str]:
    written = []
    for i in range(n):
        body = {"text": f"Note {i} about {customer}'s renewal and its contract terms.",
                "metadata": {"customer": customer, **metadata}}  # fmt: skip
        response = actor.client.post(LIST, body | ({"scope": scope} if scope else {}), "json")
        assert response.status_code == 201, response.json()
        written.append(response.json()["mem_id"])
    return written


def value_indexes() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE %s",
            [PREFIX.replace("_", r"\_") + "%"],
        )
        return dict(cursor.fetchall())


@pytest.fixture
def customers(alice, charlie, settings):
    """Workspace A: 49 memories; orion holds 4 (5 with bob's private one: a tenth), the
    awkward name 3, kestrel 2 (under the threshold of 3), "common" 20 (more than a tenth: the
    filtered scan serves it); seats = 7 on 3 of them. Workspace B: 4 orion memories."""
    settings.MM_WORKSPACE_INDEX_MIN_ROWS = 3
    settings.MM_METADATA_INDEX_KEYS = ["customer", "seats", "customer"]
    written = {
        "orion": write(alice, "orion", 4),
        AWKWARD: write(alice, AWKWARD, 3, seats=7),
        "kestrel": write(alice, "kestrel", 2),
        "common": write(alice, "common", 20),
    }
    for i in range(20):
        write(alice, f"single-{i}", 1)
    written["B orion"] = write(charlie, "orion", 4, scope=None)
    yield written
    Memory.objects.all().delete()  # indexes outlive the test's flush: an empty table drops them
    settings.MM_METADATA_INDEX_KEYS = []
    workspace_indexes_sync()
    assert value_indexes() == {}


@pytest.mark.django_db(transaction=True)
def test_a_common_value_of_a_named_key_gets_its_own_vector_index(customers, alice, settings):
    out = StringIO()
    call_command("index_workspaces", stdout=out)
    assert "metadata value indexes: 3 created, 0 dropped, 0 kept" in out.getvalue()
    workspace = alice.agent.workspace_id
    expected = {
        ValueIndex(workspace, "customer", "orion").name: '{"customer": "orion"}',
        ValueIndex(workspace, "customer", AWKWARD).name: "O''Brien & Søn",
        ValueIndex(workspace, "seats", 7).name: '{"seats": 7}',
    }
    found = value_indexes()
    assert set(found) == set(expected)  # not kestrel (too few), common (too many), nor B's
    for name, predicate in expected.items():
        assert "USING hnsw (embedding vector_cosine_ops)" in found[name]
        assert f"(workspace_id = {workspace})" in found[name] and predicate in found[name]

    again = workspace_indexes_sync().values  # idempotent
    assert (again.created, again.dropped, sorted(again.kept)) == ([], [], sorted(expected))

    settings.MM_METADATA_INDEX_KEYS = ["customer"]  # seats no longer named: its index goes
    changed = workspace_indexes_sync().values
    assert changed.dropped == [ValueIndex(workspace, "seats", 7).name] and not changed.created
    assert set(value_indexes()) == set(expected) - set(changed.dropped)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("customer", ["orion", AWKWARD])
def test_a_search_filtered_on_the_value_reads_its_index(customers, alice, settings, customer):
    """The planner proves the index's predicate from the search's condition (an awkward name
    included) and reads that index; the hits are the exact search's."""
    settings.MM_SEARCH_CANDIDATES = 3  # no more than the index holds: it can give them
    workspace_indexes_sync()
    name = ValueIndex(alice.agent.workspace_id, "customer", customer).name
    reader = Reader.of_agent(alice.agent)
    asked = {"query": "contract renewal", "metadata": {"customer": customer}, "limit": 3}
    plans: list[str] = []
    nearest = chosen._nearest

    def explained(cursor, base, params, count, *more):
        chosen._set(cursor, dict(chosen._INDEX_ONLY))  # as the scan itself is planned
        cursor.execute("EXPLAIN " + chosen.nearest_sql(base, count), params)
        plans.append("\n".join(row[0] for row in cursor.fetchall()))
        return nearest(cursor, base, params, count, *more)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chosen, "_nearest", explained)
        found = [h.memory.mem_id for h in memory_search(reader, arguments=asked)]
    assert plans and name in plans[0], plans
    truth = [h.memory.mem_id for h in memory_search(reader, arguments=asked, exact=True)]
    assert found == truth and set(found) <= set(customers[customer])


@pytest.mark.django_db(transaction=True)
def test_the_index_of_a_value_lets_no_one_see_more(customers, alice, bob, charlie, settings):
    """Bob's private orion memory is in workspace A's orion index: alice's search through it
    (over HTTP, as any agent asks) never finds it, bob's does; workspace B's search for orion,
    which has no index, finds only B's."""
    settings.MM_SEARCH_CANDIDATES = 3  # no more than the index holds: it is read
    private = memory_remember(
        agent=bob.agent, text="Orion's private renewal notes.", metadata={"customer": "orion"}
    ).memory
    workspace_indexes_sync()
    assert ValueIndex(alice.agent.workspace_id, "customer", "orion").name in value_indexes()
    asked = {"query": private.text, "metadata": {"customer": "orion"}, "limit": 3}
    reads: list[int] = []
    nearest = chosen._nearest

    def counted(*args):
        reads.append(1)
        return nearest(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chosen, "_nearest", counted)
        for actor, sees in ((alice, False), (bob, True)):
            response = actor.client.post("/api/v1/search", asked, format="json")
            assert response.status_code == 200, response.json()
            found = [hit["mem_id"] for hit in response.json()["results"]]
            assert (private.mem_id in found) is sees and len(found) == 3
            assert set(found) - {private.mem_id} <= set(customers["orion"])
        assert len(reads) == 2  # each search read the index
        response = charlie.client.post("/api/v1/search", asked, format="json")
    found = [hit["mem_id"] for hit in response.json()["results"]]
    assert found and set(found) <= set(customers["B orion"])
    assert private.mem_id not in found
