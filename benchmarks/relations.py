"""What the relational filters cost, and how fast old memories are linked.

    python benchmarks/relations.py --size 1000000 --queries 200
    python benchmarks/relations.py --backfill 100000

Search (``--size``): on its own embedded PostgreSQL (``--data-dir``, default
``benchmarks/out/relations-data``), the synthetic memories of ``search_latency.py`` in one
workspace (binary COPY, indexes rebuilt), then ``--links-per-memory`` links on average between
random memories (types relates_to, supports, part_of) and mentions of ``--entities`` entities
(each memory mentions 0 to 2, the entities Zipf-distributed: a few are everywhere, most are
rare). The tables' and indexes' files are read once into the page cache (as on a server that
has run for a while), and ``--warmup`` queries run. Then, for each query, back to back on the
same cache, ``memory_search`` (query vector given: excl. embedding) plain, with ``related_to``
(a memory that has links), with ``min_r`` (``--min-r``), with ``entity`` (a name drawn
like the mentions, so common and rare ones) and with ``expand: "graph"``. It prints p50 / p95
of each and the p95 difference from the plain search; for the first ``--exact-queries``, the
entity filter's recall@10 against an exact ranking of every memory that mentions the entity.
Then traversal
(``--traversal-queries`` starts, memories that have links): depth 1, 2 and 3, and the shortest
path to a node reached at depth 2 or 3 and to a random linked memory.

Backfill (``--backfill N``): N memories whose texts are LoCoMo turns (``--data``; repeated, each
copy numbered, so every text is distinct), stored without entities as if written before they
existed, then ``link_backfill`` over them (the ``meaning-memory link`` command's service): the
rate in memories and links a second, with the offline model and the gazetteer (``--gazetteer``
entities declared from the names the model found in a sample).

Timings are printed, never asserted. ``--smoke``: 2,000 memories, 5 queries, a backfill of 200.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    ROOT,
    add_smoke_option,
    describe,
    machine,
    read_into_page_cache,
    setup_django,
)
from search_latency import (
    Corpus,
    build_indexes,
    loaded_agents,
    mem_id,
    prewarm,
    reset,
)
from search_latency import load as load_memories

CHUNK = 200_000
#: Times the entities list's first page is read (the median is printed).
LIST_RUNS = 3
#: The entity filter's queries by how many memories mention the entity asked for.
ENTITY_BANDS = (
    ("up to 1,000 mentions", 0, 1_000),
    ("1,001 to 10,000", 1_001, 10_000),
    ("over 10,000", 10_001, 10**12),
)
LINK_TYPES = ("relates_to", "supports", "part_of")


def load_relations(
    rng: np.random.Generator, agent: Any, links_per_memory: float, entities: int
) -> dict[str, Any]:
    """COPY entities and links for every memory of the agent's workspace; returns counts and
    seconds."""
    from django.db import connection
    from psycopg.types.json import Jsonb

    from memories.relational.gazetteer import normalize, tokens

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM memories_memory ORDER BY id")
        ids = np.array([row[0] for row in cursor.fetchall()], dtype=np.int64)
    connection.ensure_connection()
    raw = connection.connection
    now = datetime.now(UTC)
    names = [f"Entity {n:06d}" for n in range(entities)]
    key = int(rng.integers(0, 2**62))
    with raw.cursor() as cursor:
        with cursor.copy(
            "COPY memories_entity (entity_id, workspace_id, kind, name, normalized, aliases, "
            "keys, tokens, declared, origin, typed_by, created_at, updated_at) FROM STDIN"
        ) as copy:
            for n, name in enumerate(names):
                normal = normalize(name)
                copy.write_row(
                    (mem_id(n, key), agent.workspace_id, "organization", name, normal, [],
                     [normal], tokens([normal]), False, "extraction", "extraction", now, now)
                )  # fmt: skip
        cursor.execute("SELECT id FROM memories_entity ORDER BY id")
        entity_ids = np.array([row[0] for row in cursor.fetchall()], dtype=np.int64)
    ranks = np.arange(1, entities + 1)
    popularity = (1.0 / ranks) / (1.0 / ranks).sum()
    n_links = int(len(ids) * links_per_memory)
    mentions = rng.integers(0, 3, len(ids))  # 0, 1 or 2 entities a memory
    sql = (
        "COPY memories_link (link_id, workspace_id, source_id, target_memory_id, "
        "target_entity_id, kind, weight, origin, evidence, created_at) FROM STDIN"
    )
    written = 0
    with raw.cursor() as cursor:  # the degrees are counted once, after the load
        cursor.execute("ALTER TABLE memories_link DISABLE TRIGGER USER")
    # A pair of memories is linked once per type (the table's unique constraint): drawn at
    # random, the same triple comes up again at this size, in any chunk.
    seen: set[tuple[int, int, int]] = set()
    with raw.cursor() as cursor, cursor.copy(sql) as copy:
        for first in range(0, n_links, CHUNK):
            n = min(CHUNK, n_links - first)
            sources, targets = ids[rng.integers(0, len(ids), n)], ids[rng.integers(0, len(ids), n)]
            kinds = rng.integers(0, len(LINK_TYPES), n)
            for i in range(n):
                s, t, k = int(sources[i]), int(targets[i]), int(kinds[i])
                if s == t or (s, t, k) in seen:
                    continue
                seen.add((s, t, k))
                copy.write_row(
                    (mem_id(written, key + 1), agent.workspace_id, s, t, None, LINK_TYPES[k],
                     1.0, "writer", Jsonb({}), now)
                )  # fmt: skip
                written += 1
        memory_links = written
        seen.clear()
        for first in range(0, len(ids), CHUNK):
            block = ids[first : first + CHUNK]
            counts = mentions[first : first + CHUNK]
            picked = rng.choice(entity_ids, size=(len(block), 2), p=popularity)
            for i, memory in enumerate(block.tolist()):
                for entity in dict.fromkeys(picked[i, : counts[i]].tolist()):
                    copy.write_row(
                        (mem_id(written, key + 1), agent.workspace_id, memory, None, entity,
                         "mentions", 1.0, "extraction", Jsonb({}), now)
                    )  # fmt: skip
                    written += 1
            print(f"  links: {written:,}", file=sys.stderr, flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_link ENABLE TRIGGER USER")
        cursor.execute("SELECT memories_recount_degrees()")
        cursor.execute("SELECT memories_refill_mention_codes()")
        cursor.execute("VACUUM ANALYZE memories_memorydegree")
        cursor.execute("VACUUM ANALYZE memories_link")
        cursor.execute("VACUUM ANALYZE memories_entity")
    connection.close()
    return {
        "memory_links": memory_links,
        "mentions": written - memory_links,
        "entities": entities,
        "seconds": time.perf_counter() - started,
    }


def relation_counts() -> dict[str, int]:
    from memories.models import Entity, Link

    return {
        "memory_links": Link.objects.filter(target_memory__isnull=False).count(),
        "mentions": Link.objects.filter(target_entity__isnull=False).count(),
        "entities": Entity.objects.count(),
    }


def search_case(args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    from django.db import connection

    from memories.operations import memory_search
    from memories.selectors.reader import Reader

    rng = np.random.default_rng([args.seed, args.size])
    agents = loaded_agents(args.size, 1) if args.reuse else []
    done = relation_counts() if agents else {}
    wanted_links = int(args.size * args.links_per_memory)
    # A few random pairs repeat and are dropped (one link per pair and type).
    if (
        agents
        and done["entities"] == args.entities
        and wanted_links * 0.999 <= done["memory_links"] <= wanted_links
    ):
        print(f"{args.size:,} memories: reusing the data already loaded", flush=True)
        loaded: dict[str, Any] = {"seconds": 0.0}
        rng = np.random.default_rng([args.seed, args.size, 2])
    elif agents:
        # The memories and their indexes are there; the relations are not (a load that
        # stopped half-way): load those again.
        print(f"{args.size:,} memories: reusing them; loading the relations again", flush=True)
        with connection.cursor() as cursor:
            # TRUNCATE, not DELETE: no row trigger recounts degrees for millions of rows (the
            # load recounts them once at its end).
            cursor.execute("TRUNCATE memories_link")
            cursor.execute("DELETE FROM memories_entity")
        loaded = load_relations(rng, agents[0], args.links_per_memory, args.entities)
        print(f"  relations loaded in {loaded['seconds']:.1f} s", flush=True)
    else:
        agents, ddl = reset(1)
        seconds = load_memories(corpus, rng, args.size, agents)
        index_s = build_indexes(ddl, 128)
        print(f"{args.size:,} memories loaded in {seconds:.1f} s, indexes {index_s}", flush=True)
        loaded = load_relations(rng, agents[0], args.links_per_memory, args.entities)
        print(f"  relations loaded in {loaded['seconds']:.1f} s", flush=True)
    counts = relation_counts()
    agent = agents[0]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.mem_id FROM memories_memory m WHERE EXISTS (SELECT 1 FROM memories_link l "
            "WHERE l.source_id = m.id AND l.target_memory_id IS NOT NULL) "
            "ORDER BY m.id LIMIT 5000"
        )
        linked = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT e.name, count(l.id) FROM memories_entity e LEFT JOIN memories_link l "
            "ON l.target_entity_id = e.id AND l.workspace_id = e.workspace_id "
            "GROUP BY e.id, e.name ORDER BY e.id"
        )
        mentioned = cursor.fetchall()
        names = [name for name, _ in mentioned]
        mentions_of = dict(mentioned)
    ranks = np.arange(1, len(names) + 1)
    popularity = (1.0 / ranks) / (1.0 / ranks).sum()

    def query() -> dict[str, Any]:
        return {
            "text": corpus.texts(rng, 1, 3, 6)[0],
            "vector": corpus.vectors(rng, 1)[0],
            "related_to": linked[int(rng.integers(len(linked)))],
            "entity": names[int(rng.choice(len(names), p=popularity))],
        }

    variants = {
        "plain": lambda q: {},
        "related_to": lambda q: {"related_to": q["related_to"]},
        f"min_r={args.min_r}": lambda q: {"min_r": args.min_r},
        "entity": lambda q: {"entity": q["entity"]},
        "expand=graph": lambda q: {"expand": "graph"},
    }

    def run(q: dict[str, Any], filters: dict[str, Any]) -> tuple[float, int]:
        started = time.perf_counter()
        hits = memory_search(
            Reader.of_agent(agent), **filters, query=q["text"], query_vector=q["vector"], limit=10
        )
        return (time.perf_counter() - started) * 1000, len(hits)

    def top(q: dict[str, Any], exact: bool) -> list[str]:
        hits = memory_search(
            Reader.of_agent(agent),
            query=q["text"],
            query_vector=q["vector"],
            limit=10,
            entity=q["entity"],
            exact=exact,
        )
        return [hit.memory.mem_id for hit in hits]

    print(f"  prewarm: {prewarm():.1f} s", flush=True)
    seconds, read = read_into_page_cache(
        ("memories_memory", "memories_link", "memories_entity", "memories_memorydegree")
    )
    print(f"  page cache: {read / 2**30:.1f} GiB read in {seconds:.1f} s", flush=True)
    for q in [query() for _ in range(args.warmup)]:
        for variant in variants.values():
            run(q, variant(q))
    times: dict[str, list[float]] = {name: [] for name in variants}
    found: dict[str, list[int]] = {name: [] for name in variants}
    by_band: dict[str, list[float]] = {band: [] for band, _, _ in ENTITY_BANDS}
    recall_by_band: dict[str, list[float]] = {band: [] for band, _, _ in ENTITY_BANDS}
    for number, q in enumerate([query() for _ in range(args.queries)]):
        for name, variant in variants.items():
            ms, n = run(q, variant(q))
            times[name].append(ms)
            found[name].append(n)
        # The entity filter's top ten against an exact ranking of every mentioning memory
        # (on the first queries only: an exact ranking of a popular entity takes seconds).
        recall = None
        if number < args.exact_queries:
            exact = top(q, exact=True)
            recall = len(set(top(q, exact=False)) & set(exact)) / max(len(exact), 1)
        for band, low, high in ENTITY_BANDS:
            if low <= mentions_of[q["entity"]] <= high:
                by_band[band].append(times["entity"][-1])
                if recall is not None:
                    recall_by_band[band].append(recall)
    plain_p95 = float(np.percentile(times["plain"], 95))
    rows = []
    for name in variants:
        p50, p95 = np.percentile(times[name], [50, 95])
        rows.append(
            {
                "variant": name,
                "p50_ms": float(p50),
                "p95_ms": float(p95),
                "p95_over_plain_ms": float(p95) - plain_p95,
                "mean_hits": float(np.mean(found[name])),
            }
        )
    # The entities list's first page (most mentioned first), as a team member and as the agent.
    from memories.selectors.relations import entity_list

    listing = {}
    for name, reader in (
        ("member", Reader.of_engine(agent.workspace)),
        ("agent", Reader.of_agent(agent)),
    ):
        took = []
        for _ in range(LIST_RUNS):
            started = time.perf_counter()
            list(entity_list(reader)[:50])
            took.append((time.perf_counter() - started) * 1000)
        listing[name] = float(np.median(took))
    traversal = traversal_case(args, agent, linked, rng)
    bands = [
        {
            "band": band,
            "queries": len(by_band[band]),
            "p50_ms": float(np.percentile(by_band[band], 50)) if by_band[band] else None,
            "p95_ms": float(np.percentile(by_band[band], 95)) if by_band[band] else None,
            "exact_checked": len(recall_by_band[band]),
            "recall_at_10": float(np.mean(recall_by_band[band])) if recall_by_band[band] else None,
        }
        for band, _, _ in ENTITY_BANDS
    ]
    return {
        "memories": args.size,
        **counts,
        "load_s": loaded["seconds"],
        "rows": rows,
        "entity_bands": bands,
        "entity_list_ms": listing,
        "traversal": traversal,
    }


def backfill_case(args: argparse.Namespace) -> dict[str, Any]:
    """N LoCoMo turns stored without entities, then linked by ``link_backfill``."""
    from django.db import connection

    from memories.models import Memory, Workspace
    from memories.relational.extraction import extract
    from memories.services import agent_create, content_hash, entities_declare, link_backfill
    from readiness.locomo import memory_text, read

    turns = [memory_text(t, True) for c in read(args.data) for t in c.turns]
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
    agent, _ = agent_create(workspace_slug="backfill", name="bench")
    now = datetime.now(UTC)
    rows = []
    for n in range(args.backfill):
        text = f"{turns[n % len(turns)]} (#{n})"
        rows.append(
            Memory(
                workspace_id=agent.workspace_id,
                scope_id=agent.private_scope_id,
                text=text,
                source=agent.name,
                created_at=now,
                content_hash=content_hash(scope_id=agent.private_scope_id, source="", text=text),
            )
        )
    Memory.objects.bulk_create(rows, batch_size=5_000)
    names = {
        (span.text, span.entity_type)
        for spans in extract(turns[: args.gazetteer * 5])
        for span in spans
    }
    declared = [{"name": n, "type": t} for n, t in sorted(names)[: args.gazetteer]]
    if declared:
        entities_declare(workspace_id=agent.workspace_id, items=declared)
    workspace = Workspace.objects.get(pk=agent.workspace_id)
    started = time.perf_counter()
    done = link_backfill(workspace=workspace, batch=args.batch)
    seconds = time.perf_counter() - started
    return {
        "memories": done.memories,
        "links": done.links,
        "gazetteer": len(declared),
        "seconds": seconds,
        "memories_per_s": done.memories / seconds,
        "links_per_s": done.links / seconds,
    }


def traversal_case(
    args: argparse.Namespace, agent: Any, linked: list[str], rng: np.random.Generator
) -> list[dict[str, Any]]:
    """Traversal from memories that have links: depth 1, 2 and 3 (``limit`` 50), and the
    shortest path to a node reached at depth 2 or 3 (found) and to a random linked memory
    (mostly not within reach: the walk reads up to its row cap)."""
    from django.conf import settings

    from memories.errors import ValidationFailed
    from memories.selectors.reader import Reader
    from memories.selectors.traversal import path_between, traverse_from

    settings.MM_TRAVERSAL = True
    times: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    cut: dict[str, int] = {}

    reader = Reader.of_agent(agent)

    def timed(name: str, call: Any, **arguments: Any) -> Any:
        started = time.perf_counter()
        try:
            result = call(reader, **arguments)
        except ValidationFailed:  # past MM_TRAVERSAL_TIMEOUT_MS: counted, timed as it ran
            cut[name] = cut.get(name, 0) + 1
            result = None
        times.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        return result

    starts = [linked[int(rng.integers(len(linked)))] for _ in range(args.traversal_queries)]
    for start in starts[: max(len(starts) // 10, 1)]:  # warm-up
        traverse_from(reader, start=start, depth=2)
    for start in starts:
        far = []
        for depth in (1, 2, 3):
            name = f"traverse depth {depth}"
            _, reached = timed(name, traverse_from, start=start, depth=depth) or (None, [])
            counts.setdefault(name, []).append(len(reached))
            far += [r.node for r in reached if r.depth >= 2 and hasattr(r.node, "mem_id")]
        if far:
            end = far[int(rng.integers(len(far)))].mem_id
            timed("explain-path, reachable", path_between, start=start, end=end)
        other = linked[int(rng.integers(len(linked)))]
        if other != start:
            name = "explain-path, random pair"
            _, _, found = timed(name, path_between, start=start, end=other) or (None, None, None)
            counts.setdefault(name, []).append(int(found is not None))
    rows = []
    for name, values in times.items():
        p50, p95 = np.percentile(values, [50, 95])
        rows.append(
            {
                "operation": name,
                "runs": len(values),
                "p50_ms": float(p50),
                "p95_ms": float(p95),
                "mean_nodes": float(np.mean(counts[name])) if name in counts else None,
                "timed_out": cut.get(name, 0),
            }
        )
    return rows


def search_table(result: dict[str, Any]) -> str:
    lines = [
        "| filter | p50 ms | p95 ms | p95 − plain p95 ms | p95 / plain p95 | mean hits |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    plain_p95 = next(row["p95_ms"] for row in result["rows"] if row["variant"] == "plain")
    for row in result["rows"]:
        lines.append(
            f"| {row['variant']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
            f"{row['p95_over_plain_ms']:+.1f} | {row['p95_ms'] / plain_p95:.2f}× | "
            f"{row['mean_hits']:.1f} |"
        )
    lines += [
        "",
        "The entity filter by how many memories mention the entity asked for (entities are "
        "asked for as often as they are mentioned):",
        "",
        "| mentions | queries | p50 ms | p95 ms | recall@10 vs exact (queries) |",
        "|---|---:|---:|---:|---:|",
    ]
    for band in result["entity_bands"]:
        recall = (
            f"{band['recall_at_10']:.3f} ({band['exact_checked']})"
            if band.get("recall_at_10") is not None
            else "–"
        )
        if band["queries"]:
            lines.append(
                f"| {band['band']} | {band['queries']} | {band['p50_ms']:.1f} "
                f"| {band['p95_ms']:.1f} | {recall} |"
            )
        else:
            lines.append(f"| {band['band']} | 0 | – | – | – |")
    listing = result["entity_list_ms"]
    lines += [
        "",
        f"The entities list's first page of 50, most mentioned first (median of {LIST_RUNS}): "
        f"{listing['member']:.0f} ms for a team member, {listing['agent']:.0f} ms for the agent "
        "(its counts only of the memories it sees).",
        "",
        "Traversal (opt-in) from memories that have links, `limit` 50 "
        "(mean nodes: nodes returned; for the random pairs, the share with a path found):",
        "",
        "| operation | runs | p50 ms | p95 ms | mean nodes | cut by the timeout |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in result.get("traversal", []):
        nodes = "–" if row["mean_nodes"] is None else f"{row['mean_nodes']:.2f}"
        lines.append(
            f"| {row['operation']} | {row['runs']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} "
            f"| {nodes} | {row['timed_out']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="memories (search)")
    parser.add_argument("--links-per-memory", type=float, default=2.0)
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--min-r", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument(
        "--traversal-queries", type=int, default=100, help="starts of the traversal timings"
    )
    parser.add_argument(
        "--exact-queries",
        type=int,
        default=40,
        help="queries whose entity filter is also ranked exactly (recall@10)",
    )
    parser.add_argument("--backfill", type=int, default=0, help="memories to backfill instead")
    parser.add_argument("--gazetteer", type=int, default=100, help="entities declared (backfill)")
    parser.add_argument("--batch", type=int, default=200, help="backfill batch")
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared/data/locomo/locomo_dev7.json"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "relations-data"
    )
    parser.add_argument("--reuse", action="store_true", help="keep loaded data of this size")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.size, args.entities, args.queries, args.warmup = 2_000, 200, 5, 5
        args.exact_queries, args.traversal_queries = 2, 3
        args.data_dir = ROOT / "benchmarks/out/smoke-relations"
    if min(args.size, args.entities, args.queries) < 1 or args.links_per_memory < 0:
        parser.error("--size, --entities and --queries must be positive")
    setup_django(args.data_dir)
    info = machine()
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    payload: dict[str, Any] = {"command": command, "machine": info}
    if args.backfill or args.smoke:
        if args.smoke:
            args.backfill = 200
        payload["backfill"] = backfill_case(args)
    if not args.backfill or args.smoke:
        payload["search"] = search_case(args, Corpus(args.seed))
    print(f"\n`{command}`\n")
    print(describe(info))
    if "search" in payload:
        result = payload["search"]
        print(
            f"{result['memories']:,} memories in one workspace, {result['memory_links']:,} "
            f"links between memories, {result['mentions']:,} mentions of "
            f"{result['entities']:,} entities; {args.queries} queries, each filter back to back "
            "with the plain search; excl. embedding.\n"
        )
        print(search_table(result))
    if "backfill" in payload:
        b = payload["backfill"]
        print(
            f"\nBackfill: {b['memories']:,} memories, {b['links']:,} links in {b['seconds']:.1f} s:"
            f" {b['memories_per_s']:,.0f} memories/s, {b['links_per_s']:,.0f} links/s "
            f"(gazetteer of {b['gazetteer']} entities, batches of {args.batch})."
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
