"""Embeddings of concurrent requests share a run of the model when it is busy
(``memories.coalescing``): a lone request runs at once and alone; requests that wait share the
next run, each gets its own vectors back (the same as alone), and an error reaches each of
them without stopping the next ones."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest

from memories.coalescing import Coalescer
from memories.embeddings import fits, get_embedder


def encodings(*names: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(ids=[ord(c) for c in name], name=name) for name in names]


class Model:
    """Runs that block until let go, recording what each held."""

    def __init__(self) -> None:
        self.runs: list[list[str]] = []
        self.go = threading.Event()
        self.started = threading.Event()
        self.fail_on: str | None = None

    def __call__(self, batch) -> np.ndarray:
        self.runs.append([e.name for e in batch])
        self.started.set()
        self.go.wait(10)
        if self.fail_on and any(e.name == self.fail_on for e in batch):
            raise RuntimeError("the model broke")
        return np.array([[float(len(e.name))] for e in batch])


def test_a_lone_request_runs_at_once_and_alone():
    model = Model()
    model.go.set()
    coalescer = Coalescer(model, capacity=1, fits=fits)
    assert coalescer(encodings("alpha", "be")).tolist() == [[5.0], [2.0]]
    assert model.runs == [["alpha", "be"]]


def wait_until_waiting(coalescer: Coalescer, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(coalescer._line) < count and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(coalescer._line) == count


def test_requests_that_wait_share_the_next_run_and_get_their_own_vectors():
    model = Model()
    coalescer = Coalescer(model, capacity=1, fits=fits)
    names = ["a", "bb", "ccc", "dddd", "eeeee"]
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(coalescer, encodings("first"))
        assert model.started.wait(10)
        waiting = [pool.submit(coalescer, encodings(n)) for n in names]
        wait_until_waiting(coalescer, len(names))
        model.go.set()
        assert first.result(10).tolist() == [[5.0]]
        answers = [w.result(10).tolist() for w in waiting]
    assert answers == [[[float(len(n))]] for n in names]
    assert model.runs == [["first"], names]  # one shared run for the five


def test_a_run_holds_no_more_than_the_model_takes_at_once():
    model = Model()
    coalescer = Coalescer(model, capacity=1, fits=fits)
    long = "x" * 300  # 300 tokens: two of them pass the padded limit of a run
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(coalescer, encodings("first"))
        assert model.started.wait(10)
        waiting = [pool.submit(coalescer, encodings(long)) for _ in range(2)]
        wait_until_waiting(coalescer, 2)
        model.go.set()
        first.result(10)
        assert [w.result(10).tolist() for w in waiting] == [[[300.0]], [[300.0]]]
    assert model.runs == [["first"], [long], [long]]


def test_an_error_reaches_every_request_of_its_run_and_the_next_run_goes_on():
    model = Model()
    model.fail_on = "bad"
    coalescer = Coalescer(model, capacity=1, fits=fits)
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(coalescer, encodings("first"))
        assert model.started.wait(10)
        waiting = [pool.submit(coalescer, encodings(n)) for n in ("bad", "fine")]
        wait_until_waiting(coalescer, 2)
        model.go.set()
        first.result(10)
        for w in waiting:
            with pytest.raises(RuntimeError, match="the model broke"):
                w.result(10)
    model.fail_on = None
    assert coalescer(encodings("after")).tolist() == [[5.0]]
    assert coalescer._running == 0 and not coalescer._line


def test_the_local_model_gives_a_text_the_same_vector_alone_and_shared(settings):
    embedder = get_embedder()
    texts = [
        "When does Zephyr renew?",
        "Maria",
        "Who holds the keys of the Kraków office on Monday, and where is the front desk?",
    ] * 4
    alone = np.vstack([embedder.embed([t]) for t in texts])
    with ThreadPoolExecutor(12) as pool:
        shared = np.vstack(list(pool.map(lambda t: embedder.embed([t]), texts)))
    assert np.abs(alone - shared).max() < 1e-6
