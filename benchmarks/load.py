"""Load over HTTP: the served engine (web server + worker, embedded PostgreSQL) under N agents.

    python benchmarks/load.py --size 100000 --agents 1,8,32,128 --seconds 30

Builds its own embedded database (``--data-dir``, default ``benchmarks/out/load-data``; never
``DATABASE_URL`` or the developer's ``MM_DATA_DIR``): two workspaces, ``tenant-a`` with
``--size`` memories in a scope all its agents share, and ``tenant-b`` with a tenth of that,
loaded like ``search_latency.py`` (synthetic texts of pseudo-words and synthetic vectors, by
binary COPY; the engine's indexes rebuilt afterwards). Then it starts ``meaning-memory serve``
on that data and drives it over HTTP. Before any row, two agents send each web process every
kind of request a few times, unmeasured (its first requests of a kind, and its first ones at
the same time, are slower than the rest). Then:

* **Mix**, for each pause of ``--think`` and each N of ``--agents``: N agents of tenant-a,
  each sending one request after another with that pause between an answer and the next
  request (0: none, the most the engine can take; 0.25 s: an agent that calls three to four
  times a second, still far more often than one that waits for its model between calls), for
  ``--seconds`` after ``--warmup`` seconds, 70% search
  (2-6 words of the corpus; the query is embedded by the server), 25% remember (a new text
  with an idempotency key), 5% feedback (``important`` on a memory its searches returned).
  Per N: requests/s, p50/p95/p99 per operation, errors (any answer but 2xx, or no answer),
  429s. Afterwards every acknowledged write is counted against the rows stored with its key.
  Each row also says how far behind the writes their enrichment ran (``benchmarks/lag.py``:
  the enricher's own record of each memory's lag, p50 and p95, and the memories still
  pending when the row ended, with the seconds it then took to finish them).
* **Writes one at a time**: one agent of tenant-a writing one memory after another, no pause
  (``--no-writes-alone`` skips it): memories acknowledged a second, and the same lag figures.
* **Two tenants** (``benchmarks/floods.py``): tenant-b's ``--b-agents`` agents search with a
  pause of ``--b-pause`` s between requests, alone, then while tenant-a floods in each shape
  of ``--floods`` (many agents; many threads of one agent; long queries; queries over the
  limit; bulk writes), each flooder sending again the moment it is answered or refused, the
  whole sequence ``--flood-rounds`` times: tenant-b's p95 under each shape over its p95
  alone (over every round's searches, and each round's own), and what each flood got through.

With ``--web-processes N`` it starts ``serve`` N times on the same database (each with its own
worker), deals the agents out to them in turn, and reports how many requests each answered.
With ``--database-url`` the database is that server's (a PostgreSQL the benchmark may fill and
empty), not its own embedded one; PostgreSQL's CPU is then not measured.

The per-minute rate limit is off in the served engine (``MM_RATE_PER_MINUTE=0``), so that
capacity is measured, not the limit, and so is the scheduled consolidation
(``MM_CONSOLIDATE_EVERY=0``: its first run on the loaded memories would link and score every
one of them while the rows are measured; ``benchmarks/consolidation.py`` measures it); every
other limit is the engine's default.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import breakdown
import floods
import lag
import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django

SHARED_SCOPE = "team:load"
MIX = (("search", 0.70), ("remember", 0.25), ("feedback", 0.05))
#: Begins every idempotency key this run writes: a key of an earlier run (``--reuse``), or of
#: another row of this one, would be answered from what is stored, not written again.
RUN = f"load-{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}"


def prepare(args: argparse.Namespace) -> dict[str, Any]:
    """Load the two workspaces (or keep them, with ``--reuse``); their agents' tokens."""
    from search_latency import Corpus, build_indexes, load, reset

    from memories.models import HNSW_EF_CONSTRUCTION, Memory, Scope
    from memories.services import agent_create

    saved = args.data_dir / "load-agents.json"
    agents_needed = max(max(args.agents), args.flood_agents)
    if args.reuse and saved.exists():
        tokens = json.loads(saved.read_text())
        if (
            tokens.get("size") == args.size
            and len(tokens["a"]) >= agents_needed
            and Memory.objects.filter(idempotency_key="").count() == args.size + args.size // 10
        ):
            from django.db import connection

            # Every run starts from the loaded memories: what earlier runs wrote (each write
            # has an idempotency key, the loaded ones none) is deleted. Left, the flood runs'
            # bulk writes (tens of thousands of memories in a few agents' private scopes, of
            # the queries' own words) made every other agent's search read through them.
            written = Memory.objects.exclude(idempotency_key="")
            count = written.count()
            if count:
                written.delete()
            with connection.cursor() as cursor:  # what earlier runs left dead is not measured
                cursor.execute("VACUUM ANALYZE memories_memory")
            print(
                f"reusing the loaded data (the {count:,} memories earlier runs wrote deleted; "
                "vacuumed)",
                file=sys.stderr,
            )
            return tokens
    started = time.perf_counter()
    _, ddl = reset(0)
    tokens: dict[str, Any] = {"size": args.size}
    corpus, rng = Corpus(args.seed), np.random.default_rng(args.seed)
    for tenant, count, rows in (
        ("a", agents_needed, args.size),
        ("b", args.b_agents, args.size // 10),
    ):
        made = [
            agent_create(
                workspace_slug=f"tenant-{tenant}", name=f"agent-{n}", shared_scopes=[SHARED_SCOPE]
            )
            for n in range(count)
        ]
        tokens[tenant] = [token for _, token in made]
        scope = Scope.objects.get(workspace=made[0][0].workspace, name=SHARED_SCOPE)
        owner = SimpleNamespace(
            workspace_id=scope.workspace_id, private_scope_id=scope.pk, name="loader"
        )
        load(corpus, rng, rows, [owner])
    build_indexes(ddl, HNSW_EF_CONSTRUCTION)
    saved.write_text(json.dumps(tokens))
    print(f"loaded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return tokens


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(args: argparse.Namespace) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {
        **os.environ,
        "MM_DATA_DIR": str(args.data_dir.resolve()),
        "MM_RATE_PER_MINUTE": "0",
        # No scheduled consolidation run among the requests (on the loaded memories its first
        # one links and scores every one of them): benchmarks/consolidation.py measures it.
        "MM_CONSOLIDATE_EVERY": "0",
        "MM_LOG_LEVEL": "WARNING",
        # Every process signs the dashboard's sessions alike (many processes, one database).
        "MM_SECRET_KEY": "load-benchmark",
    }
    env.pop("DATABASE_URL", None)
    if args.database_url:
        env["DATABASE_URL"] = args.database_url
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "meaning_memory",
            "serve",
            "--port",
            str(port),
            "--web-workers",
            str(args.web_workers),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    while True:
        line = process.stdout.readline()
        lines.append(line)
        if "is serving on" in line:
            break
        if process.poll() is not None:
            raise SystemExit("serve did not start:\n" + "".join(lines))
    # Whatever it prints is drained (a full pipe would block it).

    def drain() -> None:
        for line in process.stdout:
            lines.append(line)

    threading.Thread(target=drain, daemon=True).start()
    return process, f"http://127.0.0.1:{port}"


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    throttled: int = 0
    error_samples: list[str] = field(default_factory=list)
    acknowledged: dict[str, str] = field(default_factory=dict)  # idempotency key -> mem_id
    measuring: bool = False
    answered: dict[str, int] = field(default_factory=dict)  # web process's URL -> answers
    answered_all: dict[str, int] = field(default_factory=dict)  # the same, window or not

    def record(self, op: str, seconds: float, base: str = "") -> None:
        self.answered_all[base] = self.answered_all.get(base, 0) + 1
        if self.measuring:
            self.latencies.setdefault(op, []).append(seconds)
            self.answered[base] = self.answered.get(base, 0) + 1

    def error(self, op: str, what: str) -> None:
        self.errors[op] = self.errors.get(op, 0) + 1
        if len(self.error_samples) < 5:
            self.error_samples.append(f"{op}: {what}")


class Agent:
    def __init__(
        self, client, base: str, token: str, words: list[str], seed: int | str, row: str = ""
    ) -> None:
        self.client, self.base = client, base
        self.headers = {"Authorization": f"Bearer {token}"}
        self.words = words
        self.rng = random.Random(seed)
        self.seen: list[str] = []
        self.written = 0
        self.name = f"{row}s{seed}"

    def query(self) -> str:
        return " ".join(self.rng.choices(self.words, k=self.rng.randint(2, 6)))

    def prepared(self, op: str) -> tuple[str, str, dict]:
        """The request of kind ``op`` (a search while nothing was seen to give feedback on):
        its kind, path and body."""
        if op == "feedback" and not self.seen:
            op = "search"
        if op == "search":
            return op, "/api/v1/search", {"query": self.query(), "limit": 10}
        if op == "remember":
            self.written += 1
            key = f"{RUN}-{self.name}-{self.written}"
            text = f"{self.query()} {self.query()} noted by {self.name} as item {self.written}."
            return op, "/api/v1/memories", {"text": text, "idempotency_key": key}
        mem_id = self.rng.choice(self.seen)
        body = {"action": "important", "reason": "it helped (load benchmark)"}
        return op, f"/api/v1/memories/{mem_id}/feedback", body

    def answered(self, op: str, payload: dict) -> None:
        """What a search's answer gives feedback to later."""
        if op == "search":
            self.seen = [hit["mem_id"] for hit in payload["results"][:5]] or self.seen

    async def request(self, tally: Tally, op: str) -> None:
        op, url, body = self.prepared(op)
        started = time.perf_counter()
        try:
            response = await self.client.post(self.base + url, json=body, headers=self.headers)
        except Exception as exc:  # no answer at all
            tally.error(op, repr(exc))
            return
        seconds = time.perf_counter() - started
        if response.status_code == 429:
            tally.throttled += 1
            return
        if response.status_code >= 300:
            tally.error(op, f"{response.status_code} {response.text[:200]}")
            return
        tally.record(op, seconds, self.base)
        self.answered(op, response.json())
        if op == "remember":
            tally.acknowledged[body["idempotency_key"]] = response.json()["mem_id"]


#: Requests of each kind that each of two agents sends to a web process before any row.
WARM_UP_ROUNDS = 3


async def warm_up(base: str, tokens: list[str], words: list[str], name: str) -> dict[str, str]:
    """Every kind of request, unmeasured, from two agents at once (a process's first requests
    of a kind, and its first concurrent ones, are slower than the rest); what the writes stored,
    to count them too."""
    import httpx

    tally = Tally()
    limits = httpx.Limits(keepalive_expiry=floods.KEEPALIVE_SECONDS)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        agents = [
            Agent(client, base, token, words, seed=i, row=f"{name}-")
            for i, token in enumerate(tokens)
        ]

        async def rounds(agent: Agent) -> None:
            for _ in range(WARM_UP_ROUNDS):
                for op, _ in MIX:
                    await agent.request(tally, op)

        await asyncio.gather(*(rounds(agent) for agent in agents))
    if tally.errors:
        raise SystemExit(f"the served engine failed its first requests: {tally.error_samples}")
    return tally.acknowledged


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000 if values else float("nan")


class CpuMeter:
    """CPU seconds (user + system) spent by each part of the served engine, and by this
    driver, between two readings: where a request's cost goes on this machine."""

    def __init__(self, serve_pids: list[int], data_dir: Path, embedded: bool = True) -> None:
        import psutil

        self.psutil = psutil
        self.serves = [psutil.Process(pid) for pid in serve_pids]
        self.pgdata = str((data_dir / "pg").resolve()) if embedded else None

    def _postgres(self) -> list:
        if self.pgdata is None:  # another server's: not this machine's to measure
            return []
        for process in self.psutil.process_iter(["name", "cmdline"]):
            cmdline = process.info["cmdline"] or []
            if process.info["name"] == "postgres" and self.pgdata in cmdline:
                return [process, *process.children()]
        return []

    def _parts(self) -> dict[str, list]:
        parts: dict[str, list] = {
            "web": [],
            "worker": [],
            "enricher": [],
            "postgres": self._postgres(),
        }
        for serve in self.serves:
            for child in serve.children():
                command = " ".join(child.cmdline())
                name = (
                    "web"
                    if "uvicorn" in command
                    else "enricher"
                    if " enrich " in f"{command} "
                    else "worker"
                )
                parts[name] += [child, *child.children(recursive=True)]
        parts["driver"] = [self.psutil.Process()]
        return parts

    def read(self) -> dict[str, dict[int, float]]:
        readings: dict[str, dict[int, float]] = {}
        for part, processes in self._parts().items():
            readings[part] = {}
            for process in processes:
                try:
                    times = process.cpu_times()
                except self.psutil.Error:  # gone between listing and reading
                    continue
                readings[part][process.pid] = times.user + times.system
        return readings

    @staticmethod
    def spent(before: dict, after: dict) -> dict[str, float]:
        """Seconds each part spent (a process started in between counts from zero; one that
        ended in between is not counted)."""
        return {
            part: sum(seconds - before.get(part, {}).get(pid, 0.0) for pid, seconds in now.items())
            for part, now in after.items()
        }


CPU_PARTS = ("web", "postgres", "enricher", "worker", "driver")


async def run_mix(
    bases: list[str],
    tokens: list[str],
    words: list[str],
    args,
    n: int,
    think: float,
    meter: CpuMeter,
    mix: tuple[tuple[str, float], ...] = MIX,
) -> dict:
    import httpx

    tally = Tally()
    limits = httpx.Limits(
        max_connections=n + 8,
        max_keepalive_connections=n + 8,
        keepalive_expiry=floods.KEEPALIVE_SECONDS,
    )
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        agents = [
            Agent(
                client,
                bases[i % len(bases)],
                tokens[i],
                words,
                # Every row's agents draw other words (a query asked again in a later row
                # would find its vector kept by the process).
                seed=f"p{think:g}-n{n}-{i}",
                row=f"p{think:g}-",
            )
            for i in range(n)
        ]
        ops, weights = zip(*mix, strict=True)
        stop = asyncio.Event()

        async def loop(agent: Agent) -> None:
            await asyncio.sleep(agent.rng.uniform(0, think))  # not all at the same instant
            while not stop.is_set():
                await agent.request(tally, agent.rng.choices(ops, weights)[0])
                if think:
                    await asyncio.sleep(think)

        tasks = [asyncio.create_task(loop(agent)) for agent in agents]
        await asyncio.sleep(args.warmup)
        lag_before = await asyncio.to_thread(lag.scrape, bases)
        tally.measuring = True
        started, cpu_before = time.perf_counter(), meter.read()
        await asyncio.sleep(args.seconds)
        tally.measuring = False
        elapsed, cpu_after = time.perf_counter() - started, meter.read()
        stop.set()
        await asyncio.gather(*tasks)
    done = sum(len(v) for v in tally.latencies.values())
    enrichment = await asyncio.to_thread(lag.lag_row, bases, lag_before)
    row: dict[str, Any] = {
        "think_s": think,
        "agents": n,
        "requests_per_s": done / elapsed,
        "requests": done,
        "errors": sum(tally.errors.values()),
        "throttled": tally.throttled,
        "error_samples": tally.error_samples,
        # Requests each web process answered in the window, in the order they were started;
        # and in the whole row (its warm-up and the requests in flight when it stopped too:
        # each of a process's agents is answered at least once, however slow the machine).
        "by_process": [tally.answered.get(base, 0) for base in bases],
        "by_process_in_row": [tally.answered_all.get(base, 0) for base in bases],
        # CPU ms per request answered, by part (requests in flight at either end of the
        # window make this a little high or low; 30 s of requests make it small).
        "cpu_ms_per_request": {
            part: seconds / done * 1000 if done else None
            for part, seconds in CpuMeter.spent(cpu_before, cpu_after).items()
        },
        "cpu_busy": sum(CpuMeter.spent(cpu_before, cpu_after).values())
        / elapsed
        / len(os.sched_getaffinity(0)),
        # From each write to its enrichment (the enricher's own record), over the row and
        # the time the enricher took after it to finish the row's writes.
        "enrichment": enrichment,
    }
    for op, _ in MIX:
        values = tally.latencies.get(op, [])
        row[op] = {
            "count": len(values),
            "p50_ms": percentile(values, 50),
            "p95_ms": percentile(values, 95),
            "p99_ms": percentile(values, 99),
        }
    return row, tally.acknowledged


#: What PostgreSQL counts of the memories table (cumulative but for ``n_dead_tup``).
ROW_COUNTS = ("n_tup_upd", "n_tup_hot_upd", "n_live_tup", "n_dead_tup")


def memory_row_counts() -> dict[str, int]:
    """PostgreSQL's counts of the memories table's rows: updated (HOT: without new index
    entries), live and dead versions. An update that is not HOT adds an entry to every
    index, the vector indexes too, and its old version stays in them until a vacuum: search
    pays for those."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.pg_version >= 150000:  # this process's own counts, now
            cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(
            f"SELECT {', '.join(ROW_COUNTS)} FROM pg_stat_user_tables "
            "WHERE relname = 'memories_memory'"
        )
        return dict(zip(ROW_COUNTS, cursor.fetchone(), strict=True))


def row_churn(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The run's updates of memory rows (the served processes' counts are flushed when they
    exit), and the dead versions the table holds at its end."""
    churn = {key: after[key] - before[key] for key in ("n_tup_upd", "n_tup_hot_upd")}
    return {**churn, "dead_at_end": after["n_dead_tup"], "live_at_end": after["n_live_tup"]}


def stored_writes(acknowledged: dict[str, str]) -> dict[str, Any]:
    """Every acknowledged write against the rows stored under its key."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT idempotency_key, mem_id FROM memories_memory WHERE idempotency_key LIKE %s",
            [RUN + "-%"],
        )
        rows = cursor.fetchall()
    stored: dict[str, list[str]] = {}
    for key, mem_id in rows:
        stored.setdefault(key, []).append(mem_id)
    lost = [key for key in acknowledged if key not in stored]
    wrong = [key for key in acknowledged if key in stored and stored[key] != [acknowledged[key]]]
    return {
        "acknowledged": len(acknowledged),
        "rows": len(rows),
        "lost": len(lost),
        "mismatched": len(wrong),
        "unacknowledged_rows": len(set(stored) - set(acknowledged)),
    }


def mix_table(rows: list[dict]) -> str:
    lines = [
        "| pause s | agents | requests/s | search p50 / p95 / p99 ms | remember p50 / p95 / p99 ms "
        "| feedback p50 / p95 / p99 ms | errors | 429s "
        "| enrichment lag p50 / p95 ms (enriched); pending at the end, s to finish |",
        "|---:|---:|---:|---|---|---|---:|---:|---|",
    ]
    for row in rows:
        cells = [
            " / ".join(f"{row[op][p]:.0f}" for p in ("p50_ms", "p95_ms", "p99_ms"))
            + f" ({row[op]['count']:,})"
            for op, _ in MIX
        ]
        lines.append(
            f"| {row['think_s']:g} | {row['agents']} | {row['requests_per_s']:.1f} "
            f"| {' | '.join(cells)} "
            f"| {row['errors']} | {row['throttled']} | {lag.cell(row.get('enrichment'))} |"
        )
    return "\n".join(lines)


def writes_table(row: dict) -> str:
    """One agent writing one memory after another."""
    writes = row["remember"]
    return "\n".join(
        [
            "| memories/s acknowledged | p50 / p95 / p99 ms | errors "
            "| enrichment lag p50 / p95 ms (enriched); pending at the end, s to finish "
            "| CPU ms a write: web / postgres / enricher / total |",
            "|---:|---|---:|---|---|",
            f"| {row['requests_per_s']:.1f} "
            f"| {writes['p50_ms']:.0f} / {writes['p95_ms']:.0f} / {writes['p99_ms']:.0f} "
            f"| {row['errors']} | {lag.cell(row['enrichment'])} "
            f"| {row['cpu_ms_per_request']['web']:.1f} / "
            f"{row['cpu_ms_per_request']['postgres']:.1f} / "
            f"{row['cpu_ms_per_request']['enricher']:.1f} / "
            f"{sum(row['cpu_ms_per_request'].values()):.1f} |",
        ]
    )


def cpu_table(rows: list[dict]) -> str:
    lines = [
        "| pause s | agents | requests/s | CPU ms per request: "
        + " | ".join(CPU_PARTS)
        + " | total | CPUs busy |",
        "|---:|---:|---:|" + "---:|" * (len(CPU_PARTS) + 2),
    ]
    for row in rows:
        spent = row["cpu_ms_per_request"]
        if not row["requests"]:
            cells = ["–"] * (len(CPU_PARTS) + 1)
        else:
            cells = [f"{spent[part]:.1f}" for part in CPU_PARTS] + [f"{sum(spent.values()):.1f}"]
        lines.append(
            f"| {row['think_s']:g} | {row['agents']} | {row['requests_per_s']:.1f} | "
            + " | ".join(cells)
            + f" | {row['cpu_busy']:.0%} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--agents", default="1,8,32,128")
    parser.add_argument("--think", default="0.25,0", help="pauses between requests, seconds")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--web-workers", type=int, default=1)
    parser.add_argument(
        "--web-processes", type=int, default=1, help="serve processes on the one database"
    )
    parser.add_argument(
        "--database-url",
        help="a PostgreSQL the benchmark may fill and empty (default: its own embedded one)",
    )
    parser.add_argument("--b-agents", type=int, default=4)
    parser.add_argument("--b-pause", type=float, default=0.1)
    parser.add_argument("--flood-agents", type=int, default=32)
    parser.add_argument(
        "--floods",
        default=",".join(floods.SHAPES),
        help=f"flood shapes of the two-tenant run, of {', '.join(floods.SHAPES)}",
    )
    parser.add_argument("--flood-threads", type=int, default=40, help="one agent's, in flight")
    parser.add_argument(
        "--flood-rounds", type=int, default=3, help="times tenant-b alone and every shape run"
    )
    parser.add_argument("--bulk-agents", type=int, default=4)
    parser.add_argument("--bulk-items", type=int, default=100)
    parser.add_argument("--no-tenants", action="store_true", help="skip the two-tenant run")
    parser.add_argument(
        "--no-writes-alone", action="store_true", help="skip the row of one agent writing"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, help="default benchmarks/out/load-data")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the loaded data of the same size (what earlier runs wrote deleted, vacuumed)",
    )
    parser.add_argument(
        "--breakdown",
        type=int,
        default=400,
        help="requests of the mix timed part by part before the served rows "
        "(benchmarks/breakdown.py; 0: none)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.size, args.agents, args.seconds, args.warmup = 1_000, "1,4", 2.0, 1.0
        args.flood_agents, args.b_agents = 4, 2
        args.flood_threads, args.bulk_agents, args.bulk_items = 8, 1, 10
        args.flood_rounds = 1
        args.breakdown = min(args.breakdown, 40)
        args.data_dir = args.data_dir or ROOT / "benchmarks" / "out" / "smoke-load"
    args.data_dir = args.data_dir or ROOT / "benchmarks" / "out" / "load-data"
    args.agents = [int(n) for n in args.agents.split(",")]
    args.think = [float(t) for t in args.think.split(",")]
    if min(args.agents) < 1 or args.size < 10 or args.seconds <= 0 or min(args.think) < 0:
        parser.error("--agents, --size and --seconds must be positive")
    if args.web_processes < 1:
        parser.error("--web-processes must be at least 1")
    if args.flood_rounds < 1:
        parser.error("--flood-rounds must be at least 1")
    args.floods = [name.strip() for name in args.floods.split(",") if name.strip()]
    if set(args.floods) - set(floods.SHAPES):
        parser.error(f"--floods: each of {', '.join(floods.SHAPES)}")

    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request
    setup_django(args.data_dir, args.database_url)
    from django.conf import settings
    from django.db import connections
    from search_latency import Corpus

    tokens = prepare(args)
    from django_q.models import OrmQ

    # Jobs an earlier run left queued (a consolidation run, heartbeats) would run among the
    # requests: this database is the benchmark's own.
    left, _ = OrmQ.objects.all().delete()
    if left:
        print(f"removed {left} jobs an earlier run left queued", file=sys.stderr)
    words = Corpus(args.seed).vocabulary[:2000]
    results: dict[str, Any] = {"mix": []}
    if args.breakdown:
        agent = Agent(None, "", tokens["a"][0], words, seed=args.seed, row="breakdown-")
        results["breakdown"] = breakdown.measure(agent, dict(MIX), args.breakdown)
        print(f"  breakdown: {args.breakdown} requests timed part by part", file=sys.stderr)
    connections.close_all()
    time.sleep(1)  # the loader's connections have ended: their counts are in the totals
    rows_before = memory_row_counts()
    connections.close_all()
    served = [serve(args) for _ in range(args.web_processes)]
    bases = [base for _, base in served]
    meter = CpuMeter([p.pid for p, _ in served], args.data_dir, embedded=not args.database_url)
    acknowledged: dict[str, str] = {}
    try:
        # The web process loads its models on first use: not inside any row's window.
        for index, base in enumerate(bases):
            acknowledged |= asyncio.run(warm_up(base, tokens["a"][:2], words, f"warm{index}"))
        for think in args.think:
            for n in args.agents:
                row, acked = asyncio.run(run_mix(bases, tokens["a"], words, args, n, think, meter))
                acknowledged |= acked
                results["mix"].append(row)
                print(
                    f"  pause {think:g} s, {n} agents: {row['requests_per_s']:.1f} requests/s",
                    file=sys.stderr,
                )
        if not args.no_writes_alone:
            row, acked = asyncio.run(
                run_mix(bases, tokens["a"], words, args, 1, 0.0, meter, mix=(("remember", 1.0),))
            )
            acknowledged |= acked
            results["writes_alone"] = row
            print(f"  writes one at a time: {row['requests_per_s']:.1f}/s", file=sys.stderr)
        if not args.no_tenants:
            results["tenants"], acked = asyncio.run(
                floods.run_floods(bases, tokens, words, args, Agent, Tally, RUN, percentile)
            )
            acknowledged |= acked
    finally:
        for process, _ in served:
            process.send_signal(signal.SIGINT)
        for process, _ in served:
            process.wait(60)
    results["writes"] = stored_writes(acknowledged)
    time.sleep(1)  # the statistics of the stopped processes reach the cumulative counts
    results["rows"] = row_churn(rows_before, memory_row_counts())
    connections.close_all()

    info = machine()
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(info))
    print(
        f"Served: `meaning-memory serve --web-workers {args.web_workers}`"
        + (f", {args.web_processes} of them on one database" if args.web_processes > 1 else "")
        + (" (a PostgreSQL of its own, over TCP)" if args.database_url else "")
        + f" on {args.size:,} "
        f"memories (tenant-a) and {args.size // 10:,} (tenant-b), MM_RATE_PER_MINUTE=0, "
        "MM_CONSOLIDATE_EVERY=0, "
        f"{args.seconds:g} s measured per row after {args.warmup:g} s of warm-up; "
        f"MM_FAIR_SLOTS={settings.MM_FAIR_SLOTS}, "
        f"MM_RATE_CONCURRENT={settings.MM_RATE_CONCURRENT}, "
        f"MM_DB_POOL_SIZE={settings.MM_DB_POOL_SIZE}.\n"
    )
    print(mix_table(results["mix"]))
    if args.web_processes > 1:
        print(
            "\nRequests answered by each web process: "
            + "; ".join(
                f"{row['agents']} agents (pause {row['think_s']:g} s): "
                + " / ".join(f"{count:,}" for count in row["by_process"])
                for row in results["mix"]
            )
        )
    print(
        "\nWhere the CPU went (user + system seconds of each part during the measured "
        f"window, per request answered; {len(os.sched_getaffinity(0))} CPUs):\n"
    )
    print(cpu_table(results["mix"]))
    if "writes_alone" in results:
        print(
            "\nOne agent writing one memory after another (no pause; each answered once it is "
            "stored and searchable, its enrichment after), "
            f"{args.seconds:g} s:\n"
        )
        print(writes_table(results["writes_alone"]))
    if "breakdown" in results:
        counts = results["breakdown"]["counts"]
        print(
            f"\nWhere a request's time goes in the web process (benchmarks/breakdown.py): "
            f"{sum(counts.values())} requests of the mix one at a time before the rows above "
            f"({', '.join(f'{n} {op}' for op, n in counts.items())}), through Django in the "
            "benchmark's process (no HTTP server); each part's own CPU (its callees' not "
            "included), ms per request of its kind and of the 70/25/5 mix; for SQL, the wall "
            "time beyond the client's CPU is PostgreSQL's (and the round trip):\n"
        )
        print(breakdown.table(results["breakdown"]))
        again = results["breakdown"]["again"]
        print(
            f"\nThe same {again['searches']:.0f} searches asked again (each query's vector kept "
            f"by the process): {again['again_cpu_ms']:.2f} ms of CPU a search, of it "
            f"{again['again_embedding_ms']:.2f} embedding; the first time "
            f"{again['first_cpu_ms']:.2f} and {again['first_embedding_ms']:.2f}."
        )
        enricher = results["breakdown"]["enricher"]
        parts = sorted(enricher["parts"].items(), key=lambda item: -item[1])
        print(
            f"\nThe enricher's work for each of the {enricher['writes']} writes, after its "
            f"answer (not in the table): {enricher['cpu_ms']:.2f} ms of CPU ("
            + ", ".join(f"{name} {ms:.2f}" for name, ms in parts)
            + ")."
        )
    writes = results["writes"]
    print(
        f"\nWrites: {writes['acknowledged']:,} acknowledged, {writes['rows']:,} rows stored with "
        f"their keys, {writes['lost']} lost, {writes['mismatched']} stored under another id, "
        f"{writes['unacknowledged_rows']} stored without an acknowledgement (a request cut "
        "at the end of a run).\n"
    )
    rows = results["rows"]
    print(
        f"Memory rows: {results['writes']['rows']:,} written and {rows['n_tup_upd']:,} updated in "
        f"this run ({rows['n_tup_hot_upd']:,} of the updates HOT, without new index entries); "
        f"at its end {rows['dead_at_end']:,} dead versions beside {rows['live_at_end']:,} live "
        "ones, until a vacuum.\n"
    )
    if "tenants" in results:
        print(floods.table(results["tenants"]))
    samples = [s for row in results["mix"] for s in row["error_samples"]]
    tenants = results.get("tenants", {"shapes": []})
    samples += [
        s
        for part in ("alone", "alone_after")
        for s in tenants.get(part, {}).get("error_samples", [])
    ]
    samples += [
        s for row in tenants["shapes"] for s in row["b"]["error_samples"] + row["error_samples"]
    ]
    if samples:
        print("\nFirst errors:\n" + "\n".join(f"- {s}" for s in samples[:10]))
    if args.json:
        payload = {"command": command, "machine": info, **results}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
