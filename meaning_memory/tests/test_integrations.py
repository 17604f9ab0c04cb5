"""The framework adapters (``meaning_memory.integrations``, docs/frameworks.md) against a served
engine (real processes, agents made with ``createagent``), from the outside: the LangGraph
store's put, get, search, delete and list_namespaces, sync and async, with replacement that
keeps history, namespaces apart, awkward input and another workspace that sees nothing; the
LangChain retriever's Documents in rank order, ``k`` and the filters; and the page's examples
as written."""

from __future__ import annotations

import asyncio
import re
import time
from datetime import datetime

import pytest
from langchain_core.documents import Document
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from pydantic import ValidationError

from meaning_memory.client import AsyncMeaningMemory, InvalidInput, MeaningMemory
from meaning_memory.integrations.langchain import MeaningMemoryRetriever
from meaning_memory.integrations.langgraph import MeaningMemoryStore
from meaning_memory.tests.served import ROOT, Served, served

pytestmark = pytest.mark.slow

TEA = "Dana drinks green tea every morning."
COFFEE = "Dana switched to black coffee after the move."


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Served:
    # No consolidation run of its own during the tests (docs/frameworks.md says what one does).
    data = tmp_path_factory.mktemp("integrations") / "data"
    running = served(data, MM_CONSOLIDATE_EVERY="0").start()
    try:
        yield running
    finally:
        output = running.stop()
        assert "Traceback" not in output, output


@pytest.fixture(scope="module")
def token(engine) -> str:
    return engine.agent("acme", "graph")


@pytest.fixture(scope="module")
def outsider(engine) -> str:
    """An agent of another workspace."""
    return engine.agent("globex", "outsider")


@pytest.fixture
def mm(engine, token):
    with MeaningMemory(engine.base, token) as client:
        yield client


@pytest.fixture
def store(mm) -> MeaningMemoryStore:
    return MeaningMemoryStore(mm)


def fresh_store(engine: Served, workspace: str, name: str, *scopes: str) -> MeaningMemoryStore:
    """A store of a new agent (nothing written yet), its client left to the process's end."""
    options = [option for scope in scopes for option in ("--scope", scope)]
    token = engine.command(
        "createagent", "--workspace", workspace, "--name", name, *options, "-v0"
    ).strip()
    return MeaningMemoryStore(MeaningMemory(engine.base, token))


def current(mm: MeaningMemory, namespace: tuple[str, ...], key: str, **filters) -> list:
    """The memories behind (namespace, key), read with the REST client."""
    place = {"lg.namespace": ".".join(namespace), "lg.key": key}
    return mm.list(metadata=place, **filters).results


def keys(items) -> list[str]:
    return [item.key for item in items]


# The LangGraph store


def test_put_get_search_and_delete_go_round(store, mm):
    user = ("roundtrip", "user-1")
    value = {"text": TEA, "topic": "food", "n": 3, "tags": ["a", "b"], "nested": {"x": 1.5}}
    store.put(user, "drink", value)
    store.put(user, "team", {"text": "Dana leads the billing team.", "topic": "work"})

    item = store.get(user, "drink")
    assert type(item) is Item and (item.namespace, item.key, item.value) == (user, "drink", value)
    assert item.created_at == item.updated_at and item.created_at.tzinfo is not None
    [memory] = current(mm, user, "drink")
    assert memory.text == TEA and memory.status == "active" and memory.category == "fact"
    assert memory.metadata["lg.prefix.1"] == "roundtrip"
    assert memory.metadata["lg.prefix.2"] == "roundtrip.user-1"
    assert memory.metadata["value.topic"] == "food"

    found = store.search(("roundtrip",), query="What does Dana drink in the morning?")
    assert keys(found)[0] == "drink" and set(keys(found)) == {"drink", "team"}
    assert all(type(hit) is SearchItem and isinstance(hit.score, float) for hit in found)
    assert found[0].value == value and found[0].namespace == user
    listed = store.search(("roundtrip", "user-1"))
    assert keys(listed) == ["team", "drink"]  # newest first, no score without a query
    assert [hit.score for hit in listed] == [None, None]
    assert store.get(user, "nothing") is None and store.get(("roundtrip",), "drink") is None

    store.delete(user, "drink")
    assert store.get(user, "drink") is None
    assert keys(store.search(("roundtrip",), query="What does Dana drink?")) == ["team"]
    assert mm.get(memory.mem_id).status == "forgotten"  # a soft delete: the memory stays
    store.delete(user, "drink")  # nothing there: nothing happens
    assert keys(store.search(("roundtrip",))) == ["team"]


