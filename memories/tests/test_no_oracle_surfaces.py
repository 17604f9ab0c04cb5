"""Every read path that takes a name answers a second agent's probe the same for a name another
agent wrote only in a private memory and for a name never written (issue 57): the REST API, the
MCP tools and the CLI, whether the name is an entity the memory mentions or the person a claim
is attributed to. The answers are compared whole, the probed name masked."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories.errors import MemoryEngineError
from memories.mcp import tools
from memories.operations import memory_remember
from memories.presenters import error_response

#: Written by alice in her private scope; bob may not read it.
WRITTEN = {"entity": "Marrowgate Ventures", "attributed_to": "Thessaly Crane"}
#: Never written anywhere.
UNWRITTEN = {"entity": "Vantablue Partners", "attributed_to": "Oriel Bancroft"}


@pytest.fixture
def private(alice, bob):
    memory_remember(
        agent=alice.agent,
        text="Marrowgate Ventures signed the lease for the harbour office.",
        entities=[{"name": "Marrowgate Ventures", "type": "organization"}],
    )
    memory_remember(
        agent=alice.agent,
        text="The lease terms are fine by us.",
        attributed_to="Thessaly Crane",
        source_kind="stated",
    )
    # Bob has memories of his own, so that an answer is not empty for want of any.
    memory_remember(agent=bob.agent, text="The harbour office lease ends in May.")


def masked(answer: object, name: str) -> str:
    text = (
        json.dumps(answer, sort_keys=True, default=str) if not isinstance(answer, str) else answer
    )
    return text.replace(name, "NAME").replace(name.lower(), "name")


def rest(actor, field: str, name: str) -> list[tuple[int, str]]:
    calls = [
        actor.client.post("/api/v1/search", {"query": "lease", field: name}, format="json"),
        actor.client.get("/api/v1/memories", {field: name}),
    ]
    if field == "entity":
        calls.append(actor.client.get("/api/v1/entities", {"query": name}))
    return [(answer.status_code, masked(answer.json(), name)) for answer in calls]


def mcp(actor, field: str, name: str) -> list[str]:
    answers = []
    for tool, arguments in (
        (tools.search, {"query": "lease", field: name}),
        (tools.list_memories, {field: name}),
    ):
        try:
            result = tool(actor.agent, arguments)
            answers.append(masked(result.structuredContent, name))
        except MemoryEngineError as exc:
            answers.append(masked(error_response(exc)[1], name))
    return answers


def cli(actor, field: str, name: str) -> list[str]:
    answers = []
    option = "--" + field.replace("_", "-")
    for command, args in (("search", ["lease"]), ("list", [])):
        out = StringIO()
        try:
            call_command(command, *args, option, name, "--token", actor.token, "--json", stdout=out)
            answers.append(masked(out.getvalue(), name))
        except (CommandError, MemoryEngineError) as exc:
            answers.append("error: " + masked(str(exc), name))
    return answers


@pytest.mark.parametrize("field", ["entity", "attributed_to"])
@pytest.mark.parametrize("surface", [rest, mcp, cli], ids=["rest", "mcp", "cli"])
def test_a_privately_written_name_is_answered_as_a_name_never_written(private, bob, field, surface):
    written = surface(bob, field, WRITTEN[field])
    unwritten = surface(bob, field, UNWRITTEN[field])
    assert written == unwritten


def test_the_writer_herself_finds_the_name(private, alice):
    """The probe can tell: the writer who may read her memory is answered otherwise."""
    mine = rest(alice, "entity", WRITTEN["entity"])
    never = rest(alice, "entity", UNWRITTEN["entity"])
    assert mine != never and mine[0][0] == 200
