import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import psutil
import pytest

from memories.embeddings import (
    LOCAL_BATCH_SIZE,
    LOCAL_RUN_TOKENS,
    EmbedderError,
    LocalEmbedder,
    OpenAIEmbedder,
    RunGate,
    get_embedder,
    runs,
)


def test_local_embedder_gives_unit_vectors_that_know_meaning():
    embedder = get_embedder()
    assert isinstance(embedder, LocalEmbedder)
    vectors = embedder.embed(
        [
            "When does Zephyr renew its contract?",
            "Zephyr Logistics renews its support contract every March.",
            "My grandmother grows tomatoes in her garden.",
        ]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    related, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert related > 0.7 and unrelated < 0.3


def test_local_embedder_batches_give_the_same_vectors():
    embedder = get_embedder()
    texts = [f"sentence number {i} about topic {i % 7}" for i in range(70)]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts[:3]])
    assert np.allclose(together[:3], alone, atol=1e-4)


#: Texts an embedder must take as they come.
AWKWARD_TEXTS = (
    "",
    "   ",
    "Zürich naïve café, 東京 🙂 and a\ttab",
    " ".join(f"word{i}" for i in range(400)),  # past the model's 256 tokens
    "x" * 10_000,
)


def test_a_text_s_vector_does_not_depend_on_the_run_it_is_in():
    """Runs are cut by count and by padded size; a text's vector is the same alone, beside
    short texts, or beside long ones (awkward ones too)."""
    embedder = get_embedder()
    texts = [
        *AWKWARD_TEXTS,
        "short note",
        *[f"line {i} about the harbour kiln order and the studio" for i in range(20)],
        " ".join(f"long{i}" for i in range(120)),
    ]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([text]) for text in texts])
    assert np.array_equal(together, alone)
    assert together.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_runs_are_cut_by_count_and_by_padded_size():
    assert list(runs([])) == []
    assert [len(run) for run in runs([10] * 40)] == [LOCAL_BATCH_SIZE] * 2 + [8]
    # A long text: with the short ones before it the run would pass the budget.
    long = LOCAL_RUN_TOKENS // 2
    assert list(runs([10, 10, long, long, 10])) == [[0, 1], [2, 3], [4]]
    assert list(runs([LOCAL_RUN_TOKENS * 2, 5])) == [[0], [1]]  # alone, however long
    for run in runs([3, 250, 7, 256, 256, 256, 12, 40] * 5):
        assert run == sorted(run)


def gate_order(gate, arrivals):
    """The order in which runs of ``arrivals`` (name, tokens) get the gate, each asking
    while a first run holds it; ``clock`` moves forward between arrivals."""
    held, order, threads = threading.Event(), [], []
    first_in = threading.Event()

    def first():
        with gate.turn(1):
            first_in.set()
            held.wait(10)

    def later(name, tokens):
        with gate.turn(tokens):
            order.append(name)

    threads.append(threading.Thread(target=first))
    threads[0].start()
    assert first_in.wait(10)
    for name, tokens in arrivals:
        thread = threading.Thread(target=later, args=(name, tokens))
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 10
        while len(gate._waiting) < len(threads) - 1 and time.monotonic() < deadline:  # it asked
            threading.Event().wait(0.001)
        gate.now += 1.0
    held.set()
    for thread in threads:
        thread.join(10)
    return order


class FakeClock:
    def __init__(self, gate):
        gate.now = 0.0
        self.gate = gate

    def __call__(self):
        return self.gate.now


def test_the_model_goes_to_a_short_run_before_a_long_one_that_waits():
    """A search's query that comes while a bulk write's long run waits goes first ..."""
    gate = RunGate(1, seconds_per_token=0.01)
    gate.clock = FakeClock(gate)
    # bulk: asks at 0, estimated 5 s; query: asks at 1 s, estimated 0.1 s.
    assert gate_order(gate, [("bulk", 500), ("query", 10)]) == ["query", "bulk"]


def test_the_model_never_passes_over_a_long_run_for_long():
    """... but not for ever: a run that asked before another's estimated end goes first."""
    gate = RunGate(1, seconds_per_token=0.01)
    gate.clock = FakeClock(gate)
    # bulk at 0 (ends 2 s), then queries at 1, 2, 3 s: the last comes after bulk's deadline.
    order = gate_order(gate, [("bulk", 200), ("q1", 10), ("q2", 10), ("q3", 10)])
    assert order == ["q1", "bulk", "q2", "q3"]


