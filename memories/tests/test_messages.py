"""A conversation in one call (issue 58): ``POST /api/v1/messages`` stores a memory per message
with its speaker, session and time, each once; bad input is refused whole, naming the field;
another workspace and another agent's private scope see nothing of it."""

from __future__ import annotations

import pytest

from memories.models import Memory

MESSAGES = "/api/v1/messages"

CHAT = {
    "session": "orion-call-1",
    "messages": [
        {
            "role": "user",
            "name": "Priya",
            "content": "Orion wants to move the renewal to June.",
            "at": "2026-03-02T09:00:00Z",
        },
        {
            "role": "assistant",
            "content": "Noted: the renewal moves to June.",
            "at": "2026-03-02T09:00:30Z",
        },
        {
            "role": "user",
            "name": "Priya",
            "content": "  And they need 80 seats, not 50.  ",
            "at": "2026-03-02T09:01:00Z",
            "metadata": {"topic": "seats"},
        },
    ],
    "metadata": {"customer": "orion"},
}


def post(actor, body):
    return actor.client.post(MESSAGES, body, format="json")


@pytest.mark.django_db
def test_each_message_becomes_a_memory_with_its_speaker_session_and_time(alice):
    response = post(alice, CHAT)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["stored"], body["existing"]) == (3, 0)
    ids = [r["mem_id"] for r in body["results"]]
    memories = {m.mem_id: m for m in Memory.objects.filter(mem_id__in=ids)}
    first, second, third = (memories[i] for i in ids)
    assert first.text == "Priya: Orion wants to move the renewal to June."
    assert third.text == "Priya: And they need 80 seats, not 50."
    assert second.text == "Noted: the renewal moves to June."
    assert {m.session for m in memories.values()} == {"orion-call-1"}
    assert {m.memory_type for m in memories.values()} == {"episodic"}
    assert first.created_at.isoformat() == "2026-03-02T09:00:00+00:00"
    assert first.observed_at == first.created_at
    assert (first.perspective, second.perspective) == ("user", "self")
    assert first.attributed_to is not None and first.attributed_to.name == "Priya"
    assert second.attributed_to is None
    assert first.metadata == {"customer": "orion", "role": "user", "speaker": "Priya"}
    assert third.metadata == {
        "customer": "orion",
        "topic": "seats",
        "role": "user",
        "speaker": "Priya",
    }
    # The list filters on what the conversation stored.
    listed = alice.client.get(
        "/api/v1/memories", {"session": "orion-call-1", "metadata": '{"speaker": "Priya"}'}
    ).json()["results"]
    assert {m["mem_id"] for m in listed} == {first.mem_id, third.mem_id}


