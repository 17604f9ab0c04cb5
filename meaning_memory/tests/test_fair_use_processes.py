"""Fair use across web processes, served (``serve --web-workers 2``, real processes): an
agent's requests in flight are counted across both processes (``MM_FAIR_LEDGER``, which
``serve`` sets), so held requests in one process refuse the agent's next request in the other,
while another workspace is served; once they end, the agent is served again. A web process
killed outright leaves no slot taken for long."""

from __future__ import annotations

import signal
import time

import psutil
import pytest

from meaning_memory.tests.served import served
from meaning_memory.tests.test_embedded import wait_for
from meaning_memory.tests.test_fair_use_served import held_open

pytestmark = pytest.mark.slow


def test_an_agents_requests_in_flight_are_counted_across_web_processes(tmp_path):
    engine = served(tmp_path / "data", MM_RATE_CONCURRENT="2", MM_CONSOLIDATE_EVERY="0")
    engine.start(180, "--web-workers", "2")
    try:
        (server,) = [
            p
            for p in psutil.Process(engine.process.pid).children()
            if "uvicorn" in " ".join(p.cmdline())
        ]
        web = [p for p in server.children() if "spawn_main" in " ".join(p.cmdline())]
        assert len(web) == 2, server.children()  # uvicorn's two worker processes
        flood, calm = engine.agent("alpha", "flood"), engine.agent("beta", "calm")
        search = {"query": "When does Zephyr renew?"}
        assert engine.call("POST", "/api/v1/search", calm, search).status == 200
        held = [held_open(engine, flood) for _ in range(2)]
        try:
            time.sleep(0.5)  # both in flight, in whichever processes took them
            # Each on a new connection: the kernel hands them to either process.
            answers = [engine.call("POST", "/api/v1/search", flood, search) for _ in range(8)]
            meanwhile = engine.call("POST", "/api/v1/search", calm, search)
        finally:
            for conn in held:
                conn.close()
        assert [a.status for a in answers] == [429] * 8, [a.body for a in answers]
        assert "at most 2 in flight per agent" in answers[0].body["detail"]
        assert meanwhile.status == 200, meanwhile
        wait_for(
            lambda: engine.call("POST", "/api/v1/search", flood, search).status == 200,
            10,
            "the agent's places to come free",
        )

        # A web process killed while it holds the agent's requests: its counts go with it.
        held = [held_open(engine, flood) for _ in range(2)]
        time.sleep(0.5)
        for process in web:
            process.send_signal(signal.SIGKILL)
        for conn in held:
            conn.close()
        wait_for(
            lambda: engine.call("POST", "/api/v1/search", flood, search).status == 200,
            60,
            "the killed processes' places to come free",
        )
    finally:
        output = engine.stop()
    assert "Traceback" not in output, output
