"""The MCP server through the SDK's own client: streamable HTTP on loopback (the served app) and
stdio (a subprocess, as a desktop agent starts it)."""

import asyncio
import json
import os
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from meaning_memory.testing import database_url, make_actor
from memories.models import Memory, ProvenanceEvent

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {
    "mm_remember",
    "mm_bulk_remember",
    "mm_remember_messages",
    "mm_search",
    "mm_feedback",
    "mm_forget",
    "mm_erase",
    "mm_compile",
    "mm_link",
    "mm_traverse_relationships",
    "mm_explain_path",
    "mm_divergences",
    "mm_list",
    "mm_consolidate",
    "mm_saga",
    "mm_stare_readiness",
}
RENEWAL = (
    "Zephyr Logistics renews its support contract every March; the renewal decides "
    "next year's budget."
)


@pytest.fixture
def actors(transactional_db):
    return {
        "alice": make_actor("acme", "alice", scopes=["team:accounts"]),
        "charlie": make_actor("globex", "charlie"),
    }


def over_http(base: str, token: str, work):
    async def main():
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return asyncio.run(main())


def text_of(result) -> str:
    return "".join(block.text for block in result.content)


def test_http_lists_the_tools_and_each_one_works(served, actors):
    alice = actors["alice"]

    async def work(session):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        stored = await session.call_tool(
            "mm_remember", {"text": RENEWAL, "stare_scores": {"s": 0.9, "t": 0.4}}
        )
        bulk = await session.call_tool(
            "mm_bulk_remember", {"memories": [{"text": "Dana prefers email."}]}
        )
        found = await session.call_tool("mm_search", {"query": "When does Zephyr renew?"})
        mem_id = stored.structured_content["mem_id"]
        feedback = await session.call_tool(
            "mm_feedback", {"mem_id": mem_id, "action": "pin", "reason": "budget depends on it"}
        )
        compiled = await session.call_tool("mm_compile", {"display_mode": "marks"})
        resource = await session.read_resource("memory://compiled")
        readiness = await session.call_tool("mm_stare_readiness", {})
        saga = await session.call_tool("mm_saga", {"query": "Zephyr"})  # a preview, off
        assert saga.is_error and "MM_SAGA" in text_of(saga)
        forgot = await session.call_tool(
            "mm_forget",
            {"mem_id": bulk.structured_content["results"][0]["mem_id"], "reason": "wrong"},
        )
        return tools, stored, bulk, found, feedback, compiled, resource, readiness, forgot

    tools, stored, bulk, found, feedback, compiled, resource, readiness, forgot = over_http(
        served, alice.token, work
    )

    assert set(tools) == TOOLS
    schema = tools["mm_remember"].input_schema
    assert schema["required"] == ["text"]
    assert schema["properties"]["category"]["enum"][0] == "fact"
    assert schema["properties"]["significance"]["maximum"] == 1
    assert tools["mm_feedback"].input_schema["properties"]["action"]["enum"] == [
        "important", "demote", "pin", "unpin", "forget"
    ]  # fmt: skip
    assert not stored.is_error and stored.structured_content["text"] == RENEWAL
    assert bulk.structured_content["stored"] == 1
    assert found.structured_content["results"][0]["text"] == RENEWAL
    assert text_of(found).startswith("| # | mem_id | Sig | Eligible | Category | Date | Text |")
    assert feedback.structured_content["pinned"] is True
    memory = Memory.objects.get(mem_id=stored.structured_content["mem_id"])
    event = ProvenanceEvent.objects.filter(memory=memory, action="pin").get()
    assert event.agent_id == alice.agent.pk and event.reason == "budget depends on it"
    assert f"- ●○——— {RENEWAL}" in text_of(compiled)
    assert resource.contents[0].text.startswith("# Memory: acme (agent alice)")
    assert not readiness.is_error
    assert text_of(readiness).startswith("| Dim | Capability | implementation | deployment |")
    assert readiness.structured_content["capabilities"][0]["verdict"] == "pending"
    assert forgot.structured_content["status"] == "forgotten"


def test_the_search_table_is_the_rest_apis_byte_for_byte(served, actors):
    alice = actors["alice"]
    for text in (RENEWAL, "Zephyr's main contact is Dana.", "The office closes at 18:00."):
        response = alice.client.post("/api/v1/memories", {"text": text}, format="json")
        assert response.status_code == 201
    query = {"query": "Zephyr contract", "limit": 5}

    async def work(session):
        return await session.call_tool("mm_search", query)

    result = over_http(served, alice.token, work)
    rest = alice.client.post("/api/v1/search", query, format="json").json()

    assert len(rest["results"]) == 3
    assert text_of(result) == rest["table"]
    assert [r["mem_id"] for r in result.structured_content["results"]] == [
        r["mem_id"] for r in rest["results"]
    ]


