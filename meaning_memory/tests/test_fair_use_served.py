"""Finding 1 of the hardening issue, on a served engine (real processes): one agent flooding the
engine gets 429s with Retry-After while an agent of another workspace is served; database work
that takes too long, or finds no free connection, is a JSON 503 with Retry-After instead of a
hung request or a 500; ``/readyz`` looks at the database.

The engine runs with a pool of two connections (``MM_DB_POOL_SIZE``), one second of waiting
for one (``MM_DB_POOL_TIMEOUT``), statements cut after three (``MM_STATEMENT_TIMEOUT_MS``) and
four requests running at once (``MM_FAIR_SLOTS``), so that a lock the test holds on the
memories table makes each case happen on cue."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from meaning_memory.tests.served import Served, served
from meaning_memory.tests.test_embedded import connect, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Served:
    data = tmp_path_factory.mktemp("fair-use") / "data"
    running = served(
        data,
        MM_DB_POOL_SIZE="2",
        MM_DB_POOL_TIMEOUT="1",
        MM_STATEMENT_TIMEOUT_MS="3000",
        MM_RATE_CONCURRENT="4",
        # More requests may run than there are connections, so that one can wait for a
        # connection (with no more slots than connections, none ever does).
        MM_FAIR_SLOTS="4",
    ).start()
    try:
        yield running
    finally:
        output = running.stop()
        assert "Traceback" not in output, output


@pytest.fixture(scope="module")
def agents(engine) -> dict[str, str]:
    tokens = {"flood": engine.agent("alpha", "flood"), "calm": engine.agent("beta", "calm")}
    for token in tokens.values():
        assert engine.call("POST", "/api/v1/memories", token, {"text": "Zephyr renews in March."})
    return tokens


def held_open(engine: Served, token: str) -> socket.socket:
    """A search whose body never comes: the request stays in flight until the socket closes."""
    conn = socket.create_connection(("127.0.0.1", engine.port))
    conn.sendall(
        (
            "POST /api/v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n"
        ).encode()
    )
    return conn


def test_a_flooding_agent_gets_429s_while_another_workspace_is_served(engine, agents):
    search = {"query": "When does Zephyr renew?"}
    held = [held_open(engine, agents["flood"]) for _ in range(4)]
    try:
        time.sleep(0.5)  # the four are in flight

        refused = engine.call("POST", "/api/v1/search", agents["flood"], search)
        served_meanwhile = engine.call("POST", "/api/v1/search", agents["calm"], search)
        mcp_refused = engine.call("POST", "/mcp", agents["flood"], {})
    finally:
        for conn in held:
            conn.close()

    assert refused.status == 429, refused
    assert refused.content_type == "application/json"
    assert refused.headers["retry-after"] == "1"
    assert "at most 4 in flight per agent (MM_RATE_CONCURRENT)" in refused.body["detail"]
    assert mcp_refused.status == 429  # the MCP endpoint is behind the same limits
    assert served_meanwhile.status == 200, served_meanwhile
    assert served_meanwhile.body["results"]
    # Once the held requests are gone, the agent is served again.
    wait_for(
        lambda: engine.call("POST", "/api/v1/search", agents["flood"], search).status == 200,
        10,
        "the flooding agent's places to come free",
    )


class TableLock:
    """``LOCK TABLE memories_memory`` held by the test's own connection until ``release``."""

    def __init__(self, engine: Served) -> None:
        self.conn = connect(engine.pgdata)
        self.conn.execute("BEGIN")
        self.conn.execute("LOCK TABLE memories_memory IN ACCESS EXCLUSIVE MODE")

    def release(self) -> None:
        self.conn.execute("ROLLBACK")
        self.conn.close()


def waiting_on_locks(engine: Served) -> int:
    with connect(engine.pgdata) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()[0]


def test_a_statement_over_its_timeout_is_a_503_that_names_the_setting(engine, agents):
    lock = TableLock(engine)
    try:
        started = time.monotonic()
        cut = engine.call("POST", "/api/v1/search", agents["calm"], {"query": "Zephyr"})
        waited = time.monotonic() - started
    finally:
        lock.release()

    assert cut.status == 503, cut
    assert cut.content_type == "application/json"
    assert cut.headers["retry-after"] == "2"
    assert "longer than 3,000 ms (MM_STATEMENT_TIMEOUT_MS)" in cut.body["detail"]
    assert 2.5 < waited < 15
    after = engine.call("POST", "/api/v1/search", agents["calm"], {"query": "Zephyr"})
    assert after.status == 200, after


def test_no_free_connection_within_the_pool_timeout_is_a_503(engine, agents):
    lock = TableLock(engine)
    blocked: list = []

    def search():
        blocked.append(
            engine.call("POST", "/api/v1/search", agents["flood"], {"query": "Zephyr renews"})
        )

    threads = [threading.Thread(target=search) for _ in range(2)]
    try:
        for thread in threads:
            thread.start()
        # Both connections of the pool are taken, waiting on the lock.
        wait_for(lambda: waiting_on_locks(engine) == 2, 20, "both searches to wait on the lock")

        busy = engine.call("POST", "/api/v1/search", agents["calm"], {"query": "Zephyr"})
    finally:
        lock.release()
        for thread in threads:
            thread.join(30)

    assert busy.status == 503, busy
    assert busy.headers["retry-after"] == "2"
    assert "no connection came free within 1 s (MM_DB_POOL_TIMEOUT" in busy.body["detail"]
    assert [answer.status for answer in blocked] == [200, 200]


def test_readyz_checks_the_database_and_healthz_stays_cheap(engine):
    ready = engine.call("GET", "/readyz")
    assert ready.status == 200, ready
    assert ready.body["database"] == "ok"
    assert ready.body["worker"].startswith(("ok", "starting"))
    assert engine.call("GET", "/healthz").body == {"status": "ok"}
