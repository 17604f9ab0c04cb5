"""How much the entity filter's sign-bit shortlist keeps of an exact ranking, on real texts.

    python benchmarks/shortlist.py --data ../shared/data/locomo/locomo_dev7.json \
        --statements ../shared/data/liar/train.tsv

A popular entity's vector candidates are the mentions nearest to the query by the Hamming
distance between the sign bits of their vectors and of the query's (pgvector's
``binary_quantize``: a bit for each dimension, set where it is positive), ranked again by
their real vectors (``memories.search.relational``). The relations benchmark measures that at
a million memories, but on synthetic vectors (cluster centres plus gaussian noise), whose
sign bits carry less of their order than a real model's. This one measures the same method on
the local model's vectors of real texts: the turns of the LoCoMo file ``--data`` and, with
``--statements``, the statements of a LIAR file (third column). For ``--queries`` texts drawn
at random, the others, or a random ``--pool`` of them (as if that many memories mentioned
one entity), are ranked exactly by cosine and by the shortlist of ``k`` then cosine; it prints
recall@10 and recall@50 of the shortlist against the exact ranking, and ``k`` as a share of
the pool (the share that decides, at any size).

Numbers are printed, never asserted. ``--smoke``: 300 texts, 10 queries.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django

SHORTLISTS = (50, 100, 250, 500, 1000)


def locomo_turns(path: Path) -> list[str]:
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "speaker" in node and isinstance(node.get("text"), str):
                texts.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(path.read_text()))
    return texts


def statements(path: Path) -> list[str]:
    with path.open(newline="") as handle:
        return [row[2] for row in csv.reader(handle, delimiter="\t") if len(row) > 2 and row[2]]


def measure(
    vectors: np.ndarray, pool: int, k: int, queries: int, rng: np.random.Generator
) -> dict[str, Any]:
    bits = vectors > 0
    at10, at50 = [], []
    for _ in range(queries):
        query = int(rng.integers(len(vectors)))
        others = np.delete(np.arange(len(vectors)), query)
        members = rng.choice(others, size=min(pool, len(others)), replace=False)
        exact = np.argsort(-(vectors[members] @ vectors[query]), kind="stable")
        hamming = (bits[members] != bits[query]).sum(axis=1)
        short = np.argsort(hamming, kind="stable")[:k]
        ranked = short[np.argsort(-(vectors[members][short] @ vectors[query]), kind="stable")]
        at10.append(len(set(ranked[:10]) & set(exact[:10])) / 10)
        at50.append(len(set(ranked[:50]) & set(exact[:50])) / 50)
    size = min(pool, len(vectors) - 1)
    return {
        "pool": size,
        "k": k,
        "k_share": k / size,
        "recall_at_10": float(np.mean(at10)),
        "recall_at_50": float(np.mean(at50)),
        "worst_decile_at_10": float(np.percentile(at10, 10)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared/data/locomo/locomo_dev7.json"
    )
    parser.add_argument("--statements", type=Path, help="a LIAR file (tab-separated) to add")
    parser.add_argument("--texts", type=int, default=0, help="use at most this many (0: all)")
    parser.add_argument("--pool", type=int, nargs="*", default=[2_000, 5_000, 0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "shortlist-data"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.texts, args.queries, args.pool = 300, 10, [0]
        args.data_dir = ROOT / "benchmarks/out/smoke-shortlist"
    setup_django(args.data_dir)
    from memories.embeddings import get_embedder

    texts = locomo_turns(args.data)
    if args.statements:
        texts += statements(args.statements)
    rng = np.random.default_rng(args.seed)
    if args.texts and len(texts) > args.texts:
        texts = [texts[i] for i in sorted(rng.choice(len(texts), args.texts, replace=False))]
    started = time.perf_counter()
    vectors = get_embedder().embed(texts).astype(np.float32)
    embed_s = time.perf_counter() - started
    rows = []
    for pool in args.pool:
        size = pool or len(vectors)
        for k in SHORTLISTS:
            if k < min(size, len(vectors) - 1):
                rows.append(measure(vectors, size, k, args.queries, rng))
    info = machine()
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(info))
    print(
        f"{len(texts):,} texts embedded by the local model in {embed_s:.0f} s; "
        f"{args.queries} queries per row, each a text against the others.\n"
    )
    print("| pool | shortlist k | k / pool | recall@10 | recall@50 | recall@10, worst 10% |")
    print("|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['pool']:,} | {row['k']:,} | {row['k_share']:.2%} | {row['recall_at_10']:.3f}"
            f" | {row['recall_at_50']:.3f} | {row['worst_decile_at_10']:.2f} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"command": command, "machine": info, "texts": len(texts), "rows": rows}
        args.json.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