def test_a_bad_argument_is_a_tool_error_naming_the_field(served, actors):
    async def work(session):
        return (
            await session.call_tool("mm_remember", {"text": "x", "significance": 1.5}),
            await session.call_tool("mm_feedback", {"mem_id": "0" * 16, "action": "pin",
                                                    "reason": "r"}),
            await session.call_tool("mm_compile", {"display_mode": "emoji"}),
        )  # fmt: skip

    remember, feedback, compiled = over_http(served, actors["alice"].token, work)

    assert remember.is_error
    assert json.loads(text_of(remember)) == {"significance": ["must be between 0 and 1 (got 1.5)."]}
    assert feedback.is_error and "no memory" in text_of(feedback)
    assert compiled.is_error
    assert json.loads(text_of(compiled)) == {
        "display_mode": ['"emoji" is not one of: marks, verbose, off.']
    }
    assert not Memory.objects.exists()


def test_another_workspaces_token_sees_nothing(served, actors):
    async def remember(session):
        return await session.call_tool("mm_remember", {"text": RENEWAL})

    stored = over_http(served, actors["alice"].token, remember)
    mem_id = stored.structured_content["mem_id"]

    async def look(session):
        return (
            await session.call_tool("mm_search", {"query": "Zephyr renewal"}),
            await session.call_tool("mm_forget", {"mem_id": mem_id, "reason": "mine now"}),
            await session.call_tool("mm_compile", {}),
            await session.call_tool("mm_erase", {"mem_id": mem_id, "reason": "mine now"}),
        )

    found, forgot, compiled, erased = over_http(served, actors["charlie"].token, look)

    assert found.structured_content["results"] == []
    assert forgot.is_error and "no memory" in text_of(forgot)
    assert erased.is_error and "no memory" in text_of(erased)
    assert "Zephyr" not in text_of(compiled)
    assert Memory.objects.get(mem_id=mem_id).status == "active"


def test_a_bad_token_is_refused_before_any_tool_runs(served, actors):
    response = httpx2.post(
        f"{served}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": "Bearer mm_wrong", "Accept": "application/json"},
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert httpx2.post(f"{served}/mcp", json={}).status_code == 401


@pytest.mark.slow
def test_stdio_server_as_a_subprocess(actors):
    alice = actors["alice"]
    env = {**os.environ, "DATABASE_URL": database_url(), "MM_TOKEN": alice.token}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "meaning_memory", "mcp"], env=env, cwd=str(ROOT)
    )

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            stored = await session.call_tool("mm_remember", {"text": RENEWAL})
            found = await session.call_tool("mm_search", {"query": "Zephyr renewal"})
            bad = await session.call_tool("mm_search", {"query": "x", "limit": 0})
            return names, stored, found, bad

    names, stored, found, bad = asyncio.run(main())

    assert names == TOOLS
    assert found.structured_content["results"][0]["mem_id"] == stored.structured_content["mem_id"]
    assert bad.is_error and "limit" in json.loads(text_of(bad))
    assert Memory.objects.get(mem_id=stored.structured_content["mem_id"]).source == "alice"


def test_arguments_are_checked_as_the_rest_api_checks_them(served, actors):
    async def work(session):
        return [
            await session.call_tool(name, arguments)
            for name, arguments in [
                ("mm_remember", {"text": "x", "signficance": 0.1}),
                ("mm_remember", {"significance": 0.5}),
                ("mm_remember", {"text": "y", "significance": None}),
                ("mm_feedback", {"action": "pin"}),
                ("mm_bulk_remember", {"memories": [{"text": "ok"}, {"text": ""}]}),
                ("mm_stare_readiness", {"verbose": True}),
                ("mm_remember", {"text": '{"customer": "Zephyr"}'}),
            ]
        ]

    results = over_http(served, actors["alice"].token, work)
    bodies = [json.loads(text_of(r)) for r in results[:6]]

    assert all(r.is_error for r in results[:6])
    assert bodies[0] == {"signficance": ["is not a known field."]}
    assert bodies[1] == {"text": ["This field is required."]}
    assert bodies[2] == {"significance": ["This field may not be null."]}
    assert bodies[3] == {
        "mem_id": ["This field is required."],
        "reason": ["This field is required."],
    }
    assert bodies[4] == {"memories[1].text": ["must not be empty."]}
    assert bodies[5] == {"verbose": ["is not a known field."]}
    assert not results[6].is_error
    assert list(Memory.objects.values_list("text", flat=True)) == ['{"customer": "Zephyr"}']


