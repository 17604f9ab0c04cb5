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

tenant-b's p95 alone is measured before the first shape and again after the last (the second
says whether the machine stayed the same meanwhile); each shape's ratio is over the first.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

SHAPES = ("agents", "threads", "long", "huge", "bulk")
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

    def __init__(self, client, base: str, token: str, words, seed: int, shape, args, run):
        self.client, self.base = client, base
        self.headers = {"Authorization": f"Bearer {token}"}
        self.words, self.rng = words, random.Random(seed)
        self.shape, self.args, self.run = shape, args, f"{run}-flood{seed}"
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

    async def tenant_b(client):
        tally = tally_class(measuring=True)
        agents = [
            agent_class(client, bases[i % len(bases)], token, words, seed=90_000 + i)
            for i, token in enumerate(tokens["b"][: args.b_agents])
        ]
        deadline = time.perf_counter() + args.seconds

        async def loop(agent) -> None:
            while time.perf_counter() < deadline:
                await agent.request(tally, "search")
                await asyncio.sleep(args.b_pause)

        await asyncio.gather(*(loop(agent) for agent in agents))
        return tally

    def figures(tally) -> dict:
        values = tally.latencies.get("search", [])
        return {
            "p50_ms": pct(values, 50),
            "p95_ms": pct(values, 95),
            "searches": len(values),
            "errors": sum(tally.errors.values()),
            "throttled": tally.throttled,
            "error_samples": tally.error_samples,
        }

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    rows, acknowledged = [], {}
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        alone = figures(await tenant_b(client))
        for shape in shapes(args, per_agent):
            flood = FloodTally()
            stop = asyncio.Event()
            flooders = [
                Flooder(client, bases[i % len(bases)], token, words, 50_000 + i, shape, args, run)
                for i, token in enumerate(tokens["a"][: shape.agents])
            ]

            async def flood_loop(flooder: Flooder, flood=flood, stop=stop) -> None:
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
            flooded = figures(await tenant_b(client))
            elapsed = time.perf_counter() - started
            stop.set()
            await asyncio.gather(*tasks)
            acknowledged |= flood.acknowledged
            rows.append(
                {
                    "shape": shape.name,
                    "flood": shape.describe(args.bulk_items),
                    "in_flight": shape.agents * shape.in_flight,
                    "b": flooded,
                    "ratio_p95": flooded["p95_ms"] / alone["p95_ms"],
                    "flood_served_per_s": flood.served / elapsed,
                    "flood_refused_per_s": flood.refused / elapsed,
                    "flood_invalid_per_s": flood.invalid / elapsed,
                    "flood_errors": flood.errors,
                    "error_samples": flood.samples[:5],
                }
            )
        after = figures(await tenant_b(client))
    result = {
        "b_agents": args.b_agents,
        "b_pause_s": args.b_pause,
        "alone": alone,
        "alone_after": after,
        "shapes": rows,
        "worst_ratio_p95": max((row["ratio_p95"] for row in rows), default=float("nan")),
    }
    return result, acknowledged


def table(t: dict) -> str:
    """tenant-b alone and under each flood, as printed."""
    lines = [
        "| tenant-b search | p50 ms | p95 ms | p95 / alone | the flood (tenant-a) | served /s "
        "| refused 429 /s | refused 400 /s | errors (b / flood) |",
        "|---|---:|---:|---:|---|---:|---:|---:|---|",
        f"| alone, before | {t['alone']['p50_ms']:.0f} | {t['alone']['p95_ms']:.0f} | 1.00 "
        "| — | — | — | — | " + f"{t['alone']['errors']} / — |",
    ]
    for row in t["shapes"]:
        b = row["b"]
        lines.append(
            f"| under `{row['shape']}` | {b['p50_ms']:.0f} | {b['p95_ms']:.0f} "
            f"| **{row['ratio_p95']:.2f}×** | {row['flood']} | {row['flood_served_per_s']:.1f} "
            f"| {row['flood_refused_per_s']:.1f} | {row['flood_invalid_per_s']:.1f} "
            f"| {b['errors']} / {row['flood_errors']} |"
        )
    after = t["alone_after"]
    lines.append(
        f"| alone, after | {after['p50_ms']:.0f} | {after['p95_ms']:.0f} "
        f"| {after['p95_ms'] / t['alone']['p95_ms']:.2f} | — | — | — | — | {after['errors']} / — |"
    )
    lines += [
        "",
        f"tenant-b: {t['b_agents']} agents, {t['b_pause_s']} s between searches; the worst "
        f"ratio: **{t['worst_ratio_p95']:.2f}×** (target ≤ 2×).",
    ]
    return "\n".join(lines)
