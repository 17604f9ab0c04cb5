"""A write acknowledged before its enrichment loses nothing when a process dies (real
processes, ``kill -9``): the web process killed after answering leaves every acknowledged
memory stored and pending; the enricher killed in the middle of its batches leaves each memory
either enriched whole or pending, never half and never twice; the next enricher finishes the
rest. And ``serve`` runs its own enricher: a write answered ``pending`` is enriched by itself
a moment later."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from meaning_memory.tests.served import ROOT, served
from meaning_memory.tests.test_embedded import (  # noqa: F401 (the fixture is used by name)
    _no_server_left,
    connect,
    wait_for,
)

pytestmark = pytest.mark.slow

TICKETS = 120
#: Every memory of this shape names entities: an enriched one has links, a pending one none.
TEXT = "Ticket {i}: Maria Lopez called from Lisbon about Orion Health and the Kraków office."


def counts(pgdata) -> dict[str, int]:
    with connect(pgdata) as conn:
        row = conn.execute(
            """
            SELECT
              (SELECT count(*) FROM memories_memory),
              (SELECT count(*) FROM memories_memoryenrichment),
              (SELECT count(*) FROM memories_memory m WHERE EXISTS
                 (SELECT 1 FROM memories_memoryenrichment e WHERE e.memory_id = m.id)
                 AND EXISTS (SELECT 1 FROM memories_link l WHERE l.source_id = m.id)),
              (SELECT count(*) FROM memories_memory m WHERE NOT EXISTS
                 (SELECT 1 FROM memories_memoryenrichment e WHERE e.memory_id = m.id)
                 AND NOT EXISTS (SELECT 1 FROM memories_link l WHERE l.source_id = m.id)),
              (SELECT count(*) - count(DISTINCT (source_id, target_entity_id, kind))
                 FROM memories_link),
              (SELECT count(*) - count(DISTINCT (kind, normalized)) FROM memories_entity)
            """
        ).fetchone()
    names = ["memories", "pending", "half", "lost", "links_twice", "entities_twice"]
    return dict(zip(names, row, strict=True))


def web_processes(serve: subprocess.Popen) -> list[psutil.Process]:
    return [
        p
        for p in psutil.Process(serve.pid).children(recursive=True)
        if "uvicorn" in " ".join(p.cmdline())
    ]


def test_nothing_is_lost_or_done_twice_when_the_web_or_the_enricher_is_killed(tmp_path):
    engine = served(
        tmp_path / "data",
        MM_ENRICH_LATER="1",
        MM_CONSOLIDATE_EVERY="0",
        MM_CONSOLIDATE_AFTER_IMPORT="0",
    )
    engine.start(180, "--no-worker")  # no enricher: the writes stay pending
    enricher = None
    try:
        token = engine.agent("acme", "writer")
        items = [
            {"text": TEXT.format(i=i), "idempotency_key": f"ticket-{i}"} for i in range(TICKETS)
        ]
        bulk = engine.call("POST", "/api/v1/memories/bulk", token, {"memories": items})
        assert bulk.status == 201 and bulk.body["stored"] == TICKETS, bulk.body
        single = engine.call("POST", "/api/v1/memories", token, {"text": TEXT.format(i="single")})
        assert single.status == 201 and single.body["enrichment"] == "pending", single.body
        found = engine.call("POST", "/api/v1/search", token, {"query": "Ticket single Lisbon"})
        assert single.body["mem_id"] in [h["mem_id"] for h in found.body["results"]]

        # The web process killed outright after answering: every answered write is there.
        web = web_processes(engine.process)
        assert web
        for process in web:
            process.send_signal(signal.SIGKILL)
        assert counts(engine.pgdata) == {
            "memories": TICKETS + 1,
            "pending": TICKETS + 1,
            "half": 0,
            "lost": 0,
            "links_twice": 0,
            "entities_twice": 0,
        }

        # The enricher killed in the middle of its batches.
        env = {**engine.env, "MM_ENRICH_BATCH": "4"}
        enricher = subprocess.Popen(
            [sys.executable, "-m", "meaning_memory", "enrich", "--follow"], cwd=ROOT, env=env
        )
        wait_for(lambda: counts(engine.pgdata)["pending"] <= TICKETS * 2 // 3, 120, "some enriched")
        enricher.send_signal(signal.SIGKILL)
        enricher.wait()
        after_kill = counts(engine.pgdata)
        assert 0 < after_kill["pending"] < TICKETS, after_kill  # it was killed midway
        assert (after_kill["half"], after_kill["lost"]) == (0, 0), after_kill
        assert (after_kill["links_twice"], after_kill["entities_twice"]) == (0, 0), after_kill

        # The next enricher finishes the rest, and does nothing twice.
        done = subprocess.run(
            [sys.executable, "-m", "meaning_memory", "enrich"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert f"{after_kill['pending']} memories enriched, 0 failed" in done.stdout
        assert counts(engine.pgdata) == {
            "memories": TICKETS + 1,
            "pending": 0,
            "half": 0,
            "lost": 0,
            "links_twice": 0,
            "entities_twice": 0,
        }
    finally:
        if enricher is not None and enricher.poll() is None:
            enricher.kill()
        engine.stop()


def test_serve_enriches_what_it_answers_pending(tmp_path):
    engine = served(tmp_path / "data", MM_CONSOLIDATE_EVERY="0")
    env_before = os.environ.get("MM_ENRICH_LATER")
    engine.env.pop("MM_ENRICH_LATER", None)
    engine.start(180)
    try:
        (enricher,) = [
            p
            for p in psutil.Process(engine.process.pid).children()
            if "enrich --follow" in " ".join(p.cmdline())
        ]
        assert enricher.nice() == psutil.Process().nice() + 5  # MM_ENRICH_NICE, below the web
        token = engine.agent("acme", "writer")
        written = engine.call("POST", "/api/v1/memories", token, {"text": TEXT.format(i=7)})
        assert written.status == 201 and written.body["enrichment"] == "pending", written.body
        path = f"/api/v1/memories/{written.body['mem_id']}"

        def enriched():
            detail = engine.call("GET", path, token).body
            return detail if detail["enrichment"] == "done" else None

        started = time.monotonic()
        detail = wait_for(enriched, 60, "the enricher")
        assert time.monotonic() - started < 30
        assert {"Maria Lopez", "Kraków"} <= {e["name"] for e in detail["entities"]}
    finally:
        output = engine.stop()
    assert "Traceback" not in output, output
    assert os.environ.get("MM_ENRICH_LATER") == env_before


def test_memories_superseded_while_the_enricher_works_on_them(tmp_path):
    """A write that supersedes a memory still being enriched (the enricher holds its degree
    row and checks its key for each link; the write locks it and updates that row too) is
    answered, never a deadlock's 503, and both end enriched."""
    engine = served(tmp_path / "data", MM_CONSOLIDATE_EVERY="0")
    engine.start(180)
    try:
        token = engine.agent("acme", "writer")
        statuses = []
        for i in range(40):
            old = engine.call("POST", "/api/v1/memories", token, {"text": TEXT.format(i=i)})
            new = engine.call(
                "POST",
                "/api/v1/memories",
                token,
                {"text": TEXT.format(i=i) + " Moved to Porto.", "supersedes": old.body["mem_id"]},
            )
            statuses += [old.status, new.status]
        assert statuses == [201] * 80, [s for s in statuses if s != 201]
        wait_for(lambda: counts(engine.pgdata)["pending"] == 0, 120, "the enricher")
        found = counts(engine.pgdata)
        assert (found["memories"], found["lost"], found["half"]) == (80, 0, 0), found
    finally:
        output = engine.stop()
    assert "Traceback" not in output, output
