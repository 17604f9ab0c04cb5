"""A JSON value of the wrong type is a 400 naming the field, never converted (issue 16, finding
5): ``"significance": true`` was stored as 1.0, ``"0.5"`` as 0.5, ``"text": 123`` as "123"."""

import asyncio

import pytest

from meaning_memory.mcp import engine_tools
from meaning_memory.testing import make_actor
from memories.mcp import stdio_server
from memories.models import Memory
from memories.services import agent_authenticate


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "Zephyr renews in March.", "significance": True}, "significance"),
        ({"text": "Zephyr renews in March.", "significance": "0.5"}, "significance"),
        ({"text": 123}, "text"),
        ({"text": "Zephyr renews in March.", "stare_scores": {"s": "0.9"}}, "stare_scores.s"),
        ({"text": "Zephyr renews in March.", "source": 7}, "source"),
        ({"text": "Zephyr renews in March.", "idempotency_key": 42}, "idempotency_key"),
    ],
)
def test_remember_refuses_a_value_of_the_wrong_json_type(alice, body, field):
    response = alice.client.post("/api/v1/memories", body, format="json")
    bulk = alice.client.post("/api/v1/memories/bulk", {"memories": [body]}, format="json")

    assert response.status_code == 400 and field in response.json(), response.json()
    assert bulk.status_code == 400 and f"memories[0].{field}" in bulk.json(), bulk.json()
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "renewal", "limit": "5"}, "limit"),
        ({"query": "renewal", "limit": True}, "limit"),
        ({"query": "renewal", "limit": 5.5}, "limit"),
        ({"query": "renewal", "currently_valid": "false"}, "currently_valid"),
        ({"query": "renewal", "currently_valid": 0}, "currently_valid"),
        ({"query": "renewal", "min_s_score": False}, "min_s_score"),
        ({"query": 5}, "query"),
    ],
)
def test_search_refuses_a_value_of_the_wrong_json_type(alice, body, field):
    response = alice.client.post("/api/v1/search", body, format="json")
    assert response.status_code == 400 and field in response.json(), response.json()


def test_the_mcp_tools_refuse_them_too(transactional_db):
    alice = make_actor("acme", "alice")  # committed: the tools run in threads of their own
    server = stdio_server(lambda: agent_authenticate(alice.token), engine_tools())

    async def calls():
        return [
            await server.call_tool("mm_remember", {"text": "x", "significance": True}),
            await server.call_tool("mm_search", {"query": "x", "limit": "5"}),
            await server.call_tool("mm_compile", {"budget": "1000"}),
            await server.call_tool("mm_feedback", {"mem_id": 7, "action": "pin", "reason": "r"}),
        ]

    results = asyncio.run(calls())
    assert [r.is_error for r in results] == [True] * 4
    assert [next(iter(r.structured_content)) for r in results] == [
        "significance",
        "limit",
        "budget",
        "mem_id",
    ]
    assert not Memory.objects.exists()


def test_text_sources_still_parse_text(alice):
    """The compiled file's query parameters and the command line are text: parsed from it."""
    compiled = alice.client.get("/api/v1/compiled", {"budget": "1000", "show_ids": "true"})
    assert compiled.status_code == 200
