"""The keeper of ``serve``'s processes: what stops them when ``serve`` cannot.

``serve`` starts the web server and the worker each as the leader of a process group of its
own (so that Ctrl-C reaches ``serve`` alone), and stops them when it stops. Killed outright
(``kill -9``, the out-of-memory killer), it can stop nothing: its groups and the embedded
PostgreSQL would run on with no parent, the web still answering and the port taken. So
``serve`` first starts this small process, in a session of its own, and tells it on a pipe each
group it starts, then ``done`` when it has stopped them itself. The pipe closing without
``done`` means ``serve`` is gone: the keeper asks every group to stop (SIGTERM), kills what is
left after ``STOP_GRACE_SECONDS``, then detaches the embedded PostgreSQL, which stops when no
other process of the engine uses it. Meanwhile it holds ``serve.cleanup`` in the data
directory, and a new ``serve`` waits for it (``wait_for_cleanup``) before it starts.

Nothing here imports Django until the cleanup needs the database: the keeper costs a small
Python process while ``serve`` runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

#: How long the groups get to stop on SIGTERM before they are killed.
STOP_GRACE_SECONDS = 3
#: The longest a new ``serve`` waits for a keeper still stopping an old one's processes.
CLEANUP_WAIT_SECONDS = 60
MARKER = "serve.cleanup"


class Keeper:
    """``serve``'s end of the pipe."""

    def __init__(self, data_dir: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "meaning_memory.keeper", data_dir],
            stdin=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def watch(self, pid: int) -> None:
        self._say(f"group {pid}")

    def done(self) -> None:
        """``serve`` stopped its groups itself: the keeper exits without doing anything."""
        self._say("done")
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)

    def _say(self, line: str) -> None:
        with contextlib.suppress(OSError):  # a keeper that died cannot be told; serve goes on
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()


def wait_for_cleanup(data_dir: str, say) -> None:
    """Wait while a keeper stops the processes of a ``serve`` that was killed (``say``: told
    once, when there is something to wait for)."""
    marker = Path(data_dir) / MARKER
    deadline = time.monotonic() + CLEANUP_WAIT_SECONDS
    told = False
    while time.monotonic() < deadline:
        try:
            pid = int(marker.read_text())
        except (FileNotFoundError, ValueError):
            return
        if not _alive(pid):
            marker.unlink(missing_ok=True)
            return
        if not told:
            say("Waiting for the processes of a serve that was killed to stop…")
            told = True
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    return _answers(os.kill, pid)


def _group_alive(pgid: int) -> bool:
    return _answers(os.killpg, pgid)


def _answers(send, target: int) -> bool:
    """Whether a process (or group) exists: signal 0 reaches it, or it is another user's."""
    try:
        send(target, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_groups(groups: set[int], signum: int) -> None:
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)


def stop_groups(groups: set[int]) -> None:
    """SIGTERM to every group, then SIGKILL to what is left after the grace period."""
    _signal_groups(groups, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while time.monotonic() < deadline and any(_group_alive(g) for g in groups):
        time.sleep(0.1)
    _signal_groups(groups, signal.SIGKILL)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while time.monotonic() < deadline and any(_group_alive(g) for g in groups):
        time.sleep(0.1)


def _detach_database() -> None:
    """The embedded PostgreSQL stops if no live process of the engine uses it any more."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "meaning_memory.settings")
    import django

    django.setup()
    from meaning_memory.embedded import configured_server

    server = configured_server()
    if server is None or not server.postmaster_alive():
        return
    server.ensure_started()  # attach, to detach: the last one out stops it
    server.release()


def main(data_dir: str) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is serve's to handle
    groups: set[int] = set()
    for line in sys.stdin:
        word, _, value = line.strip().partition(" ")
        if word == "done":
            return 0
        if word == "group" and value.isdigit():
            groups.add(int(value))
    marker = Path(data_dir) / MARKER
    marker.write_text(str(os.getpid()))
    try:
        sys.stderr.write(
            "meaning-memory serve ended without stopping its processes: stopping them.\n"
        )
        stop_groups(groups)
        _detach_database()
    finally:
        marker.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
