"""A served engine for tests with real processes: ``meaning-memory serve`` on a data directory of
its own (embedded PostgreSQL unless a ``DATABASE_URL`` is given), agents made with
``createagent``, and plain HTTP calls that return what came back, errors included."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: dict

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


@dataclass
class Served:
    data_dir: Path
    env: dict[str, str]
    #: The Python that runs the engine, and where: this one in the clone, or another
    #: environment's anywhere (an installed package).
    python: str = sys.executable
    cwd: Path = ROOT
    port: int = 0
    process: subprocess.Popen | None = None
    output: list[str] = field(default_factory=list)
    _reader: threading.Thread | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pg"

    def start(self, timeout: float = 180, *options: str) -> Served:
        self.port = free_port()
        self.output = []
        self.process = subprocess.Popen(
            [self.python, "-m", "meaning_memory", "serve", "--port", str(self.port), *options],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            self.output.append(line)
            if "is serving on" in line or self.process.poll() is not None:
                break
        if "is serving on" not in self.output[-1]:
            self.stop()
            raise AssertionError("serve did not start:\n" + "".join(self.output))
        # Keep reading what it prints (every request's log line), or its pipe fills and blocks it.
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        for line in self.process.stdout:
            self.output.append(line)

    def stop(self) -> str:
        """Ctrl-C, and everything it printed since it started."""
        if self.process is None:
            return ""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self._reader is not None:
            self._reader.join(10)
        return "".join(self.output)

    def command(self, *args: str) -> str:
        return subprocess.run(
            [self.python, "-m", "meaning_memory", *args],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        ).stdout

    def agent(self, workspace: str, name: str) -> str:
        """A new agent's token."""
        return self.command("createagent", "--workspace", workspace, "--name", name, "-v0").strip()

    def call(
        self, method: str, path: str, token: str | None = None, body: dict | None = None
    ) -> Answer:
        return call(self.base + path, method, token, body)


def engine_command(
    env: dict[str, str], *args: str, check: bool = True, cwd: Path = ROOT, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``meaning-memory <args>`` in a process of its own with ``env``, run from ``cwd`` (the
    clone, or another release's files); with ``check``, an AssertionError carrying what it
    printed when it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "meaning_memory", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{args} failed:\n{done.stdout}\n{done.stderr}")
    return done


def served(data_dir: Path, database_url: str | None = None, **settings: str) -> Served:
    """An engine not yet started, on ``data_dir`` (and ``database_url`` if given)."""
    env = {**os.environ, "MM_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1", **settings}
    env.pop("DATABASE_URL", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    return Served(data_dir=data_dir, env=env)


def call(
    url: str,
    method: str = "GET",
    token: str | None = None,
    body: dict | None = None,
    timeout: float = 60,
) -> Answer:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers=headers,
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw, status, got = response.read(), response.status, response.headers
    except urllib.error.HTTPError as error:
        raw, status, got = error.read(), error.code, error.headers
    headers_out = {k.lower(): v for k, v in got.items()}
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        parsed = {"raw": raw.decode("utf-8", "replace")}
    return Answer(status, headers_out, parsed)