def test_a_put_of_a_key_again_supersedes_its_memory_and_keeps_the_history(store, mm):
    user = ("replace", "user-1")
    store.put(user, "drink", {"text": TEA})
    [old] = current(mm, user, "drink")
    first = store.get(user, "drink")
    store.put(user, "drink", {"text": COFFEE, "since": "2026-03"})

    item = store.get(user, "drink")
    assert item.value == {"text": COFFEE, "since": "2026-03"}
    assert item.created_at == first.created_at < item.updated_at
    [new] = current(mm, user, "drink")
    assert new.mem_id != old.mem_id
    history = mm.get(old.mem_id)
    assert history.status == "superseded" and history.superseded_by == new.mem_id
    assert history.text == TEA
    ended = current(mm, user, "drink", currently_valid=False)
    assert [m.mem_id for m in ended] == [old.mem_id]
    found = store.search(("replace",), query="Does Dana drink green tea?")
    assert [hit.value["text"] for hit in found] == [COFFEE]

    store.put(user, "drink", {"text": "Dana drinks water now."})
    assert store.get(user, "drink").value == {"text": "Dana drinks water now."}
    assert len(current(mm, user, "drink", currently_valid=False)) == 2


def test_namespaces_keep_the_same_key_apart(store):
    spots = [("apart", "a"), ("apart", "b"), ("apart", "a", "deep"), ("apart-a",), ("apart",)]
    for number, namespace in enumerate(spots):
        store.put(namespace, "k", {"text": f"Value {number} of the key.", "n": number})
    for number, namespace in enumerate(spots):
        assert store.get(namespace, "k").value["n"] == number

    under_a = store.search(("apart", "a"), limit=10)
    assert sorted(item.namespace for item in under_a) == [("apart", "a"), ("apart", "a", "deep")]
    assert len(store.search(("apart",), limit=10)) == 4  # not apart-a: labels, not letters
    queried = store.search(("apart", "a"), query="Value of the key", limit=10)
    assert sorted(item.value["n"] for item in queried) == [0, 2]

    store.delete(("apart", "a"), "k")
    assert store.get(("apart", "a"), "k") is None
    assert [store.get(ns, "k").value["n"] for ns in spots[1:]] == [1, 2, 3, 4]


def test_the_filter_and_paging(store):
    shelf = ("filter",)
    for n in range(1, 6):
        colour = "red" if n % 2 else "blue"
        store.put(shelf, f"k{n}", {"text": f"Crate {n} holds {colour} paint.", "n": n, "c": colour})

    def found(**options) -> list[str]:
        return keys(store.search(shelf, limit=10, **options))

    assert found(filter={"c": "red"}) == ["k5", "k3", "k1"]
    assert found(filter={"n": {"$gte": 3}}) == ["k5", "k4", "k3"]
    assert found(filter={"n": {"$gt": 1, "$lt": 4}}) == ["k3", "k2"]
    assert found(filter={"n": {"$in": [1, 4]}, "c": {"$ne": "red"}}) == ["k4"]
    assert found(filter={"n": {"$eq": 2}, "c": "blue"}) == ["k2"]
    assert found(filter={"n": "2"}) == []  # text is not a number, as the engine compares
    assert set(found(filter={"c": "red"}, query="red paint")) == {"k1", "k3", "k5"}
    assert keys(store.search(shelf, limit=2)) == ["k5", "k4"]
    assert keys(store.search(shelf, limit=2, offset=2)) == ["k3", "k2"]
    assert keys(store.search(shelf, limit=2, offset=4)) == ["k1"]
    assert store.search(shelf, limit=0) == []
    everything = keys(store.search(shelf, query="paint", limit=5))
    assert keys(store.search(shelf, query="paint", limit=2, offset=3)) == everything[3:]
    with pytest.raises(ValueError, match=r"filter\.n: '\$regex' is not an operator"):
        store.search(shelf, filter={"n": {"$regex": "1"}})
    with pytest.raises(ValueError, match=r"filter\.tags: compares a field's plain value"):
        store.search(shelf, filter={"tags": ["a"]})


