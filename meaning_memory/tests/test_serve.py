"""The README's first command, end to end: serve on a fresh embedded database, create an agent,
remember and search over HTTP, then Ctrl-C stops the server, the worker and PostgreSQL."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

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


@pytest.mark.slow
def test_serve_remember_search_and_stop(tmp_path):
    env = {**os.environ, "MM_DATA_DIR": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "meaning_memory", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            lines.append(line)
            if "is serving on" in line or server.poll() is not None:
                break
        assert f"http://127.0.0.1:{port}/" in lines[-1], "".join(lines)

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

        async def search(session):  # type: ignore[no-untyped-def]
            return await session.call_tool("mm_search", {"query": "When does Zephyr renew?"})

        result = over_http(f"http://127.0.0.1:{port}", token, search)
        assert result.structured_content["results"][0]["mem_id"] == stored["mem_id"]
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=60)
    assert server.returncode == 0, output
    assert "Stopping" in output
    pgdata = tmp_path / "data" / "pg"
    deadline = time.monotonic() + 20
    while (pgdata / "postmaster.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not (pgdata / "postmaster.pid").exists(), "embedded PostgreSQL still running"