def test_the_resource_is_the_readers_own_file(served, actors):
    async def remember(session):
        return await session.call_tool("mm_remember", {"text": RENEWAL})

    over_http(served, actors["alice"].token, remember)

    async def read(session):
        return (await session.read_resource("memory://compiled")).contents[0].text

    assert RENEWAL in over_http(served, actors["alice"].token, read)
    theirs = over_http(served, actors["charlie"].token, read)
    assert theirs.startswith("# Memory: globex (agent charlie)") and "Zephyr" not in theirs


def test_a_revoked_token_stops_working_in_a_running_server(actors):
    from meaning_memory.mcp import engine_tools
    from memories.mcp import stdio_server
    from memories.services import agent_authenticate

    alice = actors["alice"]
    server = stdio_server(lambda: agent_authenticate(alice.token), engine_tools())

    async def call():
        return await server.call_tool("mm_search", {"query": "anything"})

    assert not asyncio.run(call()).is_error
    alice.agent.is_active = False
    alice.agent.save(update_fields=["is_active"])
    result = asyncio.run(call())
    assert result.is_error and json.loads(text_of(result)) == {
        "detail": "Invalid or revoked token."
    }


def test_a_host_django_would_refuse_is_refused(served, actors):
    response = httpx2.post(
        f"{served}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {actors['alice'].token}", "Host": "evil.example"},
    )
    assert response.status_code == 400


def test_mm_link_and_the_relational_search_arguments(served, actors):
    alice, charlie = actors["alice"], actors["charlie"]

    async def work(session):
        hub = await session.call_tool(
            "mm_remember",
            {"text": RENEWAL, "entities": [{"name": "Zephyr Logistics", "type": "customer"}]},
        )
        other = await session.call_tool("mm_remember", {"text": "The renewal budget is set."})
        hub_id, other_id = hub.structured_content["mem_id"], other.structured_content["mem_id"]
        linked = await session.call_tool(
            "mm_link", {"mem_id": other_id, "to": hub_id, "type": "supports"}
        )
        bad = await session.call_tool(
            "mm_link", {"mem_id": other_id, "to": other_id, "type": "supports"}
        )
        related = await session.call_tool(
            "mm_search", {"query": "renewal budget", "related_to": hub_id}
        )
        by_entity = await session.call_tool(
            "mm_search", {"query": "renewal", "entity": "Zephyr Logistics"}
        )
        bad_min_r = await session.call_tool("mm_search", {"query": "renewal", "min_r": -1})
        return hub_id, other_id, linked, bad, related, by_entity, bad_min_r

    hub_id, other_id, linked, bad, related, by_entity, bad_min_r = over_http(
        served, alice.token, work
    )
    assert not linked.is_error and linked.structured_content["to"] == hub_id
    assert bad.is_error and "to" in bad.structured_content
    assert [r["mem_id"] for r in related.structured_content["results"]] == [other_id]
    assert [r["mem_id"] for r in by_entity.structured_content["results"]] == [hub_id]
    assert bad_min_r.is_error and "min_r" in bad_min_r.structured_content

    async def outsider(session):
        return await session.call_tool(
            "mm_link", {"mem_id": other_id, "to": hub_id, "type": "supports"}
        )

    refused = over_http(served, charlie.token, outsider)
    assert refused.is_error and refused.structured_content == {"detail": f"no memory {other_id!r}"}


def test_traversal_tools_follow_links_only_when_switched_on(served, actors, settings):
    alice, charlie = actors["alice"], actors["charlie"]
    settings.MM_ENTITY_EXTRACTION = False

    async def work(session):
        hub = await session.call_tool("mm_remember", {"text": RENEWAL})
        hub_id = hub.structured_content["mem_id"]
        other = await session.call_tool(
            "mm_remember",
            {"text": "The renewal budget is set.", "links": [{"to": hub_id, "type": "supports"}]},
        )
        other_id = other.structured_content["mem_id"]
        settings.MM_TRAVERSAL = False
        off = await session.call_tool("mm_traverse_relationships", {"from": hub_id})
        settings.MM_TRAVERSAL = True
        walked = await session.call_tool("mm_traverse_relationships", {"from": hub_id})
        path = await session.call_tool("mm_explain_path", {"from": other_id, "to": hub_id})
        bad = await session.call_tool("mm_traverse_relationships", {"from": hub_id, "depth": 9})
        return hub_id, other_id, off, walked, path, bad

    hub_id, other_id, off, walked, path, bad = over_http(served, alice.token, work)
    assert off.is_error and "MM_TRAVERSAL" in off.structured_content["detail"]
    assert not walked.is_error
    assert [n["node"]["mem_id"] for n in walked.structured_content["nodes"]] == [other_id]
    assert "supports" in walked.content[0].text
    assert not path.is_error and path.structured_content["length"] == 1
    assert path.structured_content["path"][0]["type"] == "supports"
    assert bad.is_error and "depth" in bad.structured_content

    async def outsider(session):
        return await session.call_tool("mm_traverse_relationships", {"from": hub_id})

    refused = over_http(served, charlie.token, outsider)
    assert refused.is_error and refused.structured_content == {
        "detail": f"from: no memory or entity {hub_id!r}"
    }


