import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from memories.operations import memory_remember, memory_search
from memories.selectors.reader import Reader
from memories.services import memory_feedback
from memories.tests.test_compile import FILLER, compile_for, remember_fillers


def eligible_by_mem_id(actor, query, **filters):
    hits = memory_search(Reader.of_agent(actor.agent), **filters, query=query, limit=20)
    return {hit.memory.mem_id: hit.eligible for hit in hits}


def test_eligible_says_whether_the_compiled_file_holds_the_memory(alice, settings):
    settings.MM_COMPILE_BUDGET_TOKENS = 200
    memories = remember_fillers(alice, [0.5, 0.8, 0.3, 0.7, 0.4, 0.6])
    pinned = memories[2]
    memory_feedback(agent=alice.agent, mem_id=pinned.mem_id, action="pin", reason="keep it")
    compiled = compile_for(alice)
    included = {entry.mem_id for entry in compiled.included}

    eligible = eligible_by_mem_id(alice, "quarterly report warehouse")

    assert eligible[pinned.mem_id] == "protected"
    for memory in memories:
        if memory.mem_id != pinned.mem_id:
            assert eligible[memory.mem_id] == ("yes" if memory.mem_id in included else "cut")
    assert set(eligible.values()) == {"protected", "yes", "cut"}


def test_eligible_is_a_dash_for_memories_not_valid_now(alice):
    now = timezone.now()
    old = memory_remember(
        agent=alice.agent,
        text="The old office is on Elm Street.",
        valid_from=now - timedelta(days=30),
        valid_until=now - timedelta(days=1),
    ).memory
    current = memory_remember(agent=alice.agent, text="The new office is on Oak Street.").memory

    eligible = eligible_by_mem_id(
        alice, "office street", currently_valid=None, as_of=now - timedelta(days=2)
    )
    eligible |= eligible_by_mem_id(alice, "office street")

    assert eligible == {old.mem_id: "-", current.mem_id: "yes"}


def test_eligible_follows_a_demotion_with_the_same_boundary(alice, settings):
    settings.MM_COMPILE_BUDGET_TOKENS = 200
    memories = remember_fillers(alice, [0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    eligible_by_mem_id(alice, "quarterly report warehouse")  # computes the boundary
    top = memories[0]

    memory_feedback(agent=alice.agent, mem_id=top.mem_id, action="demote", reason="stale")
    memory_feedback(agent=alice.agent, mem_id=top.mem_id, action="demote", reason="stale")

    assert eligible_by_mem_id(alice, "quarterly report warehouse")[top.mem_id] == "cut"


@pytest.mark.django_db(transaction=True)
def test_past_its_ttl_the_line_answers_while_a_new_one_is_computed(settings):
    from meaning_memory.testing import make_actor

    settings.MM_COMPILE_BUDGET_TOKENS = 200
    settings.MM_COMPILE_ELIGIBLE_TTL = 0.2
    alice = make_actor("acme", "alice")
    memories = remember_fillers(alice, [0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    before = eligible_by_mem_id(alice, "quarterly report warehouse")
    last_in = [m.mem_id for m in memories if before[m.mem_id] == "yes"][-1]
    memory_remember(agent=alice.agent, text=FILLER.format(n="new"), significance=0.85)
    time.sleep(0.3)

    stale = eligible_by_mem_id(alice, "quarterly report warehouse")
    for thread in threading.enumerate():
        if thread.name == "eligible-refresh":
            thread.join(timeout=30)
    fresh = eligible_by_mem_id(alice, "quarterly report warehouse")

    assert stale[last_in] == "yes"
    assert fresh[last_in] == "cut"


def test_with_decay_the_last_memory_in_stays_in_as_time_passes(alice, settings):
    settings.MM_COMPILE_BUDGET_TOKENS = 200
    settings.MM_DECAY_PRESET = "standard"
    memories = remember_fillers(alice, [0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    first = eligible_by_mem_id(alice, "quarterly report warehouse")
    last_in = [m.mem_id for m in memories if first[m.mem_id] == "yes"][-1]

    later = eligible_by_mem_id(alice, "quarterly report warehouse")

    assert later == first
    assert later[last_in] == "yes"
