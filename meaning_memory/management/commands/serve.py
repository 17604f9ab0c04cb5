"""``meaning-memory serve``: migrate, then run the web server and the background worker.

The command supervises three child processes, an ASGI server (uvicorn), the django-q2 cluster
and the enricher (``meaning-memory enrich --follow``: a write is answered once it is durable and
searchable, and its entities, links and A score follow a moment later, ``MM_ENRICH_LATER``,
which this turns on for its web processes unless the environment says otherwise), each the
leader of its own process group (one that dies is started again, unless it
keeps dying), so that Ctrl-C reaches this command only
and a signal to a group reaches every process a child started (the cluster's workers, pusher
and monitor). On Ctrl-C or SIGTERM it asks both groups to stop (SIGTERM), kills what is left
after ``STOP_GRACE_SECONDS`` (or at once on a second Ctrl-C), and then detaches from the
embedded PostgreSQL, which stops when no other process of the engine uses it. Killed outright
(``kill -9``), it leaves that to its keeper (``meaning_memory.keeper``), which a new ``serve``
waits for.

While serving it follows the embedded server's log: a server process killed by a signal is
reported with what the log says; SIGILL (the build does not fit this CPU) or the death of the
server itself stops the command with that message.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from consolidation.tasks import ensure_schedules as ensure_consolidation_schedules
from meaning_memory.accounts import FIRST_USER_COMMAND, no_user_yet
from meaning_memory.embedded import EmbeddedServer, configured_server, signals_in
from meaning_memory.keeper import Keeper, wait_for_cleanup
from meaning_memory.metrics import MULTIPROCESS_DIR
from meaning_memory.proxies import SERVER_OPTIONS
from memories.tasks import ensure_schedules

#: How long the web server and the worker get to finish what they are doing.
STOP_GRACE_SECONDS = 3
#: uvicorn's own limit for open connections (MCP streams) to close, inside the grace period.
WEB_GRACEFUL_SECONDS = 2


class Command(BaseCommand):
    help = (
        "Migrate the database, then serve the API, admin and dashboard with an ASGI server "
        "and run the background worker; Ctrl-C stops everything."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--web-workers",
            type=int,
            default=1,
            help="Web server processes (each loads the embedder once; together they share "
            "the fair use limits and slots, MM_FAIR_LEDGER).",
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="Do not start the background worker and the enricher here (run them "
            "elsewhere: `meaning-memory qcluster`, `meaning-memory enrich --follow`).",
        )

    def handle(self, *args, **options):
        host, port = options["host"], options["port"]
        wait_for_cleanup(settings.MM_DATA_DIR, self.stdout.write)
        if _port_in_use(host, port):
            raise CommandError(f"{host}:{port} is already in use; choose another --port")
        call_command("migrate", interactive=False, verbosity=0)
        ensure_schedules()
        ensure_consolidation_schedules()
        connections.close_all()
        database = configured_server()
        watcher = _LogWatcher(database) if database is not None else None

        _metrics_directory()
        children: dict[str, subprocess.Popen[bytes]] = {}
        signals_received = 0

        def request_stop(signum: int, frame: FrameType | None) -> None:
            nonlocal signals_received
            signals_received += 1
            if signals_received > 1:
                # A second Ctrl-C: no more waiting.
                _kill_groups(children.values())

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        commands = {
            "web": [
                sys.executable,
                "-m",
                "uvicorn",
                "meaning_memory.asgi:application",
                "--host",
                host,
                "--port",
                str(port),
                "--workers",
                str(options["web_workers"]),
                "--lifespan",
                "on",  # the MCP endpoint starts its session manager there
                "--timeout-graceful-shutdown",
                str(WEB_GRACEFUL_SECONDS),
                *SERVER_OPTIONS,  # proxies are the app's to trust (meaning_memory.proxies)
            ],
        }
        environments: dict[str, dict[str, str]] = {"web": {}}
        if options["web_workers"] > 1 and not os.environ.get("MM_FAIR_LEDGER"):
            # The web processes count fair use together (meaning_memory.ledger).
            environments["web"]["MM_FAIR_LEDGER"] = _fair_ledger()
        if not options["no_worker"]:
            commands["worker"] = [sys.executable, "-m", "meaning_memory", "qcluster"]
            commands["enricher"] = [sys.executable, "-m", "meaning_memory", "enrich", "--follow"]
            # The enricher runs: the web answers a write before its enrichment.
            environments["web"]["MM_ENRICH_LATER"] = os.environ.get("MM_ENRICH_LATER", "1")
        restarts = _Restarts()
        keeper = Keeper(str(settings.MM_DATA_DIR))  # stops the children if serve is killed
        try:
            for name, command in commands.items():
                children[name] = _start_child(command, keeper, environments.get(name))
            if not _wait_for_port(host, port, children["web"], lambda: signals_received > 0):
                if not signals_received:
                    raise CommandError(
                        "the web server did not start; see the messages above"
                        + (watcher.explain_if_crashed() if watcher else "")
                    )
                return
            url_host = f"[{host}]" if ":" in host else host
            where = "embedded PostgreSQL" if not settings.DATABASE_URL else "DATABASE_URL"
            self.stdout.write(
                self.style.SUCCESS(
                    f"Meaning Memory is serving on http://{url_host}:{port}/ "
                    f"(API /api/v1/, docs /api/v1/schema/swagger/, admin /admin/; {where}, "
                    f"data in {settings.MM_DATA_DIR}). Ctrl-C stops it."
                )
            )
            if no_user_yet():
                self.stdout.write(
                    f"No user yet: run `{FIRST_USER_COMMAND}` to make one for the dashboard; "
                    "`meaning-memory createagent --workspace W --name N` makes an agent and "
                    "prints its token."
                )
            while not signals_received:
                for name, child in list(children.items()):
                    if child.poll() is None:
                        continue
                    # A web server or worker that died (killed, out of memory) is started
                    # again: what it had acknowledged is in the database, and clients retry
                    # the rest with their idempotency keys. One that keeps dying stops serve.
                    _signal_group(child, signal.SIGKILL)  # what it left of its group
                    if not restarts.allow(name):
                        raise CommandError(
                            f"the {name} process exited with {child.returncode}, "
                            f"{RESTART_LIMIT} times within {RESTART_WINDOW_SECONDS} s"
                            + (watcher.explain_if_crashed() if watcher else "")
                        )
                    self.stderr.write(
                        f"The {name} process exited with {child.returncode}; starting it again."
                    )
                    children[name] = _start_child(commands[name], keeper, environments.get(name))
                if watcher is not None:
                    fatal = watcher.check(self.stderr)
                    if fatal:
                        raise CommandError(fatal)
                time.sleep(0.5)
            self.stdout.write("Stopping…")
        finally:
            _stop(children.values(), lambda: signals_received > 1)
            keeper.done()
            if database is not None:
                database.release()


def _metrics_directory() -> None:
    """One directory, emptied, where every process this starts (the web workers, the worker)
    keeps its metrics for /metrics to add up (``meaning_memory.metrics``); an operator's own
    ``PROMETHEUS_MULTIPROC_DIR`` is used as it is."""
    if os.environ.get(MULTIPROCESS_DIR):
        return
    directory = Path(settings.MM_DATA_DIR) / "metrics"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    os.environ[MULTIPROCESS_DIR] = str(directory)


def _fair_ledger() -> str:
    """A new, empty ledger file for this run's web processes (one a run left is removed)."""
    path = Path(settings.MM_DATA_DIR) / "run" / "fair-ledger"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    return str(path)