def test_the_divergences_tool_lists_what_the_reader_sees_only_when_switched_on(
    served, actors, settings
):
    from memories.operations import memory_remember
    from memories.services.divergence import divergence_run

    alice, charlie = actors["alice"], actors["charlie"]
    settings.MM_ENTITY_EXTRACTION = False
    zephyr = [{"name": "Zephyr", "type": "customer"}]
    for source, month in (("crm", "March"), ("email", "June")):
        memory_remember(
            agent=alice.agent,
            text=f"Zephyr renews in {month}.",
            source=source,
            entities=zephyr,
        )
    settings.MM_DIVERGENCE = True
    divergence_run(workspace=alice.agent.workspace)

    async def work(session):
        settings.MM_DIVERGENCE = False
        off = await session.call_tool("mm_divergences", {})
        settings.MM_DIVERGENCE = True
        listed = await session.call_tool("mm_divergences", {"status": "open"})
        bad = await session.call_tool("mm_divergences", {"status": "closed"})
        return off, listed, bad

    off, listed, bad = over_http(served, alice.token, work)
    assert off.is_error and "MM_DIVERGENCE" in off.structured_content["detail"]
    assert not listed.is_error
    [found] = listed.structured_content["results"]
    assert [m["source"] for m in found["memories"]] == ["crm", "email"]
    assert "≠" in listed.content[0].text
    assert bad.is_error and "status" in bad.structured_content

    async def outsider(session):
        return await session.call_tool("mm_divergences", {})

    theirs = over_http(served, charlie.token, outsider)
    assert not theirs.is_error and theirs.structured_content["results"] == []


def test_mm_remember_and_mm_search_carry_asymmetry(served, actors):
    async def work(session):
        return (
            await session.call_tool(
                "mm_remember",
                {"text": "According to Maria Lopez, Zephyr renews.", "perspective": "user"},
            ),
            await session.call_tool(
                "mm_search", {"query": "When does Zephyr renew?", "attributed_to": "Maria Lopez",
                              "source_kind": "stated", "perspective": "user"}
            ),
            await session.call_tool("mm_remember", {"text": "x", "perspective": "boss",
                                                    "source_kind": "rumour"}),
            await session.call_tool("mm_remember", {"text": "x",
                                                    "attributed_to": "0123456789abcdef"}),
        )  # fmt: skip

    stored, found, bad, missing = over_http(served, actors["alice"].token, work)
    memory = stored.structured_content
    assert memory["perspective"] == "user" and memory["source_kind"] == "stated"
    assert memory["attributed_to"]["name"] == "Maria Lopez"
    assert [h["mem_id"] for h in found.structured_content["results"]] == [memory["mem_id"]]
    assert bad.is_error and set(json.loads(text_of(bad))) == {"perspective", "source_kind"}
    assert missing.is_error and "no entity" in text_of(missing)
    assert Memory.objects.count() == 1


def test_mm_list_pages_through_what_the_reader_sees(served, actors):
    alice, charlie = actors["alice"], actors["charlie"]
    from memories.operations import memory_remember

    mine = [
        memory_remember(agent=alice.agent, text=f"Note {n}.", significance=0.1 * (n + 1)).memory
        for n in range(3)
    ]
    memory_remember(agent=charlie.agent, text="Globex merger code: BLUEBIRD.")

    async def work(session):
        return (
            await session.call_tool("mm_list", {"page_size": 2}),
            await session.call_tool("mm_list", {"page_size": 2, "page": 2}),
            await session.call_tool("mm_list", {"ordering": "significance", "page_size": 1}),
            await session.call_tool("mm_list", {"ordering": "oldest"}),
        )

    first, second, top, bad = over_http(served, alice.token, work)
    listed = [m["mem_id"] for m in first.structured_content["results"]]
    listed += [m["mem_id"] for m in second.structured_content["results"]]
    assert listed == [m.mem_id for m in reversed(mine)]
    assert first.structured_content["more"] and not second.structured_content["more"]
    assert top.structured_content["results"][0]["mem_id"] == mine[2].mem_id
    assert bad.is_error and "ordering" in json.loads(text_of(bad))

    async def outsider(session):
        return await session.call_tool("mm_list", {})

    theirs = over_http(served, charlie.token, outsider)
    assert [m["text"] for m in theirs.structured_content["results"]] == [
        "Globex merger code: BLUEBIRD."
    ]