def test_list_namespaces_answers_as_langgraphs_own_store(engine):
    """The same puts in LangGraph's in-memory store and in the engine: the same namespaces for
    every kind of question."""
    ours, theirs = fresh_store(engine, "spaces", "lister"), InMemoryStore()
    spots = [
        ("users", "u1", "prefs"),
        ("users", "u1", "notes"),
        ("users", "u2", "prefs"),
        ("users", "u2"),
        ("docs", "v1"),
        ("docs", "drafts", "v1"),
        ("teams",),
    ]
    for namespace in spots:
        for store in (ours, theirs):
            store.put(namespace, "k1", {"text": f"Something kept in {'/'.join(namespace)}."})
            store.put(namespace, "k2", {"text": "A second thing."})
    questions = [
        {},
        {"prefix": ("users",)},
        {"prefix": ("users", "u1")},
        {"suffix": ("prefs",)},
        {"suffix": ("v1",), "prefix": ("docs",)},
        {"prefix": ("users", "*", "prefs")},
        {"suffix": ("*", "v1")},
        {"max_depth": 1},
        {"prefix": ("users",), "max_depth": 2},
        {"limit": 2, "offset": 1},
        {"limit": 3, "offset": 6},
        {"prefix": ("nothing",)},
        {"prefix": ("users", "u1", "prefs", "deeper")},
    ]
    for question in questions:
        assert ours.list_namespaces(**question) == theirs.list_namespaces(**question), question
    assert ours.list_namespaces(prefix=("users",), max_depth=2) == [
        ("users", "u1"),
        ("users", "u2"),
    ]
    ours.delete(("teams",), "k1")
    assert ("teams",) in ours.list_namespaces()  # k2 is still there
    ours.delete(("teams",), "k2")
    assert ("teams",) not in ours.list_namespaces()


def test_a_batch_reads_first_then_puts_the_last_value_of_each_key(store, mm):
    shelf = ("batch", "one")
    store.put(shelf, "kept", {"text": "Kept before the batch."})
    results = store.batch(
        [
            PutOp(shelf, "new", {"text": "First value."}),
            GetOp(shelf, "new"),
            GetOp(shelf, "kept"),
            SearchOp(("batch",), limit=5),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("batch",)),)),
            PutOp(shelf, "new", {"text": "Last value."}),
            PutOp(shelf, "kept", None),
        ]
    )
    assert results[0] is None and results[1] is None  # the batch's reads saw no put of it
    assert results[2].value == {"text": "Kept before the batch."}
    assert keys(results[3]) == ["kept"] and results[4] == [shelf]
    assert results[5] is None and results[6] is None
    assert store.get(shelf, "new").value == {"text": "Last value."}
    assert store.get(shelf, "kept") is None
    assert len(current(mm, shelf, "new", currently_valid=False)) == 0  # one memory, never two


