"""A consolidation run executed by a real django-q2 worker, killed (``kill -9``) in the middle
of its threads phase: what its finished batches stored is kept, nothing is half-written, the
workspace is not left locked, and the next run goes on from the watermark and finishes with
every memory placed once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

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
MEMORIES = 3_000

pytestmark = pytest.mark.slow

#: Memories written straight into the table (random vectors under the local model's name, texts
#: of a few words from a small vocabulary, so the threads phase has work for many batches).
SEED = f"""
import numpy as np
from django.utils import timezone
from memories.embeddings import current_model_name
from memories.models import Memory
from memories.services import agent_create
agent, _ = agent_create(workspace_slug="acme", name="alice")
rng = np.random.default_rng(7)
syllables = ["ka", "lo", "mi", "ru", "te", "sa", "po", "ne"]
words = [a + b + c for a in syllables for b in syllables for c in syllables][:400]
now = timezone.now()
rows = []
for i in range({MEMORIES}):
    vector = rng.normal(size=384)
    rows.append(Memory(
        workspace=agent.workspace, scope=agent.private_scope, memory_type="episodic",
        text="note " + " ".join(rng.choice(words, 6)), created_at=now,
        session=f"s{{i // 50}}", embedding=vector / np.linalg.norm(vector),
        embedding_model=current_model_name(),
    ))
Memory.objects.bulk_create(rows, batch_size=2000)
"""
START = """
from django_q.tasks import async_task
from consolidation.services import consolidation_start
from consolidation.tasks import RUN
from memories.models import Workspace
run = consolidation_start(workspace=Workspace.objects.get(slug="acme"), trigger="command",
                          phases=["threads"])
async_task(RUN, run.pk)
print(run.run_id)
"""


def query(pgdata: Path, sql: str):
    with connect(pgdata) as conn:
        return conn.execute(sql).fetchone()


def ready(pgdata: Path) -> bool:
    try:
        return query(pgdata, "SELECT true")[0]
    except (OSError, psycopg.OperationalError):
        return False


HOLD = "from django.db import connection; connection.ensure_connection(); "
HOLD += "import time; time.sleep(900)"


def hold_server(data: Path) -> subprocess.Popen:
    """A process attached to the embedded server for the whole test, so that it keeps running
    while workers come and go (the last process attached stops it)."""
    holder = subprocess.Popen(
        [sys.executable, "-m", "meaning_memory", "shell", "-c", HOLD],
        cwd=ROOT,
        env=engine_env(data),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_for(lambda: ready(data / "pg"), 120, "the embedded server")
    return holder


def start_worker(data: Path, log: Path) -> subprocess.Popen:
    with log.open("a") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "meaning_memory", "qcluster"],
            cwd=ROOT,
            env=engine_env(data, MM_OPEN_THREADS="true"),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(worker: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
        try:
            worker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def test_a_worker_killed_mid_run_loses_nothing_and_the_next_run_goes_on(tmp_path):
    data = tmp_path / "data"
    pgdata = data / "pg"
    engine(data, "migrate", "--no-input")
    engine(data, "shell", "-c", SEED)
    holder = hold_server(data)
    try:
        check_the_killed_run(data, pgdata, tmp_path / "worker.log")
    finally:
        stop(holder)


def check_the_killed_run(data: Path, pgdata: Path, log: Path) -> None:
    first = engine(data, "shell", "-c", START, MM_OPEN_THREADS="true").stdout.split()[-1]
    worker = start_worker(data, log)
    try:
        # Killed once some batches are stored and before the phase ends.
        wait_for(
            lambda: (
                (
                    query(
                        pgdata,
                        "SELECT coalesce(max(through_id), 0) FROM "
                        "consolidation_phasewatermark WHERE phase = 'threads'",
                    )
                    or (0,)
                )[0]
                > 0
            ),
            240,
            "the first batches",
        )
        stop(worker, signal.SIGKILL)
    finally:
        stop(worker)
    run = query(
        pgdata, f"SELECT status FROM consolidation_consolidationrun WHERE run_id = '{first}'"
    )
    assert run == ("running",), "the run ended before it was killed: give it more memories"
    mark, placed, above = query(
        pgdata,
        "SELECT w.through_id, (SELECT count(*) FROM memories_threadmember), "
        "(SELECT count(*) FROM memories_threadmember t WHERE t.memory_id > w.through_id) "
        "FROM consolidation_phasewatermark w WHERE w.phase = 'threads'",
    )
    below = query(pgdata, f"SELECT count(*) FROM memories_memory WHERE id <= {mark}")[0]
    # Each whole batch is in; nothing of the batch that was cut short.
    assert placed == below and above == 0 and mark > 0

    # The next run: the dead one is marked failed (its lock went with its connection).
    second = engine(data, "shell", "-c", START, MM_OPEN_THREADS="true").stdout.split()[-1]
    assert query(
        pgdata, f"SELECT status, error FROM consolidation_consolidationrun WHERE run_id = '{first}'"
    ) == ("failed", "its process ended before the run finished")
    worker = start_worker(data, log)
    try:
        wait_for(
            lambda: query(
                pgdata,
                f"SELECT status IN ('done', 'failed') FROM consolidation_consolidationrun "
                f"WHERE run_id = '{second}'",
            )[0],
            300,
            "the second run",
        )
    finally:
        stop(worker)
    status, counts = query(
        pgdata,
        f"SELECT status, counts FROM consolidation_consolidationrun WHERE run_id = '{second}'",
    )
    counts = counts if isinstance(counts, dict) else json.loads(counts)
    assert status == "done"
    assert counts["threads"]["read_after_id"] == mark
    assert counts["threads"]["memories"] == MEMORIES - below
    total, distinct = query(
        pgdata, "SELECT count(*), count(DISTINCT memory_id) FROM memories_threadmember"
    )
    assert total == distinct == MEMORIES
