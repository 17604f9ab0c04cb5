"""The synthetic checks of Open Threads and saga recall (E), on stories planted across
sessions."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from django.test.utils import override_settings
from django.utils import timezone

from memories.models import Memory
from memories.operations import memory_remember
from memories.selectors.reader import Reader
from memories.services import agent_create
from readiness.checks.sandbox import Result

#: Two stories told across four sessions between other talk, and one in another reader's scope.
POTTERY = [
    "I started a pottery class at the studio; we shape a bowl for the kiln.",
    "My first pottery bowl cracked in the kiln at the studio.",
    "The pottery teacher at the studio showed me how to glaze a bowl before the kiln.",
    "I will bring my glazed pottery bowl from the studio kiln to the show next week.",
]
ROOF = [
    "The roofer found a leak above the attic window.",
    "The roofer quoted a new flashing for the attic leak.",
    "We are waiting for the roofer to fix the attic flashing.",
    "The roofer fixed the attic leak; the flashing is done.",
]
OTHER = [
    "Lunch was a tomato soup with bread.",
    "The train to work was late again this morning.",
    "My sister called about her birthday dinner plans.",
    "The weather turned cold and windy in the evening.",
]
GARDEN = [
    "The gardener planted tulip bulbs along the fence.",
    "The gardener says the tulip bulbs by the fence need compost.",
    "Are the tulip bulbs by the fence coming up yet?",
]


def _stories() -> tuple[Any, Any, dict[str, list[Memory]]]:
    """Alice's stories in a shared scope, bob's in his private one; threads phase run."""
    from consolidation.services import consolidation_execute, consolidation_start

    slug = f"readiness-{secrets.token_hex(4)}"
    alice, bob = (
        agent_create(workspace_slug=slug, name=name, shared_scopes=["team:home"])[0]
        for name in ("alice", "bob")
    )
    start = timezone.now() - timedelta(days=60)
    written: dict[str, list[Memory]] = {"pottery": [], "roof": [], "other": [], "garden": []}
    for session in range(4):
        stories = (("pottery", POTTERY), ("other", OTHER), ("roof", ROOF))
        for minute, (name, lines) in enumerate(stories):
            written[name].append(
                memory_remember(
                    agent=alice,
                    text=lines[session],
                    scope="team:home",
                    memory_type="episodic",
                    session=f"session-{session}",
                    created_at=start + timedelta(days=7 * session, minutes=minute),
                ).memory
            )
        if session < len(GARDEN):
            written["garden"].append(
                memory_remember(
                    agent=bob,
                    text=GARDEN[session],
                    memory_type="episodic",
                    session=f"garden-{session}",
                    created_at=start + timedelta(days=7 * session, minutes=5),
                ).memory
            )
    with override_settings(MM_OPEN_THREADS=True):
        run = consolidation_execute(
            consolidation_start(workspace=alice.workspace, trigger="command", phases=["threads"])
        )
    if run.status != "done":
        raise RuntimeError(run.error)
    return alice, bob, written


def threads_as_documented() -> Result:
    """Stories told across sessions are grouped into their own threads (other talk kept out),
    open or resolved as their last cues say, no thread crosses scopes, and a reader's compiled
    file lists the open threads of the scopes it sees and no other."""
    from memories.compile import compiled_memory_file
    from memories.models import Thread, ThreadMember

    alice, bob, written = _stories()
    thread_of = dict(
        ThreadMember.objects.filter(workspace=alice.workspace).values_list("memory_id", "thread")
    )
    threads = {name: {thread_of.get(m.pk) for m in ms} for name, ms in written.items()}
    trials = [
        len(threads["pottery"]) == 1 and None not in threads["pottery"],
        len(threads["roof"]) == 1 and None not in threads["roof"],
        len(threads["garden"]) == 1 and None not in threads["garden"],
        threads["pottery"].isdisjoint(threads["roof"]),
        not (threads["other"] & (threads["pottery"] | threads["roof"])),
    ]
    by_pk = Thread.objects.in_bulk({t for ts in threads.values() for t in ts if t})
    pottery, roof, garden = (
        by_pk.get(next(iter(threads[n]))) for n in ("pottery", "roof", "garden")
    )
    trials += [
        pottery is not None and pottery.status == "open",
        roof is not None and roof.status == "resolved",
        garden is not None and garden.status == "open" and garden.scope_id == bob.private_scope.pk,
    ]
    with override_settings(MM_OPEN_THREADS=True):
        seen = {
            agent.name: set(compiled_memory_file(Reader.of_agent(agent)).threads)
            for agent in (alice, bob)
        }
    trials += [
        pottery is not None and seen["alice"] == {pottery.thread_id},
        garden is not None
        and pottery is not None
        and seen["bob"] == {pottery.thread_id, garden.thread_id},
    ]
    return sum(trials) / len(trials), {"trials": len(trials), "passed": sum(trials)}


def saga_as_documented() -> Result:
    """A query recalls its whole story in time order with a summary made of the story's own
    sentences, and never what the reader may not see. The search gives one hit: the rest of
    the story comes through its thread."""
    from consolidation.saga import saga_recall

    alice, bob, written = _stories()
    trials = []
    with override_settings(MM_SAGA=True, MM_SAGA_HITS=1):
        for name, query in (("roof", "the leak in the attic"), ("pottery", "my pottery bowl")):
            saga = saga_recall(Reader.of_agent(alice), query=query)
            got = [m.pk for m in saga.memories]
            story = [m.pk for m in written[name]]
            trials.append([pk for pk in got if pk in story] == story)
            in_time = sorted(saga.memories, key=lambda m: (m.created_at, m.pk))
            trials.append(got == [m.pk for m in in_time])
            texts = {m.pk: m.text for m in saga.memories}
            trials.append(
                bool(saga.summary)
                and all(sentence in texts[memory.pk] for memory, sentence in saga.summary)
            )
        hidden = saga_recall(Reader.of_agent(alice), query="tulip bulbs by the fence")
        trials.append(not {m.pk for m in hidden.memories} & {m.pk for m in written["garden"]})
    return sum(trials) / len(trials), {"trials": len(trials), "passed": sum(trials)}
