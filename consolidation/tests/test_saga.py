"""Saga recall (preview, MM_SAGA off): a query's threads, their memories in time order and an
extractive summary; by thread id; bad input named; another workspace's or scope's thread a 404
like a missing one; off means a 403 naming the switch."""

import pytest

from consolidation.tests.test_threads import POTTERY, ROOF, run, story, write
from memories.models import Thread


@pytest.fixture
def sagas(settings):
    settings.MM_OPEN_THREADS = True
    settings.MM_SAGA = True


def post(actor, body):
    return actor.client.post("/api/v1/saga", body, format="json")


def test_a_query_recalls_its_whole_story_in_time_order_with_a_summary(alice, sagas):
    story(alice.agent)
    run(alice.agent.workspace)
    response = post(alice, {"query": "What happened with the leak in the attic?"})
    assert response.status_code == 200, response.json()
    saga = response.json()
    roof = Thread.objects.get(members__memory__text=ROOF[0])
    assert saga["threads"][0]["thread_id"] == roof.thread_id
    texts = [m["text"] for m in saga["memories"]]
    assert [t for t in texts if t in ROOF] == ROOF  # the whole story, oldest first
    assert [m["created_at"] for m in saga["memories"]] == sorted(
        m["created_at"] for m in saga["memories"]
    )
    assert any(m["hit"] for m in saga["memories"])
    ids = {m["mem_id"] for m in saga["memories"]}
    assert saga["summary"] and all(line["mem_id"] in ids for line in saga["summary"])
    assert all(
        line["sentence"]
        in next(m["text"] for m in saga["memories"] if m["mem_id"] == line["mem_id"])
        for line in saga["summary"]
    )
    # A limit keeps the best hits first, then the nearest members, still in time order.
    short = post(alice, {"query": "roofer attic leak", "limit": 2}).json()
    assert len(short["memories"]) == 2


def test_a_thread_by_id_and_what_another_reader_cannot_see(alice, bob, charlie, sagas):
    for session in range(3):
        write(alice.agent, POTTERY[session], session, 0)  # alice's private scope
    run(alice.agent.workspace)
    thread = Thread.objects.get(members__memory__text=POTTERY[0])
    mine = post(alice, {"thread_id": thread.thread_id}).json()
    assert [m["text"] for m in mine["memories"]] == POTTERY[:3]
    for outsider in (bob, charlie):  # not alice's scope; another workspace
        response = post(outsider, {"thread_id": thread.thread_id})
        assert response.status_code == 404
        assert response.json() == post(outsider, {"thread_id": "0123456789abcdef"}).json() | {
            "detail": f"no thread {thread.thread_id!r}"
        }
    # Bob's query finds nothing of alice's private story.
    found = post(bob, {"query": "pottery bowl kiln"}).json()
    assert found["memories"] == [] and found["threads"] == []


def test_bad_input_is_named_and_off_is_a_403(alice, settings, sagas):
    for body, field in (
        ({}, "query"),
        ({"query": "kiln", "thread_id": "0123456789abcdef"}, "query"),
        ({"thread_id": "x"}, "thread_id"),
        ({"query": "kiln", "limit": 0}, "limit"),
        ({"query": "kiln", "depth": 2}, "depth"),
    ):
        response = post(alice, body)
        assert response.status_code == 400 and field in response.json(), (body, response.json())
    settings.MM_SAGA = False
    off = post(alice, {"query": "kiln"})
    assert off.status_code == 403 and "MM_SAGA" in off.json()["detail"]


def test_the_mcp_tool_reads_as_text_with_mem_ids(alice, settings, sagas):
    from consolidation.mcp import saga

    story(alice.agent)
    run(alice.agent.workspace)
    result = saga(alice.agent, {"query": "the pottery class and the kiln"})
    assert not result.is_error
    text = result.content[0].text
    assert "thread" in text and "(mem_id: " in text
    assert result.structured_content["threads"]
