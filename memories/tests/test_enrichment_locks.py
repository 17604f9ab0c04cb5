"""The enricher never waits for a memory another transaction holds (``enrich_rows``): an
erasure holding a pending memory (or a memory it links to) while it waits for the enricher's
rows would otherwise be a deadlock. Such a row stays pending and is enriched a moment later. A
supersession of a memory linked to is waited for, a moment, and never waits for the enricher. Each
test holds the other transaction open in a thread on its own connection, with a lock timeout
on the enricher's so that a wait fails at once instead of hanging."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.db import connection, transaction

from meaning_memory.testing import make_actor
from memories.models import Link, Memory, MemoryEnrichment
from memories.operations import memory_remember
from memories.services.enricher import HELD_SECONDS, enrich_pending, enrich_workspace
from memories.services.supersede import supersede

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def writer(settings):
    settings.MM_ENRICH_LATER = True
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '3s'")
    yield make_actor("acme", "writer")
    with connection.cursor() as cursor:
        cursor.execute("RESET lock_timeout")


class Holding:
    """``hold`` run in a transaction of another thread, kept open until ``then`` (run in the
    same transaction) is asked for."""

    def __init__(self, hold: Callable[[], None]):
        self.hold, self.then = hold, None
        self.ready, self.go, self.error = threading.Event(), threading.Event(), None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10), self.error

    def _run(self) -> None:
        try:
            with transaction.atomic():
                self.hold()
                self.ready.set()
                self.go.wait(20)
                if self.then is not None:
                    self.then()
        except Exception as error:  # the main thread asserts on it
            self.error = error
        finally:
            self.ready.set()
            connection.close()

    def finish(self, then: Callable[[], None] | None = None) -> None:
        self.then = then
        self.go.set()
        self.thread.join(20)
        assert self.error is None, self.error


def lock(memory: Memory) -> Callable[[], None]:
    """What a DELETE of the memory holds (``FOR UPDATE``), as an erasure does."""
    return lambda: list(Memory.objects.select_for_update().filter(pk=memory.pk))


def pending(memory: Memory) -> bool:
    return MemoryEnrichment.objects.filter(memory_id=memory.pk, state="pending").exists()


def test_a_memory_held_by_an_erasure_is_left_pending_then_goes_with_it(writer):
    memory = memory_remember(agent=writer.agent, text="Maria Lopez moved to Kraków.").memory
    erasure = Holding(lock(memory))
    started = time.monotonic()
    done = enrich_pending()
    assert (done.taken, done.held, done.enriched) == (1, 1, 0)
    assert time.monotonic() - started < 2.5  # never waited for the lock (3 s would fail)
    assert pending(memory)
    # The erasure deletes the memory and its pending row, which the enricher no longer holds.
    erasure.finish(lambda: Memory.objects.filter(pk=memory.pk).delete())
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryEnrichment.objects.exists()
    time.sleep(HELD_SECONDS)
    assert enrich_pending().taken == 0


def test_a_memory_held_for_a_moment_is_enriched_after_it(writer):
    memory = memory_remember(agent=writer.agent, text="Maria Lopez moved to Kraków.").memory
    other = Holding(lock(memory))
    assert enrich_pending().held == 1
    other.finish()  # let go without a change (a rolled back erasure, say)
    # A consolidation run waits for it rather than reading it without its entities.
    assert enrich_workspace(writer.agent.workspace_id) == 1
    assert not pending(memory)
    assert Link.objects.filter(source=memory, target_entity__name="Kraków").exists()


def test_a_link_to_a_memory_being_erased_or_superseded_never_deadlocks(writer):
    target = memory_remember(agent=writer.agent, text="The keys are with the front desk.").memory
    successor = memory_remember(agent=writer.agent, text="The keys are with Ana now.").memory
    linking = memory_remember(
        agent=writer.agent,
        text="Ask at the front desk in Kraków.",
        links=[{"to": target.mem_id, "type": "supports"}],
    ).memory
    MemoryEnrichment.objects.exclude(memory=linking).delete()

    erasure = Holding(lock(target))
    done = enrich_pending()
    assert (done.held, done.enriched) == (1, 0)  # not enriched without its link, not waiting
    erasure.finish()
    assert pending(linking)

    # A supersession holds the memory's degree row, which the link's insert updates too: the
    # enricher waits for it to commit (a moment), and neither waits for the other.
    superseding = Holding(lambda: supersede(old=target, new=successor, agent=writer.agent))
    threading.Timer(0.5, superseding.go.set).start()
    time.sleep(HELD_SECONDS)
    started = time.monotonic()
    done = enrich_pending()
    assert (done.held, done.enriched) == (0, 1)
    assert time.monotonic() - started < 2.5
    superseding.finish()
    assert Link.objects.filter(source=linking, target_memory=target, kind="supports").exists()
    target.refresh_from_db()
    assert target.status == Memory.Status.SUPERSEDED
