"""``meaning-memory serve``: migrate, then run the web server and the background worker.

The command supervises two child processes, an ASGI server (uvicorn) and the django-q2
cluster, each in its own process group so that Ctrl-C reaches this command only; it stops
both, and the embedded PostgreSQL stops when the last process using it exits.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from types import FrameType

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from memories.tasks import ensure_schedules

STOP_TIMEOUT_SECONDS = 15


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
            help="Web server processes (each loads the embedder once).",
        )
        parser.add_argument(
            "--no-worker", action="store_true", help="Do not start the background worker here."
        )

    def handle(self, *args, **options):
        host, port = options["host"], options["port"]
        if _port_in_use(host, port):
            raise CommandError(f"{host}:{port} is already in use; choose another --port")
        call_command("migrate", interactive=False, verbosity=0)
        ensure_schedules()
        connections.close_all()

        children: dict[str, subprocess.Popen[bytes]] = {}
        stopping = False

        def request_stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        try:
            children["web"] = subprocess.Popen(
                [
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
                ],
                start_new_session=True,
            )
            if not options["no_worker"]:
                children["worker"] = subprocess.Popen(
                    [sys.executable, "-m", "meaning_memory", "qcluster"], start_new_session=True
                )
            if not _wait_for_port(host, port, children["web"], lambda: stopping):
                if not stopping:
                    raise CommandError("the web server did not start; see the messages above")
                return
            url_host = f"[{host}]" if ":" in host else host
            database = "embedded PostgreSQL" if not settings.DATABASE_URL else "DATABASE_URL"
            self.stdout.write(
                self.style.SUCCESS(
                    f"Meaning Memory is serving on http://{url_host}:{port}/ "
                    f"(API /api/v1/, docs /api/v1/schema/swagger/, admin /admin/; {database}, "
                    f"data in {settings.MM_DATA_DIR}). Ctrl-C stops it."
                )
            )
            while not stopping:
                for name, child in children.items():
                    if child.poll() is not None:
                        raise CommandError(f"the {name} process exited with {child.returncode}")
                time.sleep(0.5)
            self.stdout.write("Stopping…")
        finally:
            _stop(children.values())


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


def _stop(children) -> None:
    children = [c for c in children if c.poll() is None]
    for child in children:
        child.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
