"""Small embeddings of concurrent requests share one run of the model (``Coalescer``).

A search's query and a single write's texts are one or two short texts: a run of the local
model costs about 4 ms of CPU for one of them and under 3 ms each for eight together (the
run's fixed cost is shared). A request that finds a place free at the model runs at once,
alone: a lone request waits for nobody and pays one lock. One that finds every place taken
waits in line; whichever waiting request gets the next place runs the requests at the head of
the line with its own, as many as one run holds (``LOCAL_BATCH_SIZE`` texts, ``LOCAL_RUN_TOKENS``
padded tokens), and hands each its vectors. The texts a run holds and how long each waited
are counted (``mm_embed_shared_texts``, ``mm_embed_wait_seconds``).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memories.metrics import EMBED_SHARED_TEXTS, EMBED_WAIT_SECONDS


@dataclass
class _Request:
    encodings: list[Any]
    arrived: float = field(default_factory=time.monotonic)
    vectors: np.ndarray | None = None
    error: BaseException | None = None
    done: bool = False


class Coalescer:
    """At most ``capacity`` runs at once through ``run`` (encodings to vectors, in order);
    the requests that wait share the next runs (the module's docstring). ``fits(widths)``
    says whether texts of those token counts may run together."""

    def __init__(
        self,
        run: Callable[[list[Any]], np.ndarray],
        capacity: int,
        fits: Callable[[list[int]], bool],
    ) -> None:
        self.run, self.capacity, self.fits = run, capacity, fits
        self._changed = threading.Condition()
        self._running = 0
        self._line: deque[_Request] = deque()

    def __call__(self, encodings: list[Any]) -> np.ndarray:
        request = _Request(encodings)
        with self._changed:
            alone = self._running < self.capacity and not self._line
            if alone:
                self._running += 1
            else:
                self._line.append(request)
        if alone:
            EMBED_WAIT_SECONDS.observe(0.0)
            EMBED_SHARED_TEXTS.observe(len(encodings))
            try:
                return self.run(encodings)
            finally:
                self._leave()
        while True:
            with self._changed:
                while not request.done and (self._running >= self.capacity or not self._line):
                    self._changed.wait()
                if request.done:
                    break
                batch = self._take()
                self._running += 1
            self._lead(batch)
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def _take(self) -> list[_Request]:
        """The head of the line, as many requests as one run holds (at least one)."""
        batch = [self._line.popleft()]
        widths = [len(e.ids) for e in batch[0].encodings]
        while self._line:
            more = widths + [len(e.ids) for e in self._line[0].encodings]
            if not self.fits(more):
                break
            widths = more
            batch.append(self._line.popleft())
        return batch

    def _lead(self, batch: list[_Request]) -> None:
        now = time.monotonic()
        for request in batch:
            EMBED_WAIT_SECONDS.observe(now - request.arrived)
        encodings = [e for request in batch for e in request.encodings]
        EMBED_SHARED_TEXTS.observe(len(encodings))
        try:
            vectors = self.run(encodings)
        except BaseException as error:  # each request raises it in its own thread
            for request in batch:
                request.error = error
        else:
            start = 0
            for request in batch:
                request.vectors = vectors[start : start + len(request.encodings)]
                start += len(request.encodings)
        finally:
            for request in batch:
                request.done = True
            self._leave()

    def _leave(self) -> None:
        with self._changed:
            self._running -= 1
            self._changed.notify_all()
