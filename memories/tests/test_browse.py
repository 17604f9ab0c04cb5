"""Browsing memories without a query: GET /api/v1/memories with the search's filters, an
order, and DRF's cursor pages; only what the agent may see."""

from datetime import timedelta

from django.utils import timezone

from memories.models import Memory
from memories.operations import memory_remember
from memories.services import memory_forget

URL = "/api/v1/memories"


def write(agent, count, **fields):
    now = timezone.now()
    return [
        memory_remember(
            agent=agent,
            text=f"Note {n} about the warehouse.",
            created_at=now - timedelta(minutes=count - n),
            **fields,
        ).memory
        for n in range(count)
    ]


def pages(client, **query):
    """Every page of a listing, following the next links."""
    found, url, params = [], URL, query
    while url:
        response = client.get(url, params)
        assert response.status_code == 200, response.json()
        body = response.json()
        assert set(body) == {"next", "previous", "results"}
        found.append([r["mem_id"] for r in body["results"]])
        url, params = body["next"], None
    return found


def test_pages_go_through_every_memory_newest_first_once(alice):
    memories = write(alice.agent, 7)
    listed = pages(alice.client, limit=3)
    assert [len(page) for page in listed] == [3, 3, 1]
    assert [m for page in listed for m in page] == [m.mem_id for m in reversed(memories)]


def test_ordering_by_significance_and_the_filters(alice):
    low = memory_remember(agent=alice.agent, text="A minor note.", significance=0.2).memory
    high = memory_remember(agent=alice.agent, text="A key decision.", significance=0.95,
                           category="decision").memory  # fmt: skip
    mid = memory_remember(
        agent=alice.agent, text="According to Maria Lopez, the dock opens at six.",
        perspective="external",
    ).memory  # fmt: skip
    forgotten = memory_remember(agent=alice.agent, text="Forgotten.", significance=1.0).memory
    memory_forget(agent=alice.agent, mem_id=forgotten.mem_id, reason="wrong")
    assert pages(alice.client, ordering="significance") == [[high.mem_id, mid.mem_id, low.mem_id]]
    assert pages(alice.client, category="decision") == [[high.mem_id]]
    assert pages(alice.client, perspective="external") == [[mid.mem_id]]
    assert pages(alice.client, attributed_to="Maria Lopez") == [[mid.mem_id]]
    assert pages(alice.client, source_kind="stated") == [[mid.mem_id]]
    old = memory_remember(
        agent=alice.agent, text="Old rule.", valid_until=timezone.now() - timedelta(days=1),
        valid_from=timezone.now() - timedelta(days=9),
    ).memory  # fmt: skip
    assert pages(alice.client, currently_valid="false") == [[old.mem_id]]
    assert old.mem_id not in pages(alice.client)[0]


def test_bad_arguments_are_400s_naming_the_field(alice):
    response = alice.client.get(URL, {"ordering": "oldest", "limit": 0, "min_s_score": 2})
    assert response.status_code == 400
    assert set(response.json()) == {"ordering", "limit", "min_s_score"}
    # Well formed, naming nothing it knows of: a 404 naming the field.
    response = alice.client.get(URL, {"attributed_to": "Nobody Known"})
    assert response.status_code == 404 and "attributed_to" in response.json()
    response = alice.client.get(URL, {"cursor": "not-a-cursor"})
    assert response.status_code == 404


def test_an_agent_lists_only_what_it_may_see(alice, bob, charlie):
    private = write(alice.agent, 2)
    shared = write(alice.agent, 1, scope="team:accounts")
    write(charlie.agent, 2)
    assert pages(alice.client) == [[m.mem_id for m in reversed(private + shared)]]
    assert pages(bob.client) == [[shared[0].mem_id]]
    assert pages(charlie.client)[0] and not (
        set(pages(charlie.client)[0]) & {m.mem_id for m in private + shared}
    )
    assert Memory.objects.count() == 5
