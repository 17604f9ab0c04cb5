"""The command line has the agent's operations the other surfaces have (issue 38): feedback
(forget included), forget and list, with the same rules and the same isolation."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory
from memories.operations import memory_remember


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def as_alice(*args: str) -> tuple[str, ...]:
    return (*args, "--workspace", "acme", "--agent", "alice")


def test_feedback_forget_and_list_as_an_agent(alice):
    march = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory
    june = memory_remember(agent=alice.agent, text="Helios renews in June.").memory

    pinned = run(*as_alice("feedback", march.mem_id, "pin", "--reason", "budget"))
    run(*as_alice("forget", june.mem_id, "--reason", "wrong"))
    listed = json.loads(run(*as_alice("list", "--json")))
    text = run(*as_alice("list", "--page-size", "1"))

    assert "pinned" in pinned and Memory.objects.get(pk=march.pk).pinned
    assert Memory.objects.get(pk=june.pk).status == "forgotten"
    assert [m["mem_id"] for m in listed["results"]] == [march.mem_id]
    assert text.startswith(march.mem_id) and "(more" not in text


def test_feedback_forget_as_the_rest_api_takes_it(alice):
    memory = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory

    run(*as_alice("feedback", memory.mem_id, "forget", "--reason", "wrong"))

    assert Memory.objects.get(pk=memory.pk).status == "forgotten"


def test_bad_input_names_the_field(alice):
    memory = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory

    with pytest.raises(CommandError, match="action:"):
        run(*as_alice("feedback", memory.mem_id, "shred", "--reason", "x"))
    with pytest.raises(CommandError, match="reason:"):
        run(*as_alice("forget", memory.mem_id, "--reason", "  "))
    with pytest.raises(CommandError, match="page:"):
        run(*as_alice("list", "--page", "2.0"))


def test_another_agents_private_memory_is_not_there(alice, bob):
    private = memory_remember(agent=bob.agent, text="Bob's private note.").memory

    for command in (("feedback", private.mem_id, "pin"), ("forget", private.mem_id)):
        with pytest.raises(CommandError, match="no memory"):
            run(*as_alice(*command, "--reason", "x"))
    assert private.mem_id not in run(*as_alice("list", "--json"))
    assert Memory.objects.get(pk=private.pk).status == "active"
