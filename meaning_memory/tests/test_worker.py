"""The background worker (django-q2's cluster) as a real process: its connections to the broker
survive being closed by the server (an idle timeout, a restart, ``pg_terminate_backend``), the
next task still runs, and nothing is logged above INFO. It runs at a lower CPU priority than
the web, and so do the embedded server's backends it connects to (``meaning_memory.priority``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
import pytest

from meaning_memory.tests.test_embedded import (  # noqa: F401 (the fixture is used by name)
    _no_server_left,
    connect,
    engine,
    engine_env,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def enqueue(data: Path) -> str:
    return (
        engine(
            data,
            "shell",
            "-c",
            "from django_q.tasks import async_task\n"
            "print(async_task('memories.tasks.sync_workspace_indexes'))",
        )
        .stdout.strip()
        .splitlines()[-1]
    )


def succeeded(pgdata: Path, task_id: str) -> bool:
    try:
        with connect(pgdata) as conn:
            row = conn.execute(
                "SELECT success FROM django_q_task WHERE id = %s", [task_id]
            ).fetchone()
    except (OSError, psycopg.OperationalError):  # the server is (re)starting
        return False
    return bool(row and row[0])


def backend_niceness(pgdata: Path) -> tuple[int, dict[int, int]]:
    """This connection's backend's niceness, and every other client backend's."""
    with connect(pgdata) as conn:
        mine = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        pids = [
            pid
            for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
        ]
        return psutil.Process(mine).nice(), {pid: psutil.Process(pid).nice() for pid in pids}


def test_the_worker_survives_its_connections_being_closed(tmp_path):
    data = tmp_path / "data"
    pgdata = data / "pg"
    engine(data, "migrate", "--no-input")
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "meaning_memory", "qcluster"],
            cwd=ROOT,
            # WARNING: only a warning or an error would be printed, so any line is a failure.
            env=engine_env(data, MM_LOG_LEVEL="WARNING"),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        first = enqueue(data)
        wait_for(lambda: succeeded(pgdata, first), 60, "the first task")
        # MM_WORKER_NICE's default (10 above this test's own niceness): the cluster, its
        # forked processes and their backends; this test's own backend keeps the server's.
        cluster = psutil.Process(worker.pid)
        lowered = min(19, psutil.Process().nice() + 10)
        assert {p.nice() for p in [cluster, *cluster.children(recursive=True)]} == {lowered}
        mine, theirs = backend_niceness(pgdata)
        assert mine < lowered and len(theirs) >= 2 and set(theirs.values()) == {lowered}, theirs

        with connect(pgdata) as conn:
            closed = conn.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend'"
            ).fetchone()[0]
        assert closed >= 2  # the broker's (pusher) and the worker's connections at least
        time.sleep(1)  # the pusher polls the broker meanwhile, on a closed connection

        second = enqueue(data)
        wait_for(lambda: succeeded(pgdata, second), 60, "the task after the connections closed")
        mine, theirs = backend_niceness(pgdata)  # the new connections' backends too
        assert mine < lowered and theirs and set(theirs.values()) == {lowered}, theirs
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    printed = log.read_text()
    assert printed.strip() == "", printed


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_worker_stops_on_a_signal_to_its_first_process_alone(tmp_path, signum):
    """A worker left without serve (its parent killed) is stopped as any process is: one
    SIGTERM or SIGINT to the process that was started, and every process it forked ends."""
    data = tmp_path / "data"
    engine(data, "migrate", "--no-input")
    worker = subprocess.Popen(
        [sys.executable, "-m", "meaning_memory", "qcluster"],
        cwd=ROOT,
        env=engine_env(data),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        first = enqueue(data)
        wait_for(lambda: succeeded(data / "pg", first), 60, "the first task")
        processes = [psutil.Process(worker.pid), *psutil.Process(worker.pid).children(True)]
        assert len(processes) >= 4, processes  # the cluster, its sentinel, workers, monitor
        os.kill(worker.pid, signum)
        worker.wait(timeout=30)
        gone, alive = psutil.wait_procs(processes, timeout=15)
        assert alive == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
