"""The memory of a served engine under repeated bulk writes and searches: does it level off?

    python benchmarks/memory.py [--rounds 20] [--bulk-items 1000] [--parallel 3] [--json OUT]

Starts ``meaning-memory serve`` as a subprocess, on a fresh data directory of its own (a
temporary directory, removed at the end; never ``DATABASE_URL`` or the developer's
``MM_DATA_DIR``), creates an agent with ``createagent``, then runs rounds. Each round sends
``--parallel`` bulk writes of ``--bulk-items`` memories at once (``POST /api/v1/memories/bulk``),
then ``--searches`` searches (``POST /api/v1/search``, ``--parallel`` at a time), and reads the
resident set size (RSS) of the two processes ``serve`` started, each with its own children: the
web server (uvicorn) and the worker (the django-q2 cluster, whose forked processes share pages
with it, so their sum counts those pages more than once).

Texts: runs of consecutive LoCoMo dialogue turns (``--data``; ``"<speaker>: <turn>"`` a line)
cut at a word to a length drawn log-uniformly between ``SHORTEST`` and ``LONGEST``
characters, from a random turn of a random conversation, each with its serial number appended
so that every text is distinct (the engine stores an exact repeat once). Queries: the
LoCoMo questions, in a shuffled order. Everything is drawn from ``--seed``: two runs send the
same requests in the same order.

RSS is printed, never asserted. The verdict line takes the web server's median growth a round
over the second half of the rounds: it levels off when that trend, over those rounds, stays under
``LEVEL_SHARE`` of its RSS halfway. ``--report`` prints a saved run's report again.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import math
import os
import random
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
from common import ROOT, add_smoke_option, describe, machine, setup_django

from readiness.locomo import read

SHORTEST, LONGEST = 200, 3_000
#: The web server's trend over the second half of the rounds (its median growth a round times
#: those rounds), as a share of its RSS halfway, below which its memory is said to level off.
LEVEL_SHARE = 0.05
#: Variables of the environment (inherited by the server) that change how it uses memory.
MEMORY_VARIABLES = (
    "MALLOC_ARENA_MAX",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_MMAP_THRESHOLD_",
    "MM_EMBEDDER_THREADS",
    "MM_WORKERS",
    "MM_DB_POOL_SIZE",
)
START_TIMEOUT_S = 300
REQUEST_TIMEOUT_S = 3_600
RETRIES = 1_000


class Server:
    """``meaning-memory serve`` on a free port and its own data directory; its output is kept
    (the last lines, shown if it fails) so that the pipe never fills."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.env = {**os.environ, "MM_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}
        self.env.pop("DATABASE_URL", None)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.output: collections.deque[str] = collections.deque(maxlen=40)
        self.refused: collections.Counter[int] = collections.Counter()
        self.lock = threading.Lock()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "meaning_memory", "serve", "--port", str(self.port)],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        serving = threading.Event()
        threading.Thread(target=self._follow, args=(serving,), daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not serving.wait(0.2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit("serve did not start:\n" + "".join(self.output))

    def _follow(self, serving: threading.Event) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            if "is serving on" in line:
                serving.set()

    def manage(self, *args: str) -> str:
        """A management command on the same data directory; its standard output."""
        return subprocess.run(
            [sys.executable, "-m", "meaning_memory", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    def post(self, path: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST as a client should: a 429 or 503 is retried after its Retry-After (and
        counted in ``self.refused``)."""
        data = json.dumps(body).encode()
        for _ in range(RETRIES):
            request = urllib.request.Request(
                f"http://127.0.0.1:{self.port}/api/v1/{path}",
                data=data,
                method="POST",
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                if exc.code not in (429, 503):
                    raise
                with self.lock:
                    self.refused[exc.code] += 1
                    if self.refused[exc.code] == 1:
                        detail = exc.read()[:300].decode(errors="replace")
                        print(f"  first {exc.code}: {detail}", file=sys.stderr, flush=True)
                time.sleep(max(1, int(exc.headers.get("Retry-After") or 1)))
        raise SystemExit(f"{path}: still refused after {RETRIES} tries")

    def rss_mb(self) -> dict[str, float]:
        """RSS of the web server and of the worker, each summed over its process tree."""
        found: dict[str, float] = {}
        for child in psutil.Process(self.process.pid).children():
            command = " ".join(child.cmdline())
            name = "web" if "uvicorn" in command else "worker" if "qcluster" in command else ""
            if not name:
                continue
            total = 0
            for process in [child, *child.children(recursive=True)]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    total += process.memory_info().rss
            found[name] = total / 2**20
        return found

    def stop(self) -> None:
        """Ctrl-C, as a person stops it (serve stops its children and the database)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Texts:
    """The memories and queries the rounds send (see the module docstring)."""

    def __init__(self, path: Path, seed: int) -> None:
        conversations = read(path)
        self.turns = [
            [" ".join(f"{t.speaker}: {t.text}".split()) for t in c.turns] for c in conversations
        ]
        self.queries = [q.text for c in conversations for q in c.questions]
        self.rng = random.Random(seed)
        self.rng.shuffle(self.queries)
        self.serial = 0
        self.asked = 0

    def memory(self) -> str:
        turns = self.turns[self.rng.randrange(len(self.turns))]
        length = round(math.exp(self.rng.uniform(math.log(SHORTEST), math.log(LONGEST))))
        start = self.rng.randrange(len(turns))
        lines: list[str] = []
        while sum(len(line) + 1 for line in lines) < length:
            lines.append(turns[(start + len(lines)) % len(turns)])
        text = "\n".join(lines)
        if len(text) > length:
            text = text[: text.rfind(" ", 0, length) + 1 or length].rstrip()
        self.serial += 1
        return f"{text} ({self.serial})"

    def query(self) -> str:
        self.asked += 1
        return self.queries[(self.asked - 1) % len(self.queries)]


def run_round(
    server: Server, token: str, texts: Texts, args: argparse.Namespace
) -> dict[str, float]:
    """One round; returns what it stored, how long its writes and searches took, and how many
    requests were refused (429, 503) and sent again."""
    bulks = [
        {"memories": [{"text": texts.memory()} for _ in range(args.bulk_items)]}
        for _ in range(args.parallel)
    ]
    queries = [{"query": texts.query(), "limit": 10} for _ in range(args.searches)]
    refused = server.refused.total()
    with ThreadPoolExecutor(args.parallel) as pool:
        started = time.perf_counter()
        answers = list(pool.map(lambda body: server.post("memories/bulk", token, body), bulks))
        write_s = time.perf_counter() - started
        started = time.perf_counter()
        found = list(pool.map(lambda body: server.post("search", token, body), queries))
        search_s = time.perf_counter() - started
    stored = sum(answer["stored"] for answer in answers)
    if any(not answer["results"] for answer in found):
        raise SystemExit("a search found nothing: the memories were not stored as expected")
    return {
        "stored": stored,
        "write_s": write_s,
        "search_s": search_s,
        "refused": server.refused.total() - refused,
    }


def verdict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The web server's growth over the second half of the rounds: from the round halfway to
    the last, and the median growth a round times those rounds (a trend that one round's
    drop, when the allocator gives memory back, does not hide)."""
    half = rows[(len(rows) - 1) // 2 :]
    steps = [b["web_mb"] - a["web_mb"] for a, b in zip(half, half[1:], strict=False)]
    step = statistics.median(steps) if steps else 0.0
    return {
        "from_round": half[0]["round"],
        "to_round": half[-1]["round"],
        "growth_mb": half[-1]["web_mb"] - half[0]["web_mb"],
        "median_step_mb": step,
        "trend_mb": step * len(steps),
        "trend_share": step * len(steps) / half[0]["web_mb"],
        "total_growth_mb": half[-1]["web_mb"] - rows[0]["web_mb"],
        "levels_off": step * len(steps) / half[0]["web_mb"] < LEVEL_SHARE,
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| round | memories stored | web RSS MB | worker RSS MB | writes s | searches s "
        "| refused, sent again |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['round']} | {r['memories']:,} | {r['web_mb']:,.0f} | {r['worker_mb']:,.0f} | "
        f"{r['write_s']:.1f} | {r['search_s']:.1f} | {r['refused']} |"
        for r in rows
    ]
    return "\n".join(lines)


def describe_machine(data_dir: Path) -> dict[str, Any]:
    """``common.machine()`` through a connection of this process to the server's database,
    closed and detached afterwards (the database stops with ``serve``)."""
    from django.db import connections

    setup_django(data_dir)
    from meaning_memory.embedded import configured_server

    info = machine()
    connections.close_all()
    database = configured_server()
    if database is not None:
        database.release()
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--bulk-items", type=int, default=1_000, help="memories per bulk write")
    parser.add_argument("--parallel", type=int, default=3, help="bulk writes sent at once")
    parser.add_argument("--searches", type=int, default=100, help="searches per round")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared/data/locomo/locomo_dev7.json"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--report", type=Path, help="print the report of a run saved with --json, and stop"
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.report:
        print(report(json.loads(args.report.read_text())))
        return
    if args.smoke:
        args.rounds, args.bulk_items, args.parallel, args.searches = 2, 20, 2, 5
    if min(args.rounds, args.bulk_items, args.parallel, args.searches) < 1:
        parser.error("--rounds, --bulk-items, --parallel and --searches must be positive")

    texts = Texts(args.data, args.seed)
    with tempfile.TemporaryDirectory(prefix="mm-memory-", ignore_cleanup_errors=True) as tmp:
        data_dir = Path(tmp) / "data"
        server = Server(data_dir)
        try:
            token = server.manage("createagent", "--workspace", "bench", "--name", "bench", "-v0")
            info = describe_machine(data_dir)
            rows = [{"round": 0, "memories": 0, "write_s": 0.0, "search_s": 0.0, "refused": 0}]
            rows[0] |= {f"{name}_mb": mb for name, mb in server.rss_mb().items()}
            for number in range(1, args.rounds + 1):
                done = run_round(server, token, texts, args)
                row = {"round": number, "memories": rows[-1]["memories"] + done["stored"]}
                row |= {key: done[key] for key in ("write_s", "search_s", "refused")}
                row |= {f"{name}_mb": mb for name, mb in server.rss_mb().items()}
                rows.append(row)
                print(
                    f"  round {number}: {row['memories']:,} memories, web {row['web_mb']:,.0f} "
                    f"MB, worker {row['worker_mb']:,.0f} MB",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            server.stop()

    payload = {
        "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
        "machine": info,
        "environment": {k: os.environ[k] for k in MEMORY_VARIABLES if k in os.environ},
        "options": {k: v for k, v in vars(args).items() if k not in ("json", "data", "report")},
        "rounds": rows,
        "verdict": verdict(rows),
    }
    print(report(payload))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


def report(payload: dict[str, Any]) -> str:
    """What a run prints: how it ran, on what, the table of rounds and the verdict."""
    options, found = payload["options"], verdict(payload["rounds"])
    environment = ", ".join(f"{k}={v}" for k, v in payload["environment"].items())
    return "\n".join(
        [
            f"\n`{payload['command']}`\n",
            describe(payload["machine"]),
            f"Each round: {options['parallel']} bulk writes of {options['bulk_items']:,} "
            f"memories at once ({SHORTEST:,}-{LONGEST:,} characters each), then "
            f"{options['searches']} searches, {options['parallel']} at a time. Environment: "
            f"{environment or 'nothing set that changes it'}.\n",
            table(payload["rounds"]),
            f"\nWeb server RSS from round {found['from_round']} to round {found['to_round']}: "
            f"{found['growth_mb']:+,.0f} MB; a median of {found['median_step_mb']:+,.1f} MB a "
            f"round, {found['trend_mb']:+,.0f} MB over those rounds ({found['trend_share']:+.1%}"
            f" of its RSS in round {found['from_round']}); {found['total_growth_mb']:+,.0f} MB "
            "since it started: "
            + (
                "levels off."
                if found["levels_off"]
                else f"still growing (a trend of {LEVEL_SHARE:.0%} or more)."
            ),
        ]
    )


if __name__ == "__main__":
    main()
