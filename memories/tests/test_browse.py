"""Browsing memories without a query: GET /api/v1/memories with the search's filters, an
order, and DRF's cursor pages; only what the agent may see."""

import base64
from datetime import timedelta

import pytest
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
    assert response.status_code == 400 and list(response.json()) == ["cursor"]


@pytest.mark.parametrize(
    "ordering,token",
    [
        ("", "o=0&p=not-a-date"),
        ("significance", "o=0&p=abc"),
        ("significance", "o=0&p=nan"),
        ("", "o=0&p=0.5"),  # a significance cursor sent with the newest first
        ("", "o=0&r=maybe&p=2026-01-01"),
        ("", "o=-1"),
        ("", "p=\u00e9t\u00e9"),
    ],
)
def test_a_tampered_cursor_is_a_400_naming_it(alice, ordering, token):
    write(alice.agent, 3)
    cursor = base64.b64encode(token.encode("utf-8")).decode("ascii")
    response = alice.client.get(
        URL, {"cursor": cursor, **({"ordering": ordering} if ordering else {})}
    )
    assert response.status_code == 400, response.content
    assert (
        list(response.json()) == ["cursor"]
        and "next or previous link" in response.json()["cursor"][0]
    )


def test_the_cursors_a_page_gives_still_lead_on(alice):
    written = write(alice.agent, 5)
    for ordering in ("newest", "significance"):
        seen, url = [], URL + f"?limit=2&ordering={ordering}"
        while url:
            page = alice.client.get(url)
            assert page.status_code == 200, page.content
            seen += [m["mem_id"] for m in page.json()["results"]]
            url = page.json()["next"]
        assert sorted(seen) == sorted(m.mem_id for m in written)


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


def test_a_blank_flag_is_a_400_naming_it_not_the_default(alice):
    """``show_ids=`` or ``currently_valid=`` with no value is neither true nor false: refused,
    naming the parameter, as "maybe" is (it was read as absent, in silence)."""
    for path, name in (("/api/v1/compiled", "show_ids"), (URL, "currently_valid")):
        for value in ("", " ", "maybe"):
            answer = alice.client.get(path, {name: value})
            assert answer.status_code == 400, (path, name, value)
            assert answer.json() == {name: ["must be true or false."]}
        assert alice.client.get(path, {name: "false"}).status_code == 200
