import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import psutil
import pytest

from memories.embeddings import EmbedderError, LocalEmbedder, OpenAIEmbedder, get_embedder


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