def _start_child(
    command: list[str], keeper: Keeper, environment: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    env = {**os.environ, **environment} if environment else None
    child = subprocess.Popen(command, start_new_session=True, env=env)
    keeper.watch(child.pid)
    return child


#: A child that exits this many times within the window stops serve instead of restarting.
RESTART_LIMIT = 5
RESTART_WINDOW_SECONDS = 60


class _Restarts:
    """When each child was restarted, to tell a crash from a crash loop."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}

    def allow(self, name: str) -> bool:
        now = time.monotonic()
        recent = [t for t in self.times.get(name, []) if now - t < RESTART_WINDOW_SECONDS]
        recent.append(now)
        self.times[name] = recent
        return len(recent) < RESTART_LIMIT


class _LogWatcher:
    """Follows the embedded server's log for server processes killed by a signal."""

    def __init__(self, database: EmbeddedServer) -> None:
        self.database = database
        self.offset = database.log_offset()

    def check(self, stderr) -> str | None:
        """Report new crashes on ``stderr``; a message when serving must stop."""
        lines, self.offset = self.database.read_log_from(self.offset)
        crashed = signals_in(lines)
        alive = self.database.postmaster_alive()
        if not crashed and alive:
            return None
        explanation = self.database.explain(
            "The embedded PostgreSQL "
            + ("stopped running." if not alive else "lost a server process.")
        )
        if not alive or signal.SIGILL in crashed:
            return explanation
        stderr.write(explanation + "\nIt recovered; serving goes on.")
        return None

    def explain_if_crashed(self) -> str:
        if self.database.crash_evidence() or not self.database.postmaster_alive():
            return "\n" + self.database.explain("The embedded PostgreSQL failed.")
        return ""


def _port_in_use(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        return probe.connect_ex((host, port)) == 0


def _wait_for_port(host: str, port: int, web: subprocess.Popen[bytes], stopping) -> bool:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not stopping():
        if web.poll() is not None:
            return False
        if _port_in_use(host, port):
            return True
        time.sleep(0.2)
    return False


def _signal_group(child: subprocess.Popen[bytes], signum: int) -> None:
    """``signum`` to every process of the child's group (the child leads it), including
    processes left behind by a leader that already exited."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)


def _kill_groups(children) -> None:
    for child in children:
        _signal_group(child, signal.SIGKILL)


def _stop(children, hurry) -> None:
    children = list(children)
    for child in children:
        _signal_group(child, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for child in children:
        while child.poll() is None and time.monotonic() < deadline and not hurry():
            time.sleep(0.05)
    # Whatever is left of each group, the leader included, is killed: no orphan survives.
    _kill_groups(children)
    for child in children:
        child.wait()
