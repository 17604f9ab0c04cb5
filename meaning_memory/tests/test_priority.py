"""``meaning_memory.priority``: what it refuses to touch. (The worker process at a lower
priority, and its embedded backends, is tested end to end in ``test_worker.py``.)"""

from __future__ import annotations

import subprocess
import sys

import psutil

from meaning_memory import priority


def test_a_process_that_is_not_the_embedded_servers_child_keeps_its_priority():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        before = psutil.Process(child.pid).nice()
        assert priority.lower_backend(child.pid, postmaster=None) is False  # no embedded server
        assert priority.lower_backend(child.pid, postmaster=child.pid + 1) is False  # not its
        assert psutil.Process(child.pid).nice() == before
    finally:
        child.kill()
        child.wait()
    assert priority.lower_backend(child.pid, postmaster=psutil.Process().pid) is False  # gone


def test_zero_changes_nothing(settings, monkeypatch):
    settings.MM_WORKER_NICE = 0
    pool = dict(settings.DATABASES["default"]["OPTIONS"]["pool"])
    monkeypatch.setattr(priority.os, "nice", lambda n: (_ for _ in ()).throw(AssertionError(n)))
    assert priority.lower_worker_priority() == 0
    assert settings.DATABASES["default"]["OPTIONS"]["pool"] == pool