def test_a_query_does_not_wait_behind_one_long_run_of_another_request():
    """The process's embedder lets a second run in while one holds the model (two CPUs or
    more); a third waits."""
    assert get_embedder().gate.capacity >= 2
    gate = RunGate(2)
    long_run, release = threading.Event(), threading.Event()
    entered = []

    def run(name):
        with gate.turn(512):
            entered.append(name)
            long_run.set()
            release.wait(10)

    first = threading.Thread(target=run, args=("long",))
    first.start()
    assert long_run.wait(10)
    with gate.turn(8):  # in at once, beside the long run
        entered.append("query")
    others = [threading.Thread(target=run, args=(name,)) for name in ("b", "c")]
    for thread in others:
        thread.start()
    deadline = time.monotonic() + 10
    while len(entered) < 3 and time.monotonic() < deadline:
        threading.Event().wait(0.001)
    threading.Event().wait(0.05)
    assert entered[:2] == ["long", "query"] and len(entered) == 3  # one of b, c waits
    release.set()
    for thread in [first, *others]:
        thread.join(10)
    assert sorted(entered[2:]) == ["b", "c"]


def test_embedding_from_many_threads_leaves_the_process_about_as_large():
    """glibc keeps what threads free in their own arenas: without a trim after each bulk
    embedding (``memories.heap``), a process embedding from 8 threads kept growing."""
    from concurrent.futures import ThreadPoolExecutor

    process = psutil.Process()
    embedder = LocalEmbedder()

    def bulk(n: int) -> None:  # 16 texts (one batch) of 60 to 240 words
        embedder.embed(
            [
                " ".join(f"w{(n * 31 + i * 7 + j) % 997}" for j in range(60 + 12 * i))
                for i in range(16)
            ]
        )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(bulk, range(8)))
        before = process.memory_info().rss
        list(pool.map(bulk, range(8, 32)))
    assert process.memory_info().rss - before < 60 * 2**20


def test_local_embedder_gives_its_working_memory_back():
    """Batches of many shapes (texts differ in length) leave the process about as large as
    before them: onnxruntime plans no memory block per shape and shrinks its arena after each
    run. With its defaults the same batches keep about 300 MB."""
    process = psutil.Process()
    embedder = LocalEmbedder()  # its own session and arena, not the cached embedder's
    embedder.embed(["a first run, which allocates what every run needs"])
    before = process.memory_info().rss
    for count, words in [(16, 250), (5, 40), (16, 120), (9, 200), (16, 60), (3, 250)]:
        embedder.embed([" ".join(["remember"] * words)] * count)
    assert process.memory_info().rss - before < 100 * 2**20


