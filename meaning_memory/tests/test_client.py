"""The Python client (``meaning_memory.client``) against a live served engine: every method,
sync and async, its answers the schema's models (``meaning_memory.client.answers``), errors
as exceptions with the API's field messages, and retries that never store a memory twice; the
README's and docs/api.md's Python examples run as written."""

import asyncio
import json
import re

import httpx
import pytest

from meaning_memory.client import (
    AsyncMeaningMemory,
    BulkResult,
    Conflict,
    InvalidInput,
    MeaningMemory,
    NotAuthorized,
    NotFound,
    SearchResults,
    answers,
)
from meaning_memory.testing import make_actor
from meaning_memory.tests.served import ROOT
from memories.models import Memory

RENEWAL = "Zephyr Logistics renews its support contract every March."


@pytest.fixture
def actors(transactional_db):
    return {
        "alice": make_actor("acme", "alice", scopes=["team:accounts"]),
        "charlie": make_actor("globex", "charlie"),
    }


def test_every_method_works_and_returns_the_schemas_models(served, actors):
    with MeaningMemory(served, actors["alice"].token) as mm:
        stored = mm.remember(RENEWAL, category="commitment", significance=0.9)
        assert isinstance(stored, answers.MemoryDetail)
        assert stored.mem_id and stored.category == "commitment" and stored.significance == 0.9
        assert stored.created_at.tzinfo is not None and stored.valid_until is None
        assert isinstance(stored.stare_scores, answers.StareScores)  # nested models too
        assert [event.action for event in stored.provenance] == ["remember"]
        bulk = mm.bulk_remember([{"text": "Dana prefers email."}, {"text": "Kwame leads QA."}])
        assert isinstance(bulk, BulkResult) and isinstance(bulk, answers.Bulk)
        assert (bulk.stored, bulk.existing, len(bulk.mem_ids)) == (2, 0, 2)
        assert bulk.mem_ids == [item.mem_id for item in bulk.results]
        found = mm.search("When does Zephyr renew?")
        assert isinstance(found, SearchResults) and isinstance(found, answers.Search)
        assert found.results[0].mem_id == stored.mem_id and found.results[0].rank == 1
        assert [hit.mem_id for hit in found] == [hit.mem_id for hit in found.results]
        assert found.results[0].explanation.score > 0 and found.results[0].text == RENEWAL
        assert "| # | mem_id |" in found.table and len(found) == len(found.results) >= 1
        assert mm.get(stored.mem_id).text == RENEWAL
        # Nothing of the answer is dropped: the model gives back the API's JSON (its times in
        # pydantic's spelling of UTC).
        raw = httpx.get(
            f"{served}/api/v1/memories/{stored.mem_id}",
            headers={"Authorization": f"Bearer {actors['alice'].token}"},
        ).text
        utc = json.loads(re.sub(r'(T[0-9:.]+)\+00:00"', r'\1Z"', raw))
        got = mm.get(stored.mem_id)
        assert got.model_dump(mode="json", by_alias=True, exclude_unset=True) == utc
        pinned = mm.feedback(stored.mem_id, "pin", reason="the budget depends on it")
        assert pinned.pinned and isinstance(pinned, answers.MemoryDetail)
        forgotten = mm.forget(bulk.mem_ids[0], reason="wrong")
        assert forgotten.status == "forgotten"
        with pytest.raises(Conflict) as again:  # already forgotten: a clash, named by field
            mm.forget(bulk.mem_ids[0], reason="twice")
        assert again.value.status == 409 and "already forgotten" in again.value.errors["mem_id"][0]
        erased = mm.erase(bulk.mem_ids[0], reason="a mistake")
        assert isinstance(erased, answers.Erasure)
        assert erased.erased == [bulk.mem_ids[0]] and erased.entities_removed >= 0
        with pytest.raises(NotFound):
            mm.get(bulk.mem_ids[0])
        page = mm.list(limit=1)
        assert isinstance(page, answers.MemoryPage)
        assert len(page.results) == 1 and page.next and page.previous is None
        listed = [m.mem_id for m in mm.list_all(limit=1)]
        assert listed == [bulk.mem_ids[1], stored.mem_id]
        assert [m.mem_id for m in mm.list(category="commitment").results] == [stored.mem_id]
        compiled = mm.compiled(display_mode="marks")
        assert isinstance(compiled, answers.Compiled)
        assert RENEWAL in compiled.markdown and compiled.included_count == 2
        assert {entry.mem_id for entry in compiled.included} == {stored.mem_id, bulk.mem_ids[1]}
        readiness = mm.readiness()
        assert isinstance(readiness, answers.Readiness)
        assert "| Dim | Capability |" in readiness.table and readiness.capabilities[0].dim
        history = mm.readiness_history(capability="S/core", runs=5)
        assert isinstance(history, answers.History)
        assert [h.key for h in history.capabilities] == ["S/core"]
        assert history.capabilities[0].runs == []
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
    assert isinstance(stored, answers.MemoryDetail) and isinstance(found, SearchResults)
    assert found.results[0].mem_id == stored.mem_id
    assert [m.mem_id for m in page.results] == [stored.mem_id]


