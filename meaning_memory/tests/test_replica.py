"""Search on a streaming replica (issue 22): a PostgreSQL server of its own and a standby made
from it with ``pg_basebackup``, an engine given both (``DATABASE_URL``,
``DATABASE_REPLICA_URL``). Reads go to the replica, yet an agent always finds what it has just
written; when the replica falls behind (its replay paused) an agent that wrote reads from the
primary at once and everyone does past ``MM_REPLICA_MAX_LAG_SECONDS``; when the replica goes
away, reads fall back to the primary, and come back to the replica when it does."""

from __future__ import annotations

import re
import time
import urllib.request

import pytest

from meaning_memory.tests.served import served
from meaning_memory.tests.standalone import Standalone

pytestmark = pytest.mark.slow

WINDOW = 2.0  # MM_READ_YOUR_WRITES_SECONDS
MAX_LAG = 8.0  # MM_REPLICA_MAX_LAG_SECONDS


@pytest.fixture
def servers(tmp_path):
    primary = Standalone(tmp_path / "pg" / "primary").init()
    standby = None
    try:
        standby = primary.replica(tmp_path / "pg" / "standby")
        yield primary, standby
    finally:
        if standby is not None:
            standby.stop("immediate")
        primary.stop("immediate")


def reads(engine) -> dict[tuple[str, str], float]:
    """``mm_reads_total`` by (database, reason), from the engine's /metrics."""
    with urllib.request.urlopen(engine.base + "/metrics", timeout=30) as answer:
        text = answer.read().decode()
    counted = {}
    for database, reason, value in re.findall(
        r'^mm_reads_total\{database="(\w+)",reason="(\w+)"\} (\S+)$', text, re.MULTILINE
    ):
        counted[(database, reason)] = float(value)
    return counted


def test_reads_on_a_replica_never_miss_the_readers_own_writes(tmp_path, servers):
    primary, standby = servers
    engine = served(
        tmp_path / "web",
        primary.url(),
        DATABASE_REPLICA_URL=standby.url(),
        MM_READ_YOUR_WRITES_SECONDS=str(WINDOW),
        MM_REPLICA_MAX_LAG_SECONDS=str(MAX_LAG),
        MM_REPLICA_CHECK_SECONDS="0.2",
        MM_REPLICA_RETRY_SECONDS="1",
        MM_CONSOLIDATE_EVERY="0",
    )
    engine.command("migrate", "-v0")
    writer = engine.command(
        "createagent", "--workspace", "north", "--name", "writer", "--scope", "team:ops", "-v0"
    ).strip()
    other = engine.command(
        "createagent", "--workspace", "north", "--name", "other", "--scope", "team:ops", "-v0"
    ).strip()

    def write(text: str) -> str:
        answer = engine.call(
            "POST", "/api/v1/memories", writer, {"text": text, "scope": "team:ops"}
        )
        assert answer.status == 201, answer.body
        return answer.body["mem_id"]

    def found(token: str, query: str) -> set[str]:
        answer = engine.call("POST", "/api/v1/search", token, {"query": query, "limit": 20})
        assert answer.status == 200, answer.body
        return {hit["mem_id"] for hit in answer.body["results"]}

    def on_replica() -> float:
        return reads(engine).get(("replica", "caught_up"), 0.0)

    def replayed(mem_id: str) -> bool:
        with standby.connect() as connection:
            return bool(
                connection.execute(
                    "SELECT 1 FROM memories_memory WHERE mem_id = %s", [mem_id]
                ).fetchone()
            )

    def until(condition, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, condition
            time.sleep(0.2)

    engine.start(180, "--no-worker")
    try:
        # What the writer has just written it finds at once: from the primary.
        lease = write("The Oslo office renews its lease every March.")
        assert lease in found(writer, "Oslo office lease")
        assert reads(engine).get(("primary", "own_writes"), 0) >= 1
        # Once the replica has it and the window has passed, the writer reads the replica.
        until(lambda: replayed(lease))
        time.sleep(WINDOW + 0.5)
        before = on_replica()
        assert lease in found(writer, "Oslo office lease")
        assert on_replica() == before + 1
        # The list and the compiled file read there too.
        listed = engine.call("GET", "/api/v1/memories?limit=5", other)
        assert listed.status == 200 and lease in {m["mem_id"] for m in listed.body["results"]}
        assert engine.call("GET", "/api/v1/compiled?format=json", other).status == 200
        assert on_replica() == before + 3

        # The replica falls behind: its replay paused.
        with standby.connect() as connection:
            connection.execute("SELECT pg_wal_replay_pause()")
        badge = write("The Oslo office badge readers are replaced in June.")
        written = time.monotonic()
        assert badge in found(writer, "Oslo badge readers")  # within the window: the primary
        time.sleep(WINDOW + 0.5)
        # Past the window, the replica still lacks it: the writer still reads the primary.
        assert badge in found(writer, "Oslo badge readers")
        assert not replayed(badge)
        # Another agent reads the replica while it is less than MM_REPLICA_MAX_LAG behind: it
        # does not see the new memory yet (so the replica did answer).
        before = on_replica()
        assert badge not in found(other, "Oslo badge readers")
        assert on_replica() == before + 1
        # Further behind than that: everyone reads the primary.
        time.sleep(max(0.0, written + MAX_LAG + 1 - time.monotonic()))
        assert badge in found(other, "Oslo badge readers")
        assert reads(engine).get(("primary", "behind"), 0) >= 1
        # Replay resumes: the replica serves again.
        with standby.connect() as connection:
            connection.execute("SELECT pg_wal_replay_resume()")
        until(lambda: replayed(badge))
        time.sleep(0.5)
        before = on_replica()
        assert badge in found(other, "Oslo badge readers")
        assert on_replica() == before + 1

        # The replica goes away: reads fall back to the primary, and nothing fails.
        standby.stop("immediate")
        assert badge in found(other, "Oslo badge readers")
        desk = write("The Oslo office front desk opens at eight.")
        assert desk in found(writer, "Oslo front desk")
        assert desk in found(other, "Oslo front desk")
        counted = reads(engine)
        assert counted.get(("primary", "failed"), 0) + counted.get(("primary", "unavailable"), 0)
        # It comes back: after MM_REPLICA_RETRY_SECONDS, reads go to it again.
        standby.start()
        until(lambda: replayed(desk))
        before = on_replica()
        until(lambda: desk in found(other, "Oslo front desk") and on_replica() > before)
    finally:
        output = engine.stop()
    assert "Traceback" not in output, output
