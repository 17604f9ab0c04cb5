"""Many processes, one database (issue 22): a PostgreSQL server of its own reached over TCP with
a password, two web processes (``serve --no-worker`` on two ports) and two workers
(``qcluster``). Agents write and search through both web processes at once: every write
acknowledged is stored once, none is lost, and each process finds what the other stored.
Consolidation runs queued for several workspaces are spread over both workers: each runs once,
none twice at the same time, none fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from meaning_memory.tests.served import ROOT, engine_command, served
from meaning_memory.tests.standalone import Standalone

pytestmark = pytest.mark.slow

WORKSPACES = ("north", "south", "east", "west")
WRITES_PER_AGENT = 30


def run(env: dict[str, str], *args: str) -> str:
    return engine_command(env, *args).stdout


@pytest.fixture
def database(tmp_path):
    server = Standalone(tmp_path / "pg" / "primary").init()
    yield server
    server.stop("immediate")


def test_two_web_processes_and_two_workers_share_one_database(tmp_path, database):
    # One secret key for every process (a session signed by one is read by the other).
    shared = {"MM_CONSOLIDATE_EVERY": "0", "MM_SECRET_KEY": "many-processes-test-key"}
    web = [served(tmp_path / f"web{i}", database.url(), **shared) for i in (1, 2)]
    env = web[0].env
    run(env, "migrate", "-v0")
    tokens = {
        slug: run(env, "createagent", "--workspace", slug, "--name", "agent", "-v0").strip()
        for slug in WORKSPACES
    }
    workers, logs = [], []
    try:
        for engine in web:
            engine.start(180, "--no-worker")

        def writes(slug: str) -> list[tuple[int, str]]:
            """An agent's writes, each to one web process or the other, each once by key."""
            answers = []
            for i in range(WRITES_PER_AGENT):
                engine = web[i % 2]
                body = {
                    "text": f"{slug} note {i}: the {slug} office renews its lease in month {i}.",
                    "idempotency_key": f"{slug}-{i}",
                }
                answer = engine.call("POST", "/api/v1/memories", tokens[slug], body)
                answers.append((answer.status, answer.body.get("mem_id", "")))
            return answers

        with ThreadPoolExecutor(max_workers=len(WORKSPACES)) as pool:
            written = dict(zip(WORKSPACES, pool.map(writes, WORKSPACES), strict=True))
        for slug, answers in written.items():
            assert [status for status, _ in answers] == [201] * WRITES_PER_AGENT, slug
            assert len({mem_id for _, mem_id in answers}) == WRITES_PER_AGENT
        # Each process finds what the other stored; a retried write is stored once, on either.
        for slug in WORKSPACES:
            for engine in web:
                found = engine.call(
                    "POST", "/api/v1/search", tokens[slug], {"query": f"{slug} lease", "limit": 50}
                )
                assert found.status == 200
                assert {h["mem_id"] for h in found.body["results"]} == {
                    mem_id for _, mem_id in written[slug]
                }
            retried = {"text": "x", "idempotency_key": f"{slug}-0"}
            again = web[1].call("POST", "/api/v1/memories", tokens[slug], retried)
            assert (again.status, again.body["mem_id"]) == (200, written[slug][0][1])

        # Two workers (each logs the tasks it takes); a run queued per workspace through
        # either web process.
        logs = [(tmp_path / f"worker{i}.log").open("w") for i in (1, 2)]
        workers = [
            subprocess.Popen(
                [sys.executable, "-m", "meaning_memory", "qcluster"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            for log in logs
        ]
        # Both clusters up before anything is queued, so that either may take the first run.
        deadline = time.monotonic() + 180
        while not all(
            "Q Cluster" in text and "running." in text
            for text in ((tmp_path / f"worker{i}.log").read_text() for i in (1, 2))
        ):
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.5)
        runs = {}
        for i, slug in enumerate(WORKSPACES):
            answer = web[i % 2].call("POST", "/api/v1/consolidate", tokens[slug], {})
            assert answer.status == 202, answer.body
            runs[slug] = answer.body["run_id"]
        deadline = time.monotonic() + 600
        states = {}
        while time.monotonic() < deadline:
            states = {
                slug: web[0].call("GET", f"/api/v1/consolidate/{run_id}", tokens[slug]).body
                for slug, run_id in runs.items()
            }
            if all(state["status"] in ("done", "failed") for state in states.values()):
                break
            time.sleep(2)
        assert {slug: state["status"] for slug, state in states.items()} == dict.fromkeys(
            WORKSPACES, "done"
        ), states
    finally:
        for worker in workers:
            os.killpg(worker.pid, 2)
        for worker in workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, 9)
        for engine in web:
            engine.stop()
        for log in logs:
            log.close()

    # Each worker took runs: the queue spread them over both.
    taken = [
        sum(
            "processing" in line and "run_consolidation" in line
            for line in (tmp_path / f"worker{i}.log").read_text().splitlines()
        )
        for i in (1, 2)
    ]
    assert sum(taken) == len(WORKSPACES) and min(taken) >= 1, taken
    # What the database says: each run executed by one worker once, every write there once.
    with database.connect() as connection:
        rows = connection.execute(
            "SELECT func, args, success FROM django_q_task WHERE func LIKE %s",
            ["consolidation.tasks.run_consolidation"],
        ).fetchall()
        assert len(rows) == len(WORKSPACES) and all(success for *_, success in rows), rows
        counted = dict(
            connection.execute(
                "SELECT w.slug, count(*) FROM memories_memory m "
                "JOIN memories_workspace w ON w.id = m.workspace_id GROUP BY w.slug"
            ).fetchall()
        )
        assert counted == dict.fromkeys(WORKSPACES, WRITES_PER_AGENT)
        duplicated = connection.execute(
            "SELECT count(*) FROM (SELECT scope_id, idempotency_key FROM memories_memory "
            "GROUP BY 1, 2 HAVING count(*) > 1) AS twice"
        ).fetchone()[0]
        assert duplicated == 0
    assert all(state["counts"]["compile"]["agents"] == 1 for state in states.values())


