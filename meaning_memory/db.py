"""Database connection settings: ``DATABASE_URL`` or the embedded PostgreSQL.

With no ``DATABASE_URL`` the engine runs its own PostgreSQL 18 + pgvector
(``meaning_memory.embedded``), started by the first connection a process opens.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from meaning_memory.embedded import EMBEDDED_DATABASE_NAME


class DatabaseConfigError(ValueError):
    pass


def parse_database_url(url: str, setting: str = "DATABASE_URL") -> dict[str, object]:
    """Django ``DATABASES['default']`` entries for a ``postgres://`` / ``postgresql://`` URL.

    ``?host=/path`` selects a Unix socket directory; other query parameters (``sslmode`` …) are
    passed to libpq as connection options.
    """
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise DatabaseConfigError(
            f"{setting} must start with postgresql:// (got scheme {parts.scheme!r}); "
            "Meaning Memory runs on PostgreSQL with pgvector only"
        )
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise DatabaseConfigError(f"{setting} must name a database, e.g. postgresql://u:p@host/db")
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


def index_scan_settings(ef_search: int) -> dict[str, str]:
    """The settings an HNSW index scan of a search runs with: ``hnsw.ef_search``, the search
    list (at least the candidates a search asks for), and ``hnsw.iterative_scan``, which lets a
    filtered index scan keep going until enough rows pass the filters. (On a Citus cluster the
    scans run on the workers, which a connection's options do not reach: the distribution
    statements set them on the database, ``meaning_memory.distribution``.)"""
    return {"hnsw.ef_search": str(ef_search), "hnsw.iterative_scan": "relaxed_order"}


def search_options(ef_search: int, *, prepared: bool) -> str:
    """libpq ``options`` that start every connection with the search's settings: the index
    scan's (``index_scan_settings``) and, with ``prepared``, ``plan_cache_mode=
    force_generic_plan``, which makes a prepared search statement keep one plan from its first
    execution (see ``memories.prepared``). Set at connection start, they cost a search neither
    a transaction nor a round trip.
    """
    options = " ".join(
        f"-c {name}={value}" for name, value in index_scan_settings(ef_search).items()
    )
    return options + (" -c plan_cache_mode=force_generic_plan" if prepared else "")


def embedded_database(data_dir: Path, *, shared_buffers: str | None = None) -> dict[str, object]:
    """Django settings for the embedded server of ``data_dir``, which starts on the first
    connection (``meaning_memory.backends.embedded``), not here."""
    return {
        "ENGINE": "meaning_memory.backends.embedded",
        "NAME": EMBEDDED_DATABASE_NAME,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": "",
        "PORT": "",
        "OPTIONS": {},
        "EMBEDDED": {"DATA_DIR": str(data_dir), "SHARED_BUFFERS": shared_buffers},
    }


#: What a forked child inherited from its parent and must neither use nor close.
_inherited: list[object] = []


def forget_connections_after_fork() -> None:
    """In a forked child (django-q2's cluster forks its pusher, workers and monitor), the
    parent's connections and connection pool are not the child's: their sockets carry the
    parent's sessions, and the pool's threads did not survive the fork (a pool without them
    never hands out a new connection: ``PoolTimeout``). Forget them without closing them
    (closing would end the parent's sessions); the child opens its own on first use."""
    from django.db import connections
    from django.db.backends.postgresql.base import DatabaseWrapper

    if DatabaseWrapper._connection_pools:
        _inherited.append(dict(DatabaseWrapper._connection_pools))
        DatabaseWrapper._connection_pools.clear()
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None:
            _inherited.append(connection.connection)
            connection.connection = None
