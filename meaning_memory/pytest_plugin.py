"""pytest plugin (loaded by the project's ``conftest.py``): when the embedded PostgreSQL cannot
start, or a server process dies under a test (SIGILL on a CPU the build does not fit, a crash),
the run stops at once with one message that names the cause, instead of every later test
failing with ``server closed the connection unexpectedly`` or ``the database system is in
recovery mode``."""

from __future__ import annotations

import pytest


def pytest_exception_interact(node, call, report) -> None:
    if call.excinfo is None:
        return
    from meaning_memory.embedded_failures import failure_message

    message = failure_message(call.excinfo.value)
    if message is not None:
        pytest.exit(f"{node.nodeid}:\n{message}", returncode=3)
