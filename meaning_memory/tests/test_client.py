"""The Python client (``meaning_memory.client``) against a live served engine: every method,
sync and async, typed results, errors as exceptions with the API's field messages, and
retries that never store a memory twice."""

import asyncio

import httpx
import pytest

from meaning_memory.client import (
    AsyncMeaningMemory,
    Conflict,
    InvalidInput,
    MeaningMemory,
    NotAuthorized,
    NotFound,
)
from meaning_memory.testing import make_actor
from memories.models import Memory

RENEWAL = "Zephyr Logistics renews its support contract every March."


@pytest.fixture
def actors(transactional_db):
    return {
        "alice": make_actor("acme", "alice", scopes=["team:accounts"]),
        "charlie": make_actor("globex", "charlie"),
    }


def test_every_method_works_and_returns_typed_results(served, actors):
    with MeaningMemory(served, actors["alice"].token) as mm:
        stored = mm.remember(RENEWAL, category="commitment", significance=0.9)
        assert stored.mem_id and stored.category == "commitment" and stored.significance == 0.9
        assert stored.created_at is not None and stored.created_at.tzinfo is not None
        bulk = mm.bulk_remember([{"text": "Dana prefers email."}, {"text": "Kwame leads QA."}])
        assert (bulk.stored, bulk.existing, len(bulk.mem_ids)) == (2, 0, 2)
        found = mm.search("When does Zephyr renew?")
        assert found.hits[0].memory.mem_id == stored.mem_id and found.hits[0].rank == 1
        assert "| # | mem_id |" in found.table and len(found) >= 1
        assert mm.get(stored.mem_id).text == RENEWAL
        pinned = mm.feedback(stored.mem_id, "pin", reason="the budget depends on it")
        assert pinned.pinned
        forgotten = mm.forget(bulk.mem_ids[0], reason="wrong")
        assert forgotten.status == "forgotten"
        with pytest.raises(Conflict) as again:  # already forgotten: a clash, named by field
            mm.forget(bulk.mem_ids[0], reason="twice")
        assert again.value.status == 409 and "already forgotten" in again.value.errors["mem_id"][0]
        erased = mm.erase(bulk.mem_ids[0], reason="a mistake")
        assert erased.erased == [bulk.mem_ids[0]] and erased.entities_removed >= 0
        with pytest.raises(NotFound):
            mm.get(bulk.mem_ids[0])
        page = mm.list(limit=1)
        assert len(page.memories) == 1 and page.next
        listed = [m.mem_id for m in mm.list_all(limit=1)]
        assert listed == [bulk.mem_ids[1], stored.mem_id]
        assert [m.mem_id for m in mm.list(category="commitment").memories] == [stored.mem_id]
        compiled = mm.compiled(display_mode="marks")
        assert RENEWAL in compiled.markdown and compiled.included == 2
        readiness = mm.readiness()
        assert "| Dim | Capability |" in readiness.table and readiness.capabilities
        history = mm.readiness_history(capability="S/core", runs=5)
        assert [h["key"] for h in history] == ["S/core"] and history[0]["runs"] == []
        with pytest.raises(InvalidInput) as bad:
            mm.readiness_history(runs=0)
        assert bad.value.errors == {"runs": ["must be 1 to 500."]}


def test_errors_are_exceptions_carrying_the_apis_messages(served, actors):
    with MeaningMemory(served, actors["alice"].token) as mm:
        with pytest.raises(InvalidInput) as bad:
            mm.remember("x", significance=1.5, perspective="boss")
        assert bad.value.status == 400
        assert set(bad.value.errors) == {"significance", "perspective"}
        assert "must be between 0 and 1" in bad.value.errors["significance"][0]
        theirs = MeaningMemory(served, actors["charlie"].token).remember("Globex note.")
        with pytest.raises(NotFound):
            mm.get(theirs.mem_id)
    assert Memory.objects.filter(workspace=actors["alice"].agent.workspace).count() == 0
    with pytest.raises(NotAuthorized), MeaningMemory(served, "mm_not-a-token") as stranger:
        stranger.search("anything")


def test_a_retried_write_is_stored_once(served, actors):
    """The connection breaks after the engine stored the memory (its answer is lost): the
    client sends it again with the same idempotency key and gets the stored memory back."""
    real = httpx.HTTPTransport()
    lost = {"answers": 0}

    class LosesTheFirstAnswer(httpx.BaseTransport):
        def handle_request(self, request):
            response = real.handle_request(request)
            if request.method == "POST" and not lost["answers"]:
                lost["answers"] += 1
                response.read()
                raise httpx.ReadError("connection reset", request=request)
            return response

    with MeaningMemory(
        served, actors["alice"].token, transport=LosesTheFirstAnswer(), backoff=0
    ) as mm:
        stored = mm.remember(RENEWAL)
    assert lost["answers"] == 1
    assert list(Memory.objects.values_list("mem_id", flat=True)) == [stored.mem_id]

    lost["answers"] = 0
    with (
        MeaningMemory(
            served, actors["alice"].token, transport=LosesTheFirstAnswer(), backoff=0
        ) as mm,
        pytest.raises(httpx.ReadError),
    ):
        mm.feedback(stored.mem_id, "important", reason="it was sent: not sent again")


def test_a_batch_sent_twice_stores_nothing_new(served, actors):
    """A script run again (or a batch retried after its answer was lost) sends the same items:
    the client's keys follow what each item says, so the second send finds them all stored;
    an item that differs in any field is new, and a key of the caller's own is kept."""
    batch = [
        {"text": "Dana prefers email.", "metadata": {"customer": "orion"}},
        {"text": "Kwame leads QA.", "scope": "team:accounts"},
        {"text": "Ünïcode café notes ✓", "category": "preference"},
    ]
    with MeaningMemory(served, actors["alice"].token) as mm:
        first = mm.bulk_remember(batch)
        again = mm.bulk_remember([dict(item) for item in batch])
        changed = mm.bulk_remember([{**batch[0], "metadata": {"customer": "zephyr"}}])
        own = mm.bulk_remember([{**batch[1], "idempotency_key": "mine-1"}])

    async def resend():
        async with AsyncMeaningMemory(served, actors["alice"].token) as amm:
            return await amm.bulk_remember(batch)

    from_async = asyncio.run(resend())
    assert (first.stored, first.existing) == (3, 0)
    assert (again.stored, again.existing, again.mem_ids) == (0, 3, first.mem_ids)
    assert (from_async.stored, from_async.mem_ids) == (0, first.mem_ids)
    assert changed.stored == 1 and own.stored == 1
    assert Memory.objects.count() == 5
    assert Memory.objects.filter(idempotency_key="mine-1").count() == 1


def test_the_async_client(served, actors):
    async def work():
        async with AsyncMeaningMemory(served, actors["alice"].token) as mm:
            stored = await mm.remember(RENEWAL)
            found = await mm.search("When does Zephyr renew?")
            page = await mm.list()
            with pytest.raises(InvalidInput):
                await mm.search("")
            return stored, found, page

    stored, found, page = asyncio.run(work())
    assert found.hits[0].memory.mem_id == stored.mem_id
    assert [m.mem_id for m in page.memories] == [stored.mem_id]