@pytest.mark.django_db
def test_sent_again_or_longer_each_message_is_stored_once(alice):
    first = post(alice, CHAT).json()
    again = post(alice, CHAT)
    assert again.status_code == 200
    assert again.json()["existing"] == 3
    assert [r["mem_id"] for r in again.json()["results"]] == [r["mem_id"] for r in first["results"]]
    longer = {
        **CHAT,
        "messages": [
            *CHAT["messages"],
            {
                "role": "assistant",
                "content": "I'll update the order.",
                "at": "2026-03-02T09:02:00Z",
            },
        ],
    }
    answer = post(alice, longer).json()
    assert (answer["stored"], answer["existing"]) == (1, 3)
    # By the caller's own id, the same words said twice are two messages.
    twice = {
        "session": "s2",
        "messages": [
            {"role": "user", "content": "ok", "id": "m1"},
            {"role": "user", "content": "ok", "id": "m2"},
            {"role": "user", "content": "ok", "id": "m1"},
        ],
    }
    answer = post(alice, twice).json()
    assert answer["stored"] == 2
    assert answer["results"][0]["mem_id"] == answer["results"][2]["mem_id"]
    assert Memory.objects.filter(session="s2").count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "session"),
        ({"session": "   ", "messages": [{"role": "user", "content": "x"}]}, "session"),
        ({"session": "s", "messages": []}, "messages"),
        ({"session": "s", "messages": "hello"}, "messages"),
        ({"session": "s", "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        (
            {"session": "s", "messages": [{"role": "user", "content": " \n "}]},
            "messages[0].content",
        ),
        (
            {"session": "s", "messages": [{"role": "user", "content": "x", "at": "2999-01-01"}]},
            "messages[0].at",
        ),
        (
            {"session": "s", "messages": [{"role": "user", "content": "x", "colour": "red"}]},
            "messages[0].colour",
        ),
        (
            {"session": "s", "messages": [{"role": "user", "content": "x"}], "scope": "team:no"},
            "scope",
        ),
        ({"session": "s\x00", "messages": [{"role": "user", "content": "x"}]}, "session"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_whole_naming_the_field(alice, body, field):
    good = {"role": "user", "content": "This one is fine."}
    if isinstance(body.get("messages"), list) and body["messages"]:
        body = {**body, "messages": [good, *body["messages"]]}
        field = field.replace("messages[0]", "messages[1]")
    response = post(alice, body)
    assert response.status_code in (400, 404), response.json()
    assert field in response.json(), response.json()
    assert Memory.objects.count() == 0  # nothing half-written


@pytest.mark.django_db
def test_a_message_leaves_room_for_its_speaker(alice, settings):
    longest = settings.MM_MAX_TEXT_CHARS - 202
    name = "N" * 200
    ok = post(
        alice,
        {"session": "s", "messages": [{"role": "user", "name": name, "content": "x" * longest}]},
    )
    assert ok.status_code == 201, ok.json()
    stored = Memory.objects.get(mem_id=ok.json()["results"][0]["mem_id"])
    assert len(stored.text) == settings.MM_MAX_TEXT_CHARS
    response = post(
        alice, {"session": "s", "messages": [{"role": "user", "content": "x" * (longest + 1)}]}
    )
    assert response.status_code == 400
    assert "at most" in response.json()["messages[0].content"][0]


@pytest.mark.django_db
def test_unicode_names_and_shared_scope(alice, bob):
    body = {
        "session": "café-☕",
        "scope": "team:accounts",
        "messages": [{"role": "user", "name": "Zoë Ærø", "content": "Ünïcode wörks — 日本語"}],
    }
    stored = post(alice, body).json()["results"][0]["mem_id"]
    seen = bob.client.get(f"/api/v1/memories/{stored}")
    assert seen.status_code == 200
    assert seen.json()["text"] == "Zoë Ærø: Ünïcode wörks — 日本語"
    assert seen.json()["session"] == "café-☕"


@pytest.mark.django_db
def test_another_agents_private_conversation_and_another_workspace_see_nothing(alice, bob, charlie):
    stored = post(alice, CHAT).json()
    for other in (bob, charlie):
        for result in stored["results"]:
            assert other.client.get(f"/api/v1/memories/{result['mem_id']}").status_code == 404
        listed = other.client.get("/api/v1/memories", {"session": "orion-call-1"}).json()
        assert listed["results"] == []
    # The same conversation sent by another agent is its own.
    theirs = post(charlie, CHAT).json()
    assert theirs["stored"] == 3


@pytest.mark.django_db
def test_without_a_token_it_is_refused(client):
    response = client.post(MESSAGES, CHAT, content_type="application/json")
    assert response.status_code in (401, 403)


def test_the_mcp_tool_takes_the_same_conversation(served):
    """``mm_remember_messages`` over MCP (HTTP), and ``mm_compile`` of that customer's file by
    entity with the same metadata filter; a bad message is a tool error naming its field."""
    import asyncio

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from meaning_memory.testing import make_actor

    alice = make_actor("acme", "alice")

    async def main():
        headers = {"Authorization": f"Bearer {alice.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{served}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            stored = await session.call_tool("mm_remember_messages", CHAT)
            again = await session.call_tool("mm_remember_messages", CHAT)
            broken = await session.call_tool(
                "mm_remember_messages", {"session": "s", "messages": [{"role": "x"}]}
            )
            compiled = await session.call_tool(
                "mm_compile",
                {"metadata": {"speaker": "Priya"}, "group_by": "entity", "display_mode": "off"},
            )
            return stored, again, broken, compiled

    stored, again, broken, compiled = asyncio.run(main())
    assert stored.structured_content["stored"] == 3
    assert again.structured_content["existing"] == 3
    assert broken.is_error and "messages[0].role" in broken.content[0].text
    markdown = compiled.content[0].text
    assert "Priya: Orion wants to move the renewal to June." in markdown
    assert "Noted" not in markdown  # the assistant's line has no speaker Priya


@pytest.mark.django_db
def test_the_command_line_reads_a_json_list_or_json_lines(alice, tmp_path, monkeypatch):
    import io
    import json
    from io import StringIO

    from django.core.management import CommandError, call_command

    listed = tmp_path / "chat.json"
    listed.write_text(json.dumps(CHAT["messages"]))
    out = StringIO()
    call_command(
        "messages", "--session", "orion-call-1", "--file", str(listed),
        "--metadata", '{"customer": "orion"}', "--workspace", "acme", "--agent", "alice",
        stdout=out,
    )  # fmt: skip
    assert json.loads(out.getvalue())["stored"] == 3
    monkeypatch.setattr("sys.stdin", io.StringIO('{"role": "user", "content": "From stdin."}\n'))
    out = StringIO()
    call_command("messages", "--session", "s2", "--file", "-", "--token", alice.token, stdout=out)
    assert json.loads(out.getvalue())["stored"] == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"role": "user", "content": "ok"}\n{"role": \n')
    with pytest.raises(CommandError, match="--file: line 2 is not JSON"):
        call_command("messages", "--session", "s", "--file", str(broken), "--token", alice.token)
    with pytest.raises(CommandError, match=r"messages\[0\].role"):
        listed.write_text('[{"role": "robot", "content": "x"}]')
        call_command("messages", "--session", "s", "--file", str(listed), "--token", alice.token)
    with pytest.raises(CommandError, match="--file: cannot read"):
        call_command("messages", "--session", "s", "--file", str(tmp_path / "nope.json"),
                     "--token", alice.token)  # fmt: skip
    assert Memory.objects.count() == 4
