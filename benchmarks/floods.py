"""The two-tenant run of ``load.py``: tenant-b's agents search now and then, alone, then while
tenant-a floods the engine in one shape after another; tenant-b's p95 under each flood over
its p95 alone is the figure fair use must keep within 2×.

The shapes (``--floods``, all by default), each flooder sending its next request the moment
an answer comes, a refusal included:

* ``agents``: ``--flood-agents`` agents of tenant-a, each with ``MM_RATE_CONCURRENT``
  searches of 2-6 words in flight;
* ``threads``: one agent with ``--flood-threads`` searches of 2-6 words in flight (what one
  client with a thread pool does);
* ``long``: one agent with ``--flood-threads`` searches of 1,990 characters (150 distinct
  words at most: within the query limits) in flight (each costs the embedder many times a
  short one);
* ``huge``: one agent with ``--flood-threads`` searches of 10,000 characters in flight (over
  the query limit: each is refused with a 400, after its body was read and parsed);
* ``bulk``: ``--bulk-agents`` agents of tenant-a, each with ``MM_RATE_CONCURRENT`` bulk
  writes of ``--bulk-items`` new memories in flight (the writes are counted with the rest:
  every acknowledged item must be stored).

The whole sequence (tenant-b alone, then each shape) runs ``--flood-rounds`` times: one run's
p95 ratio in a shape moved by about 1× between runs of the same code, so a shape's ratio is
tenant-b's p95 over all its rounds' searches over its p95 alone over all theirs, printed with
each round's own ratio (over that round's alone). tenant-b alone once more after the last says
whether the machine stayed the same meanwhile.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from dataclasses import dataclass
from typing import Any

SHAPES = ("agents", "threads", "long", "huge", "bulk")
#: How long the benchmark's clients keep an idle connection: under the web server's 5 s (its
#: keep-alive), so that no request goes out on a connection the server is closing just then
#: (httpx's default is also 5 s; a run at ``b9b00cc`` had two flood requests end in
#: ``ReadError('')``, the connection closed with no answer: most likely that race).
KEEPALIVE_SECONDS = 2.0
LONG_CHARS = 1_990
HUGE_CHARS = 10_000


@dataclass(frozen=True)
class Shape:
    name: str
    agents: int  # of tenant-a
    in_flight: int  # per agent
    what: str  # "search" or "bulk"
    chars: int = 0  # a search's length (0: 2-6 words)

    def describe(self, bulk_items: int) -> str:
        who = "one agent" if self.agents == 1 else f"{self.agents} agents"
        if self.what == "bulk":
            return f"{who}, {self.in_flight} bulk writes of {bulk_items} memories each in flight"
        query = f"{self.chars:,} characters" if self.chars else "2-6 words"
        return f"{who}, {self.in_flight} searches of {query} each in flight"


def shapes(args: Any, per_agent: int) -> list[Shape]:
    every = {
        "agents": Shape("agents", args.flood_agents, per_agent, "search"),
        "threads": Shape("threads", 1, args.flood_threads, "search"),
        "long": Shape("long", 1, args.flood_threads, "search", LONG_CHARS),
        "huge": Shape("huge", 1, args.flood_threads, "search", HUGE_CHARS),
        "bulk": Shape("bulk", args.bulk_agents, per_agent, "bulk"),
    }
    return [every[name] for name in args.floods]


#: Distinct words of a long query, at most (a search reads at most MM_SEARCH_MAX_WORDS, 200).
LONG_WORDS = 150


def text_of(rng: random.Random, words: list[str], chars: int) -> str:
    """Corpus words up to ``chars`` characters, at most ``LONG_WORDS`` of them distinct."""
    chosen = rng.sample(words, min(LONG_WORDS, len(words)))
    text = ""
    while len(text) < chars:
        text += " " + rng.choice(chosen)
    return text.strip()[:chars]


class Flooder:
    """One flooding agent's requests: what each got back is counted, nothing is retried
    later (the next request follows at once)."""

    def __init__(self, client, base: str, token: str, words, seed: tuple, shape, args, run):
        self.client, self.base = client, base
        self.headers = {"Authorization": f"Bearer {token}"}
        self.words, self.rng = words, random.Random(str(seed))
        self.shape, self.args, self.run = shape, args, f"{run}-flood{seed[0]}-{seed[1]}"
        self.sent = 0

    def request(self) -> tuple[str, dict]:
        self.sent += 1
        if self.shape.what == "bulk":
            items = [
                {
                    "text": f"{text_of(self.rng, self.words, 60)} bulk item {i} of {self.sent}.",
                    "idempotency_key": f"{self.run}-{self.sent}-{i}",
                }
                for i in range(self.args.bulk_items)
            ]
            return "/api/v1/memories/bulk", {"memories": items}
        if self.shape.chars:
            query = text_of(self.rng, self.words, self.shape.chars)
        else:
            query = " ".join(self.rng.choices(self.words, k=self.rng.randint(2, 6)))
        return "/api/v1/search", {"query": query, "limit": 10}

    async def send(self, tally: FloodTally) -> None:
        url, body = self.request()
        try:
            response = await self.client.post(self.base + url, json=body, headers=self.headers)
        except Exception as exc:
            tally.errors += 1
            tally.samples.append(repr(exc))
            return
        status = response.status_code
        if status == 429:
            tally.refused += 1
        elif status < 300:
            tally.served += 1
            if self.shape.what == "bulk":
                keys = [item["idempotency_key"] for item in body["memories"]]
                for result in response.json()["results"]:
                    tally.acknowledged[keys[result["index"]]] = result["mem_id"]
        elif status == 400 and self.shape.chars > LONG_CHARS:
            tally.invalid += 1  # what this shape sends: refused as it should be
        else:
            tally.errors += 1
            tally.samples.append(f"{status} {response.text[:200]}")


@dataclass
class FloodTally:
    served: int = 0
    refused: int = 0
    invalid: int = 0
    errors: int = 0

    def __post_init__(self) -> None:
        self.samples: list[str] = []
        self.acknowledged: dict[str, str] = {}

    def reset(self) -> None:
        self.served = self.refused = self.invalid = 0


async def run_floods(bases, tokens: dict, words, args, agent_class, tally_class, run, pct):
    """tenant-b alone, under each shape, and alone again; every flood's acknowledged writes."""
    import httpx
    from django.conf import settings

    per_agent = settings.MM_RATE_CONCURRENT or 4
    # Every window's agents draw other words: a query asked again would find its vector kept.
    windows = itertools.count()

    async def tenant_b(client):
        tally = tally_class(measuring=True)
        window = next(windows)
        agents = [
            agent_class(
                client, bases[i % len(bases)], token, words, seed=90_000 + 1_000 * window + i
            )
            for i, token in enumerate(tokens["b"][: args.b_agents])
        ]
        deadline = time.perf_counter() + args.seconds

        async def loop(agent) -> None:
            while time.perf_counter() < deadline:
                await agent.request(tally, "search")
                await asyncio.sleep(args.b_pause)

        await asyncio.gather(*(loop(agent) for agent in agents))
        return tally

    def figures(tallies: list) -> dict:
        values = [v for tally in tallies for v in tally.latencies.get("search", [])]
        return {
            "p50_ms": pct(values, 50),
            "p95_ms": pct(values, 95),
            "searches": len(values),
            "errors": sum(sum(tally.errors.values()) for tally in tallies),
            "throttled": sum(tally.throttled for tally in tallies),
            "error_samples": [s for tally in tallies for s in tally.error_samples],
        }

    async def flooded(client, shape: Shape) -> tuple[Any, FloodTally, float]:
        """tenant-b's searches while tenant-a floods in ``shape``; the flood's tally."""
        flood = FloodTally()
        stop = asyncio.Event()
        window = next(windows)
        flooders = [
            Flooder(client, bases[i % len(bases)], token, words, (window, i), shape, args, run)
            for i, token in enumerate(tokens["a"][: shape.agents])
        ]

        async def flood_loop(flooder: Flooder) -> None:
            while not stop.is_set():
                await flooder.send(flood)

        tasks = [
            asyncio.create_task(flood_loop(flooder))
            for flooder in flooders
            for _ in range(shape.in_flight)
        ]
        await asyncio.sleep(args.warmup)
        flood.reset()
        started = time.perf_counter()
        b = await tenant_b(client)
        elapsed = time.perf_counter() - started
        stop.set()
        await asyncio.gather(*tasks)
        return b, flood, elapsed

    limits = httpx.Limits(
        max_connections=None, max_keepalive_connections=None, keepalive_expiry=KEEPALIVE_SECONDS
    )
    every = shapes(args, per_agent)
    alone_rounds: list = []
    under: dict[str, list] = {shape.name: [] for shape in every}
    acknowledged: dict[str, str] = {}
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        for _ in range(args.flood_rounds):
            alone_rounds.append(await tenant_b(client))
            for shape in every:
                b, flood, elapsed = await flooded(client, shape)
                acknowledged |= flood.acknowledged
                under[shape.name].append((b, flood, elapsed))
        after = figures([await tenant_b(client)])
    alone = figures(alone_rounds)
    rows = []
    for shape in every:
        runs = under[shape.name]
        b = figures([tally for tally, _, _ in runs])
        seconds = sum(elapsed for _, _, elapsed in runs)
        floods = [flood for _, flood, _ in runs]
        rows.append(
            {
                "shape": shape.name,
                "flood": shape.describe(args.bulk_items),
                "in_flight": shape.agents * shape.in_flight,
                "b": b,
                "ratio_p95": b["p95_ms"] / alone["p95_ms"],
                "round_ratios": [
                    figures([tally])["p95_ms"] / figures([before])["p95_ms"]
                    for (tally, _, _), before in zip(runs, alone_rounds, strict=True)
                ],
                "flood_served_per_s": sum(f.served for f in floods) / seconds,
                "flood_refused_per_s": sum(f.refused for f in floods) / seconds,
                "flood_invalid_per_s": sum(f.invalid for f in floods) / seconds,
                "flood_errors": sum(f.errors for f in floods),
                "error_samples": [s for f in floods for s in f.samples][:5],
            }
        )
    result = {
        "b_agents": args.b_agents,
        "b_pause_s": args.b_pause,
        "rounds": args.flood_rounds,
        "alone": alone,
        "alone_after": after,
        "shapes": rows,
        "worst_ratio_p95": max((row["ratio_p95"] for row in rows), default=float("nan")),
    }
    return result, acknowledged