def test_awkward_input(store, mm):
    labels = ("ユーザー", "Émile 🙂", "with space", "a/b")
    awkward_keys = ["  spaced key\t", "ключ", "🙂", "a.b/c", ""]
    for key in awkward_keys:
        store.put(labels, key, {"text": f"Ünïcode for {key!r} ✓", "emoji": "🙂"})
    for key in awkward_keys:
        assert store.get(labels, key).value == {"text": f"Ünïcode for {key!r} ✓", "emoji": "🙂"}
    assert store.get(labels, "spaced key") is None  # white space is part of a key
    assert sorted(keys(store.search(labels[:2], limit=10))) == sorted(awkward_keys)
    assert labels in store.list_namespaces(prefix=labels[:1])

    big = {"text": "word " * 6_000, "more": "x" * 20_000}  # 50,000 characters
    store.put(("awkward",), "big", big)
    assert store.get(("awkward",), "big").value == big  # whole, though the text is cut
    [memory] = current(mm, ("awkward",), "big")
    assert len(memory.text) <= 10_000 and memory.text.startswith("word word")
    with pytest.raises(ValueError, match=r"value: must be at most 65536 bytes as JSON"):
        store.put(("awkward",), "huge", {"text": "y" * 70_000})
    store.put(("awkward",), "plain", {"a": 1, "b": [True, None]})
    assert current(mm, ("awkward",), "plain")[0].text == '{"a": 1, "b": [true, null]}'
    fields = MeaningMemoryStore(mm, fields=["summary", "tags[*]"])
    fields.put(("awkward",), "fields", {"summary": "Quarterly review.", "tags": ["q3", "ops"]})
    assert current(mm, ("awkward",), "fields")[0].text == "Quarterly review.\nq3\nops"
    store.put(("awkward",), "index", {"title": "Title", "body": "Body."}, index=["body"])
    assert current(mm, ("awkward",), "index")[0].text == "Body."

    for bad in [("a.b",), ("",), ("ok", "x\x00y")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"text": "no"})
        with pytest.raises(InvalidNamespaceError):  # ops given to batch are checked too
            store.batch([GetOp(bad, "k")])
    for bad in [(), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.batch([PutOp(bad, "k", {"text": "no"})])
    with pytest.raises(ValueError, match=r"ops\[0\]\.value: must be a dict"):
        store.batch([PutOp(("awkward",), "k", ["not", "a", "dict"])])
    with pytest.raises(NotImplementedError):
        store.put(("awkward",), "k", {"text": "soon gone"}, ttl=5)
    with pytest.raises(InvalidInput) as refused:  # the engine's rule, named by its field
        store.put(("awkward",), "nul", {"text": "a\x00b"})
    assert "metadata" in refused.value.errors or "text" in refused.value.errors
    assert store.get(("awkward",), "nul") is None


def test_another_workspace_sees_nothing_and_a_scope_is_shared(engine, store, outsider):
    store.put(("secret", "u1"), "plan", {"text": "Acme plans to open an office in Lyon."})
    with MeaningMemory(engine.base, outsider) as theirs:
        other = MeaningMemoryStore(theirs)
        assert other.get(("secret", "u1"), "plan") is None
        assert other.search(("secret",), query="Where will Acme open an office?") == []
        assert other.search(("secret",)) == [] and other.list_namespaces() == []
        other.delete(("secret", "u1"), "plan")  # finds nothing to forget
        other.put(("secret", "u1"), "plan", {"text": "Globex's own plan."})
        assert other.get(("secret", "u1"), "plan").value == {"text": "Globex's own plan."}
    assert store.get(("secret", "u1"), "plan").value["text"].startswith("Acme plans")

    writer = fresh_store(engine, "shared", "writer", "team:graph")
    member = fresh_store(engine, "shared", "member", "team:graph")
    stranger = fresh_store(engine, "shared", "stranger")
    writer.put(("private",), "k", {"text": "The writer's own note."})
    shared = MeaningMemoryStore(writer.client, scope="team:graph")
    shared.put(("team",), "k", {"text": "A note for the whole team."})
    assert member.get(("team",), "k").value == {"text": "A note for the whole team."}
    assert member.get(("private",), "k") is None and member.list_namespaces() == [("team",)]
    assert stranger.get(("team",), "k") is None and stranger.list_namespaces() == []
    # Replaced by the member, the item stays in the team's scope for the writer.
    member.put(("team",), "k", {"text": "The team's note, replaced."})
    assert writer.get(("team",), "k").value == {"text": "The team's note, replaced."}


def test_consolidation_keeps_two_items_that_say_the_same_apart(engine):
    """Consolidation keeps apart what metadata keep apart (docs/frameworks.md): two items of
    one scope with the same text, in two namespaces, stay two items after dedupe and
    supersede."""
    store = fresh_store(engine, "consolidated", "keeper")
    store.put(("memories", "u1"), "drink", {"text": "Likes green tea."})
    store.put(("memories", "u2"), "drink", {"text": "Likes green tea."})
    store.put(("memories", "u3"), "drink", {"text": "Likes black coffee with oat milk."})
    run = store.client.consolidate(phases=["dedupe", "supersede"])
    deadline = time.monotonic() + 120
    while run.status in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
        run = store.client.consolidation_run(run.run_id)
    assert run.status == "done", run
    for user in ("u1", "u2"):
        assert store.get(("memories", user), "drink").value == {"text": "Likes green tea."}
    assert store.get(("memories", "u3"), "drink") is not None


def test_the_async_methods(engine, token):
    async def work():
        async with AsyncMeaningMemory(engine.base, token) as client:
            store = MeaningMemoryStore(async_client=client)
            shelf = ("async", "u1")
            await store.aput(shelf, "drink", {"text": TEA})
            await store.aput(shelf, "drink", {"text": COFFEE})
            await store.aput(("async", "u2"), "drink", {"text": TEA})
            got = await store.aget(shelf, "drink")
            found = await store.asearch(("async",), query="What does Dana drink now?")
            listed = await store.asearch(("async", "u1"))
            spaces = await store.alist_namespaces(prefix=("async",))
            await store.adelete(shelf, "drink")
            gone = await store.aget(shelf, "drink")
            batch = await store.abatch([GetOp(("async", "u2"), "drink"), GetOp(shelf, "drink")])
            with pytest.raises(TypeError, match=r"no client"):
                store.get(shelf, "drink")
            return got, found, listed, spaces, gone, batch

    got, found, listed, spaces, gone, batch = asyncio.run(work())
    assert got.value == {"text": COFFEE} and got.created_at < got.updated_at
    assert sorted((item.namespace[1], item.value["text"]) for item in found) == [
        ("u1", COFFEE),
        ("u2", TEA),
    ]
    assert [item.value["text"] for item in listed] == [COFFEE]
    assert spaces == [("async", "u1"), ("async", "u2")] and gone is None
    assert batch[0].value == {"text": TEA} and batch[1] is None


def test_a_store_needs_a_client(mm):
    with pytest.raises(TypeError, match=r"client, async_client"):
        MeaningMemoryStore()
    with pytest.raises(TypeError, match=r"no async_client"):
        asyncio.run(MeaningMemoryStore(mm).aget(("x",), "k"))
    with pytest.raises(ValueError, match=r"max_text_chars"):
        MeaningMemoryStore(mm, max_text_chars=0)


# The LangChain retriever

QUESTION = "When does Zephyr renew its support contract?"
SEEDS = [
    ("Zephyr Logistics renews its support contract every March.", "commitment", "zephyr"),
    ("Kestrel pays its invoices within 30 days.", "fact", "kestrel"),
    ("Orion asked for a discount on 120 seats.", "fact", "orion"),
    ("Orion's renewal call is set for the first week of May.", "event", "orion"),
    ("The support team answers tickets within four hours.", "procedure", "internal"),
]


@pytest.fixture(scope="module")
def reader(engine) -> dict:
    """An agent with five memories, and their ids by customer."""
    token = engine.agent("retrieval", "reader")
    ids: dict[str, list[str]] = {}
    with MeaningMemory(engine.base, token) as client:
        for text, category, customer in SEEDS:
            stored = client.remember(
                text, category=category, session=f"call-{customer}", metadata={"customer": customer}
            )
            ids.setdefault(customer, []).append(stored.mem_id)
    return {"token": token, "ids": ids}


@pytest.fixture
def retriever(engine, reader) -> MeaningMemoryRetriever:
    return MeaningMemoryRetriever(base_url=engine.base, token=reader["token"], k=3)


def test_the_retriever_answers_documents_in_the_engines_rank_order(engine, reader, retriever):
    docs = retriever.invoke(QUESTION)
    assert len(docs) == 3 and all(isinstance(doc, Document) for doc in docs)
    with MeaningMemory(engine.base, reader["token"]) as client:
        hits = list(client.search(QUESTION, limit=3))
    assert [doc.metadata["mem_id"] for doc in docs] == [hit.mem_id for hit in hits]
    assert [doc.metadata["rank"] for doc in docs] == [1, 2, 3]
    # The same scores, but for the seconds of age between the two searches.
    scores = [hit.explanation.score for hit in hits]
    assert [doc.metadata["score"] for doc in docs] == pytest.approx(scores, rel=1e-6)
    top = docs[0]
    assert top.page_content == SEEDS[0][0] and top.id == reader["ids"]["zephyr"][0]
    assert top.metadata["category"] == "commitment" and top.metadata["session"] == "call-zephyr"
    assert top.metadata["metadata"] == {"customer": "zephyr"}
    assert datetime.fromisoformat(top.metadata["created_at"]).tzinfo is not None
    again = asyncio.run(retriever.ainvoke(QUESTION))
    assert [(doc.page_content, doc.id) for doc in again] == [(d.page_content, d.id) for d in docs]


def test_the_retriever_honours_k_in_its_fields_and_in_a_call(engine, reader, retriever):
    """What langchain-tests' RetrieversIntegrationTests checks, here (that package's pytest
    plugins clash with the project's tests)."""
    one = MeaningMemoryRetriever(base_url=engine.base, token=reader["token"], k=1)
    assert len(one.invoke(QUESTION)) == 1
    assert len(retriever.invoke(QUESTION, None, k=1)) == 1
    assert len(retriever.invoke(QUESTION, k=5)) == 5
    assert len(asyncio.run(retriever.ainvoke(QUESTION, k=2))) == 2
    with pytest.raises(ValidationError):
        MeaningMemoryRetriever(base_url=engine.base, token=reader["token"], k=0)
    with pytest.raises(ValueError, match=r"k: must be a whole number of at least 1"):
        retriever.invoke(QUESTION, k=0)
    with pytest.raises(TypeError, match=r"limit: not an argument of MeaningMemoryRetriever"):
        retriever.invoke(QUESTION, limit=2)
    with pytest.raises(ValueError, match=r"base_url, token"):
        MeaningMemoryRetriever(k=1).invoke(QUESTION)


def test_the_retrievers_filters(engine, reader, retriever):
    def ids(docs) -> list[str]:
        return [doc.metadata["mem_id"] for doc in docs]

    orion = reader["ids"]["orion"]
    assert sorted(
        ids(retriever.invoke("renewal", metadata_filter={"customer": "orion"}))
    ) == sorted(orion)
    assert ids(retriever.invoke("renewal", category="event")) == [orion[1]]
    assert ids(retriever.invoke("renewal", session="call-kestrel")) == reader["ids"]["kestrel"]
    filtered = MeaningMemoryRetriever(
        base_url=engine.base, token=reader["token"], metadata_filter={"customer": "internal"}
    )
    assert ids(filtered.invoke(QUESTION)) == reader["ids"]["internal"]
    assert (
        ids(filtered.invoke(QUESTION, metadata_filter={"customer": "kestrel"}))
        == (reader["ids"]["kestrel"])
    )
    assert retriever.invoke(QUESTION, search_kwargs={"source": "someone else"}) == []
    assert ids(retriever.invoke(QUESTION, source="reader")) == ids(retriever.invoke(QUESTION))
    assert retriever.invoke(QUESTION, metadata_filter={"customer": "nobody"}) == []
    with pytest.raises(InvalidInput) as bad:
        retriever.invoke(QUESTION, metadata_filter={"seats": {"near": 5}})
    assert bad.value.errors["metadata"][0].startswith("seats.near: is not an operator")
    with MeaningMemory(engine.base, reader["token"]) as client:
        own = MeaningMemoryRetriever(client=client, k=2, category="fact")
        assert len(own.invoke(QUESTION)) == 2


def test_another_workspaces_retriever_finds_nothing(engine, outsider):
    theirs = MeaningMemoryRetriever(base_url=engine.base, token=outsider, k=5)
    assert all("Zephyr" not in doc.page_content for doc in theirs.invoke(QUESTION))
    assert theirs.invoke(QUESTION, metadata_filter={"customer": "zephyr"}) == []
    assert asyncio.run(theirs.ainvoke(QUESTION, category="commitment")) == []


# docs/frameworks.md


def test_the_pages_examples_run_as_written(engine, capsys):
    """Each Python example of docs/frameworks.md against the served engine (its address put in
    for the one it names), with a new agent's token as ``TOKEN``."""
    page = (ROOT / "docs" / "frameworks.md").read_text()
    examples = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert len(examples) == 3
    printed = []
    for number, example in enumerate(examples, 1):
        assert '"http://127.0.0.1:8000"' in example
        code = compile(example.replace('"http://127.0.0.1:8000"', "URL"), "frameworks.md", "exec")
        token = engine.agent("docs", f"example-{number}")
        exec(code, {"URL": engine.base, "TOKEN": token})
        printed.append(capsys.readouterr().out.splitlines())

    store, async_store, retriever = printed
    assert store[0] == "Dana switched to black coffee."
    assert re.fullmatch(
        r"\('memories', 'user-42'\) drink Dana switched to black coffee\. [\d.]+", store[1]
    )
    assert store[2:] == ["[('memories', 'user-42')]", "None"]  # one line per hit: food only
    assert async_store == ["Orion renews in March. True", "['renewal']"]
    assert re.fullmatch(
        r"1 \S+ Zephyr Logistics renews its support contract every March\.", retriever[0]
    )
    assert len(retriever) == 3 and retriever[2] == "Orion asked for a discount on 120 seats."


def test_a_users_namespace_is_erased_by_its_prefix(engine):
    """docs/frameworks.md: ``erase_matching`` with the namespace prefix's metadata key erases a
    user's items for good (a dry run first); another user's stay."""
    store = fresh_store(engine, "erasing", "keeper")
    for key in ("drink", "team"):
        store.put(("memories", "u-gone"), key, {"text": f"The leaving user's {key}."})
    store.put(("memories", "u-stays"), "drink", {"text": "The staying user's drink."})
    chosen = {"lg.prefix.2": "memories.u-gone"}
    preview = store.client.erase_matching(metadata=chosen, dry_run=True)
    assert preview.count == 2
    assert store.get(("memories", "u-gone"), "drink") is not None
    done = store.client.erase_matching(metadata=chosen, reason="the user asked")
    assert sorted(done.erased) == sorted(preview.erased)
    assert store.get(("memories", "u-gone"), "drink") is None
    assert store.list_namespaces(prefix=("memories",)) == [("memories", "u-stays")]