@pytest.mark.parametrize("document", ["README.md", "docs/api.md"])
def test_the_documents_python_example_runs_as_written(served, actors, document, capsys):
    """Each document's one Python example, against the live engine (its address put in for
    the one it names), with the agent's token as ``TOKEN``."""
    [example] = re.findall(r"```python\n(.*?)```", (ROOT / document).read_text(), re.DOTALL)
    assert '"http://127.0.0.1:8000"' in example
    code = compile(example.replace('"http://127.0.0.1:8000"', "URL"), document, "exec")
    exec(code, {"URL": served, "TOKEN": actors["alice"].token})
    printed = capsys.readouterr().out
    [stored] = Memory.objects.filter(workspace=actors["alice"].agent.workspace)
    assert stored.pinned and stored.text in printed and "## " in printed


def test_the_metadata_filter_is_one_object_for_the_search_and_the_list(served, actors):
    """The same filter object as the REST body: the client sends it as JSON text on the
    list's query string."""
    with MeaningMemory(served, actors["alice"].token) as mm:
        orion = mm.remember("Orion renews in March.", metadata={"customer": "orion", "seats": 120})
        mm.remember("Kestrel renews in May.", metadata={"customer": "kestrel", "seats": 12})
        only = {"customer": "orion", "seats": {"gte": 50}, "or": [{"tier": {"exists": False}}]}
        assert [hit.mem_id for hit in mm.search("renews", metadata=only)] == [orion.mem_id]
        assert [m.mem_id for m in mm.list(metadata=only).results] == [orion.mem_id]
        assert [m.mem_id for m in mm.list_all(metadata={"seats": {"lt": 20}})] != [orion.mem_id]
        with pytest.raises(InvalidInput) as bad:
            mm.list(metadata={"seats": {"gte": True}})
        assert "seats.gte: must be a number or text" in bad.value.errors["metadata"][0]
    with MeaningMemory(served, actors["charlie"].token) as other:
        assert other.list(metadata={"customer": "orion"}).results == []


def test_a_conversation_a_customers_file_and_its_erasure(served, actors):
    """remember_messages, compiled by entity with a metadata filter, and erase_matching (a dry
    run first), sync and async; another workspace's agent touches none of it."""
    chat = [
        {"role": "user", "name": "Priya", "content": "Orion wants 80 seats.", "at": "2026-03-02"},
        {"role": "assistant", "content": "Noted: 80 seats for Orion."},
    ]
    with MeaningMemory(served, actors["alice"].token) as mm:
        stored = mm.remember_messages("orion-call", chat, metadata={"customer": "orion"})
        assert isinstance(stored, BulkResult) and stored.stored == 2
        assert (
            mm.remember_messages("orion-call", chat, metadata={"customer": "orion"}).existing == 2
        )
        kept = mm.remember("Kestrel renews in May.", metadata={"customer": "kestrel"})
        file = mm.compiled(metadata={"customer": "orion"}, group_by="entity", display_mode="off")
        assert "- 2026-03-02 Priya: Orion wants 80 seats." in file.markdown
        assert "Kestrel" not in file.markdown
        with MeaningMemory(served, actors["charlie"].token) as other:
            assert other.erase_matching(metadata={"customer": "orion"}, dry_run=True).count == 0
            with pytest.raises(NotFound):
                other.erase_matching(entity="Priya", reason="not theirs")
        preview = mm.erase_matching(metadata={"customer": "orion"}, dry_run=True)
        assert sorted(preview.erased) == sorted(stored.mem_ids)
        with pytest.raises(InvalidInput) as bad:
            mm.erase_matching(metadata={"customer": "orion"})
        assert "reason" in bad.value.errors

    async def erase():
        async with AsyncMeaningMemory(served, actors["alice"].token) as mm:
            return await mm.erase_matching(metadata={"customer": "orion"}, reason="asked")

    done = asyncio.run(erase())
    assert sorted(done.erased) == sorted(stored.mem_ids)
    assert list(Memory.objects.values_list("mem_id", flat=True)) == [kept.mem_id]
