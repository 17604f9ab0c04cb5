"""The README's first command, end to end: serve on a fresh embedded database, create an agent,
remember and search over HTTP, then Ctrl-C stops the server, the worker and PostgreSQL: within
10 seconds, no process of its tree left (the worker's children and the database's included)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(url: str, token: str, body: dict) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def start_serve(data_dir: Path, port: int | None = None) -> tuple[subprocess.Popen, int]:
    port = port or free_port()
    server = start_serve_on(data_dir, port)
    serving(server, port)
    return server, port


def process_tree(server: subprocess.Popen, pgdata: Path) -> list[psutil.Process]:
    """serve, its children and theirs (web server, worker cluster), and the embedded
    PostgreSQL with its processes."""
    root = psutil.Process(server.pid)
    postmaster = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
    tree = [root, *root.children(recursive=True), postmaster, *postmaster.children()]
    assert len(tree) >= 8, tree  # serve, web, cluster and its workers; the database's own
    return tree


def still_running(processes: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.NoSuchProcess:
            pass
    return alive


def stop_and_wait(server: subprocess.Popen, tree, signals) -> tuple[str, float]:
    started = time.monotonic()
    for number, signum in enumerate(signals):
        if number:
            time.sleep(0.3)
        server.send_signal(signum)
    output, _ = server.communicate(timeout=60)
    while still_running(tree) and time.monotonic() - started < 10:
        time.sleep(0.05)
    return output, time.monotonic() - started


@pytest.mark.slow
def test_serve_remember_search_and_stop(tmp_path):
    server, port = start_serve(tmp_path / "data")
    tree = []
    try:
        tree = process_tree(server, tmp_path / "data" / "pg")
        env = {**os.environ, "MM_DATA_DIR": str(tmp_path / "data")}
        env.pop("DATABASE_URL", None)
        token = subprocess.run(
            [
                sys.executable,
                "-m",
                "meaning_memory",
                "createagent",
                "--workspace",
                "demo",
                "--name",
                "assistant",
                "-v0",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        base = f"http://127.0.0.1:{port}/api/v1"
        stored = call(f"{base}/memories", token, {"text": "Zephyr renews its contract in March."})
        found = call(f"{base}/search", token, {"query": "When does Zephyr renew?"})
        assert found["results"][0]["mem_id"] == stored["mem_id"]

        # The same server answers MCP clients at /mcp.
        from memories.tests.test_mcp import over_http

        async def search(session):
            return await session.call_tool("mm_search", {"query": "When does Zephyr renew?"})

        result = over_http(f"http://127.0.0.1:{port}", token, search)
        assert result.structured_content["results"][0]["mem_id"] == stored["mem_id"]
    finally:
        output, _ = stop_and_wait(server, tree, [signal.SIGINT])
    assert server.returncode == 0, output
    assert "No user yet: run `meaning-memory createsuperuser`" in output  # a first run's guide
    assert "Stopping" in output
    assert still_running(tree) == [], output
    assert not (tmp_path / "data" / "pg" / "postmaster.pid").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "signals",
    [[signal.SIGTERM], [signal.SIGINT, signal.SIGINT]],
    ids=["SIGTERM", "Ctrl-C twice"],
)
def test_a_stop_leaves_no_process_behind(tmp_path, signals):
    server, _ = start_serve(tmp_path / "data")
    try:
        tree = process_tree(server, tmp_path / "data" / "pg")
    except BaseException:
        server.kill()
        raise
    output, seconds = stop_and_wait(server, tree, signals)
    assert server.returncode == 0, output
    assert still_running(tree) == [], f"left after {seconds:.1f} s: {still_running(tree)}"
    assert "Traceback" not in output, output


@pytest.mark.slow
def test_serve_stops_with_the_reason_when_postgres_gets_sigill(tmp_path):
    """A server process killed by SIGILL (a build that does not fit this CPU) stops serve with
    one message that says so; nothing of its tree is left."""
    from meaning_memory.tests.test_embedded import connect, wait_for

    server, _ = start_serve(tmp_path / "data")
    pgdata = tmp_path / "data" / "pg"
    try:
        tree = process_tree(server, pgdata)

        def a_backend():
            with connect(pgdata) as conn:
                row = conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                    "AND backend_type = 'client backend' AND pid <> pg_backend_pid() LIMIT 1"
                ).fetchone()
            return row and row[0]

        os.kill(wait_for(a_backend, 30, "a connection of the worker"), signal.SIGILL)
        output, _ = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == 1, output
    assert "killed by SIGILL" in output and "does not fit this CPU" in output, output
    assert "terminated by signal 4: Illegal instruction" in output, output
    assert "Traceback" not in output, output
    deadline = time.monotonic() + 10
    while still_running(tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert still_running(tree) == []


def start_serve_on(data_dir: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "MM_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "meaning_memory", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def serving(server: subprocess.Popen, port: int) -> str:
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        lines.append(line)
        if "is serving on" in line or server.poll() is not None:
            break
    assert f"http://127.0.0.1:{port}/" in lines[-1], "".join(lines)
    return "".join(lines)


@pytest.mark.slow
def test_serve_killed_outright_leaves_no_process_and_serve_starts_again(tmp_path):
    """kill -9 of serve alone (its children lead groups of their own, so nothing reaches
    them): the web server, the worker's processes and the embedded PostgreSQL stop within
    seconds all the same, the web answers no more, and serve on the same port starts again."""
    data = tmp_path / "data"
    port = free_port()
    server = start_serve_on(data, port)
    again = None
    try:
        serving(server, port)
        tree = process_tree(server, data / "pg")
        workers = [p for p in tree[1:] if "qcluster" in " ".join(p.cmdline())]
        assert workers, tree
        server.kill()
        server.wait()
        deadline = time.monotonic() + 30
        while still_running(tree[1:]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert still_running(tree[1:]) == []
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
        again = start_serve_on(data, port)
        serving(again, port)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as answer:
            assert answer.status == 200
    finally:
        for process in (server, again):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGINT)
                process.communicate(timeout=60)