class FakeEmbeddingsHandler(BaseHTTPRequestHandler):
    """Speaks the OpenAI embeddings protocol, with vectors derived from the text."""

    requests: list[dict] = []
    dimensions = 384

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        data = []
        for index, text in reversed(list(enumerate(body["input"]))):
            rng = np.random.default_rng(abs(hash(text)) % 2**32)
            data.append(
                {
                    "object": "embedding",
                    "index": index,
                    "embedding": rng.normal(size=self.dimensions).tolist(),
                }
            )
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_endpoint():
    FakeEmbeddingsHandler.requests = []
    server = HTTPServer(("127.0.0.1", 0), FakeEmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    FakeEmbeddingsHandler.dimensions = 384


def test_openai_embedder_speaks_the_protocol(fake_endpoint):
    embedder = OpenAIEmbedder(fake_endpoint, "text-embedding-3-small", "sk-test", 5.0)
    vectors = embedder.embed(["alpha", "beta"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    request = FakeEmbeddingsHandler.requests[0]
    assert request["path"] == "/v1/embeddings"
    assert request["auth"] == "Bearer sk-test"
    assert request["body"]["input"] == ["alpha", "beta"]
    assert request["body"]["dimensions"] == 384
    again = embedder.embed(["beta"])  # results come back in input order despite reordering
    assert np.allclose(again[0], vectors[1], atol=1e-6)


def test_openai_embedder_refuses_the_wrong_dimension(fake_endpoint):
    FakeEmbeddingsHandler.dimensions = 1536
    with pytest.raises(EmbedderError, match="expected"):
        OpenAIEmbedder(fake_endpoint, "big-model", "", 5.0).embed(["alpha"])


def test_remember_through_a_remote_embedder(alice, settings, fake_endpoint):
    settings.MM_EMBEDDER = "openai"
    settings.MM_EMBEDDER_URL = fake_endpoint
    settings.MM_EMBEDDER_MODEL = "remote-model"
    response = alice.client.post("/api/v1/memories", {"text": "Remote vectors."}, format="json")
    assert response.status_code == 201
    assert response.json()["embedding_model"] == "remote-model"


def test_unreachable_remote_embedder_is_a_503_and_writes_nothing(alice, settings):
    from memories.models import Memory

    settings.MM_EMBEDDER = "openai"
    settings.MM_EMBEDDER_URL = "http://127.0.0.1:9/v1"
    response = alice.client.post("/api/v1/memories", {"text": "Lost?"}, format="json")
    assert response.status_code == 503
    assert "embedder" in response.json()["detail"]
    assert Memory.objects.count() == 0


@pytest.fixture
def kept(monkeypatch):
    """An empty cache of query vectors for the test, counting what the model runs."""
    from memories import embeddings

    cache = embeddings.VectorCache(size=embeddings.QUERY_CACHE_SIZE)
    monkeypatch.setattr(embeddings, "query_vectors", cache)
    embedder = get_embedder()
    runs_seen = []
    run = embedder._run
    monkeypatch.setattr(embedder, "_run", lambda encodings: runs_seen.append(1) or run(encodings))
    return cache, embedder, runs_seen


def test_a_query_s_vector_is_kept_and_is_what_embedding_it_gives(kept):
    _, embedder, runs_seen = kept
    asked = ["When does Zephyr renew its contract?", *AWKWARD_TEXTS]
    for text in asked:
        vector = embedder.embed_query(text)
        assert np.array_equal(vector, embedder.embed([text])[0])  # bit for bit
        with pytest.raises(ValueError):
            vector[0] = 0.0  # a kept vector is read-only
    runs_seen.clear()
    again = [embedder.embed_query(text) for text in asked]
    assert runs_seen == []  # every one kept
    assert all(np.array_equal(a, embedder.embed([t])[0]) for a, t in zip(again, asked, strict=True))


def test_a_query_is_kept_by_what_the_model_reads_of_it(kept):
    """The same words in another case or spacing, or a text past the 256th token, give the
    same tokens and so the same vector: one model run; another text is another run."""
    _, embedder, runs_seen = kept
    first = embedder.embed_query("When does Zephyr renew its contract?")
    same = embedder.embed_query("  when   does ZEPHYR renew\tits contract?\n")
    assert same is first and len(runs_seen) == 1
    assert np.array_equal(first, embedder.embed(["  when   does ZEPHYR renew\tits contract?\n"])[0])
    runs_seen.clear()
    long = " ".join(f"word{i}" for i in range(400))
    embedder.embed_query(long)
    embedder.embed_query(long + " and more words past the end")
    assert len(runs_seen) == 1
    other = embedder.embed_query("When does Zephyr renew its lease?")
    assert len(runs_seen) == 2 and not np.array_equal(other, first)


def test_the_cache_keeps_the_most_recently_asked_queries_only(kept, monkeypatch):
    from memories import embeddings

    monkeypatch.setattr(embeddings, "query_vectors", embeddings.VectorCache(size=3))
    _, embedder, runs_seen = kept
    for text in ["one", "two", "three", "one", "four"]:  # "two" is the oldest when "four" comes
        embedder.embed_query(text)
    assert len(runs_seen) == 4
    embedder.embed_query("one")
    embedder.embed_query("three")
    assert len(runs_seen) == 4
    embedder.embed_query("two")
    assert len(runs_seen) == 5
    assert len(embeddings.query_vectors._vectors) == 3


def test_no_cache_at_size_zero(kept, monkeypatch):
    from memories import embeddings

    monkeypatch.setattr(embeddings, "query_vectors", embeddings.VectorCache(size=0))
    _, embedder, runs_seen = kept
    embedder.embed_query("one")
    embedder.embed_query("one")
    assert len(runs_seen) == 2


def test_threads_asking_the_same_query_get_the_same_vector(kept):
    _, embedder, _ = kept
    texts = [f"what did agent {i % 4} decide about the harbour?" for i in range(40)]
    got: list = [None] * len(texts)

    def ask(i):
        got[i] = embedder.embed_query(texts[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for text, vector in zip(texts, got, strict=True):
        assert np.array_equal(vector, embedder.embed([text])[0])


def test_a_search_asked_again_embeds_nothing_and_finds_the_same(alice, kept):
    _, _, runs_seen = kept
    for text in ["Zephyr renews its contract every March.", "The kiln fires on Tuesdays."]:
        response = alice.client.post("/api/v1/memories", {"text": text}, format="json")
        assert response.status_code == 201
    first = alice.client.post(
        "/api/v1/search", {"query": "When does Zephyr renew?"}, format="json"
    ).json()
    runs_seen.clear()
    again = alice.client.post(
        "/api/v1/search", {"query": "  when does ZEPHYR renew? "}, format="json"
    ).json()
    assert runs_seen == []
    assert [h["mem_id"] for h in again["results"]] == [h["mem_id"] for h in first["results"]]
    assert again["results"][0]["text"] == "Zephyr renews its contract every March."


def test_a_remote_query_is_kept_per_endpoint_and_model(fake_endpoint, kept):
    first = OpenAIEmbedder(fake_endpoint, "remote-model", "", 5.0)
    vector = first.embed_query("alpha")
    assert np.array_equal(first.embed_query("alpha"), vector)
    assert len(FakeEmbeddingsHandler.requests) == 1
    OpenAIEmbedder(fake_endpoint, "another-model", "", 5.0).embed_query("alpha")
    assert len(FakeEmbeddingsHandler.requests) == 2
    OpenAIEmbedder(fake_endpoint + "/", "remote-model", "", 5.0).embed_query("alpha")  # the same
    assert len(FakeEmbeddingsHandler.requests) == 2
    first.embed_query("Alpha")  # a remote model's tokens are not known here: the text decides
    assert len(FakeEmbeddingsHandler.requests) == 3
