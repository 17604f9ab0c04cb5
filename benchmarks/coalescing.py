"""Embeddings shared between concurrent requests (``memories.coalescing``): what a lone query
pays for the line it might have waited in, and what queries asked at once save.

    python benchmarks/coalescing.py --queries 400 --threads 1,4,16,32

Queries of 2-6 words (``search_latency.Corpus``'s words, as ``load.py`` asks), each embedded
once (no vector kept). **Alone**: one after another, straight through the model (``_embedded``:
what a query cost before the line existed) and through the line (``embed_query``'s path), the
two interleaved so that drift hits both; the median and p95 of each, and their difference.
**At once**: T threads asking their share of the queries through the line: queries a second,
CPU ms a query (this process's), each query's wall p50/p95, and how many texts a run held
(``mm_embed_shared_texts``) and how long a query waited for its run (``mm_embed_wait_seconds``).
Needs no database (``--data`` is not read: the queries are made up).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import threading
import time
from pathlib import Path

import numpy as np
from common import ROOT, add_smoke_option


def queries(count: int, seed: int) -> list[str]:
    from search_latency import Corpus

    corpus = Corpus(seed)
    rng = np.random.default_rng(seed)
    words = corpus.vocabulary[:2000]
    return [
        " ".join(rng.choice(words, size=int(rng.integers(2, 7)))) + f" {n}" for n in range(count)
    ]


def sum_and_count(metric) -> tuple[float, float]:
    """A histogram's sum and count so far (this process's)."""
    total = count = 0.0
    for family in metric.collect():
        for sample in family.samples:
            if sample.name.endswith("_sum"):
                total = sample.value
            elif sample.name.endswith("_count"):
                count = sample.value
    return total, count


def alone(embedder, texts: list[str]) -> dict[str, float]:
    direct, shared = [], []
    encodings = embedder.tokenizer.encode_batch(texts)
    for n, encoding in enumerate(encodings):
        order = (("direct", direct), ("shared", shared))
        for _, times in order if n % 2 else order[::-1]:
            started = time.perf_counter()
            if times is direct:
                embedder._embedded([encoding])
            else:
                embedder.coalescer([encoding])
            times.append(time.perf_counter() - started)
    p = lambda values, q: float(np.percentile(values, q)) * 1000  # noqa: E731
    return {
        "direct_p50_ms": p(direct, 50),
        "direct_p95_ms": p(direct, 95),
        "shared_p50_ms": p(shared, 50),
        "shared_p95_ms": p(shared, 95),
        "penalty_p50_ms": p(shared, 50) - p(direct, 50),
    }


def at_once(embedder, texts: list[str], threads: int) -> dict[str, float]:
    from memories.metrics import EMBED_SHARED_TEXTS, EMBED_WAIT_SECONDS

    encodings = embedder.tokenizer.encode_batch(texts)
    walls: list[float] = []
    lock = threading.Lock()
    metrics = (EMBED_SHARED_TEXTS, EMBED_WAIT_SECONDS)
    before = [sum_and_count(m) for m in metrics]

    def work(part: list) -> None:
        for encoding in part:
            started = time.perf_counter()
            embedder.coalescer([encoding])
            with lock:
                walls.append(time.perf_counter() - started)

    parts = [encodings[i::threads] for i in range(threads)]
    cpu, started = time.process_time(), time.perf_counter()
    pool = [threading.Thread(target=work, args=(part,)) for part in parts]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    (texts_sum, runs), (wait_sum, waits) = (
        (now[0] - then[0], now[1] - then[1])
        for now, then in zip([sum_and_count(m) for m in metrics], before, strict=True)
    )
    return {
        "threads": threads,
        "queries_per_s": len(texts) / elapsed,
        "cpu_ms_per_query": cpu / len(texts) * 1000,
        "wall_p50_ms": float(np.percentile(walls, 50)) * 1000,
        "wall_p95_ms": float(np.percentile(walls, 95)) * 1000,
        "texts_per_run": texts_sum / runs if runs else float("nan"),
        "wait_mean_ms": wait_sum / waits * 1000 if waits else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--threads", default="1,4,16,32")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, help="not read: the queries are made up")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.queries, args.threads = 24, "1,4"
    threads = [int(t) for t in args.threads.split(",")]
    if args.queries < 2 or min(threads) < 1:
        parser.error("--queries must be at least 2 and --threads at least 1")
    # The engine's settings and its local embedder; no database is opened.
    os.environ["DJANGO_SETTINGS_MODULE"] = "meaning_memory.settings"
    os.environ["MM_DATA_DIR"] = str(ROOT / "benchmarks" / "out" / "coalescing-data")
    os.environ["MM_EMBEDDER"] = "local"
    sys.path.insert(0, str(ROOT))  # the engine's packages before this folder's scripts
    import django

    django.setup()
    from memories.embeddings import get_embedder

    embedder = get_embedder()
    embedder.embed(queries(8, args.seed + 1))  # loaded and warm
    texts = queries(args.queries, args.seed)
    lone = alone(embedder, texts)
    rows = [at_once(embedder, texts, t) for t in threads]

    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(
        f"Machine: {len(os.sched_getaffinity(0))} CPUs; the model's places "
        f"(RunGate capacity): {embedder.gate.capacity}; {args.queries} queries.\n"
    )
    print("| one query at a time | p50 ms | p95 ms |\n|---|---:|---:|")
    print(f"| straight to the model | {lone['direct_p50_ms']:.2f} | {lone['direct_p95_ms']:.2f} |")
    print(f"| through the line | {lone['shared_p50_ms']:.2f} | {lone['shared_p95_ms']:.2f} |")
    print(f"\nA lone query's cost of the line (p50): {lone['penalty_p50_ms']:+.3f} ms.\n")
    print(
        "| threads | queries/s | CPU ms a query | wall p50 / p95 ms | texts a run | "
        "mean wait ms |\n|---:|---:|---:|---|---:|---:|"
    )
    for row in rows:
        print(
            f"| {row['threads']} | {row['queries_per_s']:.1f} | {row['cpu_ms_per_query']:.2f} "
            f"| {row['wall_p50_ms']:.1f} / {row['wall_p95_ms']:.1f} "
            f"| {row['texts_per_run']:.2f} | {row['wait_mean_ms']:.2f} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"command": command, "alone": lone, "at_once": rows}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