def table(t: dict) -> str:
    """tenant-b alone and under each flood, as printed."""
    lines = [
        "| tenant-b search | p50 ms | p95 ms | p95 / alone | each round's | the flood (tenant-a) "
        "| served /s | refused 429 /s | refused 400 /s | errors (b / flood) |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|---|",
        f"| alone, before each round | {t['alone']['p50_ms']:.0f} | {t['alone']['p95_ms']:.0f} "
        "| 1.00 | — | — | — | — | — | " + f"{t['alone']['errors']} / — |",
    ]
    for row in t["shapes"]:
        b = row["b"]
        lines.append(
            f"| under `{row['shape']}` | {b['p50_ms']:.0f} | {b['p95_ms']:.0f} "
            f"| **{row['ratio_p95']:.2f}×** "
            f"| {' / '.join(f'{r:.2f}' for r in row['round_ratios'])} "
            f"| {row['flood']} | {row['flood_served_per_s']:.1f} "
            f"| {row['flood_refused_per_s']:.1f} | {row['flood_invalid_per_s']:.1f} "
            f"| {b['errors']} / {row['flood_errors']} |"
        )
    after = t["alone_after"]
    lines.append(
        f"| alone, after | {after['p50_ms']:.0f} | {after['p95_ms']:.0f} "
        f"| {after['p95_ms'] / t['alone']['p95_ms']:.2f} | — | — | — | — | — "
        f"| {after['errors']} / — |"
    )
    lines += [
        "",
        f"tenant-b: {t['b_agents']} agents, {t['b_pause_s']} s between searches; "
        f"every shape {t['rounds']} time{'s' if t['rounds'] != 1 else ''}; the worst ratio: "
        f"**{t['worst_ratio_p95']:.2f}×** "
        "(target ≤ 2×).",
    ]
    return "\n".join(lines)