def test_the_load_benchmark_split_across_two_web_processes(tmp_path, database):
    """``benchmarks/load.py`` (its smoke size) against two ``serve`` processes, each with its
    worker, on the server of its own: no request fails, both processes answer, and every write
    acknowledged is stored once under its key."""
    with database.connect("postgres") as connection:
        connection.execute("CREATE DATABASE load")
    out = tmp_path / "load.json"
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/load.py",
            "--smoke",
            "--web-processes",
            "2",
            "--database-url",
            database.url("load"),
            "--data-dir",
            str(tmp_path / "load-data"),
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(out.read_text())
    for row in figures["mix"]:
        assert row["errors"] == 0, row["error_samples"]
        if row["agents"] > 1:
            # Counted over the whole row, not its two-second window: every agent is answered
            # at least once there, so a slow machine cannot make this fail; a process that
            # answers nothing (or an agent dealt to no process) still does.
            assert len(row["by_process_in_row"]) == 2, row
            assert min(row["by_process_in_row"]) > 0, row
    tenants = figures["tenants"]
    assert tenants["alone"]["errors"] == tenants["alone_after"]["errors"] == 0
    assert [row["shape"] for row in tenants["shapes"]] == [
        "agents", "threads", "long", "huge", "bulk"
    ]  # fmt: skip
    for row in tenants["shapes"]:
        assert row["b"]["errors"] == row["flood_errors"] == 0, row
        assert row["b"]["searches"] > 0, row
    assert tenants["shapes"][-1]["flood_served_per_s"] > 0  # the bulk writes were stored
    writes = figures["writes"]
    assert writes["acknowledged"] > 0
    assert writes["lost"] == writes["mismatched"] == 0, writes
