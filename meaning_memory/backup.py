"""``meaning-memory backup DIR`` / ``restore DIR``: the whole database, with PostgreSQL's own
tools from the embedded build (``pg_dump``, ``pg_restore``), whichever server the engine uses.

A backup is a directory: ``database.dump`` (``pg_dump``'s custom format: compressed, every
table, index definition, extension and sequence) and ``manifest.json`` (when, from which
server and engine version, the migrations it holds, the dump's size and sha256, and counts to
check a restore by). ``pg_dump`` reads one consistent snapshot, so a backup may be taken while
the engine serves.

A restore never touches the current database until the backup is fully restored beside it:
the dump is checked against its sha256, restored into a new database, checked (the engine's
tables, the migrations this version knows), and only then swapped in by renaming, the current
database kept as ``<name>_before_restore_<time>`` unless asked otherwise. It needs the engine
stopped (renaming waits for no one) and refuses while anything else is connected.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from meaning_memory.embedded import install_root
from readiness.evidence import engine_version

FORMAT = "meaning-memory-backup"
FORMAT_VERSION = 1
DUMP = "database.dump"
MANIFEST = "manifest.json"
#: What a restore checks against the manifest (each table's rows).
COUNTED_TABLES = ("memories_workspace", "memories_memory", "memories_provenanceevent")


class BackupError(RuntimeError):
    """A backup or restore that cannot be done; the message says why, for a person."""


@dataclass(frozen=True)
class Target:
    """Where the engine's database is, as libpq's environment names it."""

    host: str
    port: str
    user: str
    password: str
    name: str
    options: dict[str, str]

    def env(self, database: str | None = None) -> dict[str, str]:
        env = {**os.environ}
        for key in ("PGSERVICE", "PGOPTIONS"):
            env.pop(key, None)
        values = {
            "PGHOST": self.host,
            "PGPORT": self.port,
            "PGUSER": self.user,
            "PGPASSWORD": self.password,
            "PGDATABASE": database or self.name,
            "PGSSLMODE": self.options.get("sslmode", ""),
        }
        env.update({key: value for key, value in values.items() if value})
        return env

    def connect(self, database: str) -> psycopg.Connection:
        return psycopg.connect(
            host=self.host or None,
            port=self.port or None,
            user=self.user or None,
            password=self.password or None,
            dbname=database,
            sslmode=self.options.get("sslmode"),
            autocommit=True,
        )


def current_target() -> Target:
    """The configured database (the embedded server is started if it is not running)."""
    from django.db import connection

    connection.ensure_connection()
    params = connection.get_connection_params()
    return Target(
        host=str(params.get("host") or ""),
        port=str(params.get("port") or ""),
        user=str(params.get("user") or ""),
        password=str(params.get("password") or ""),
        name=connection.settings_dict["NAME"],
        options={
            key: str(value)
            for key, value in connection.settings_dict.get("OPTIONS", {}).items()
            if key == "sslmode"
        },
    )


def tool(name: str) -> Path:
    return install_root() / "bin" / name


def _run(arguments: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(arguments, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise BackupError(f"{Path(arguments[0]).name} failed: " + " / ".join(tail))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _counts(connection: psycopg.Connection) -> dict[str, int]:
    counts = {}
    for table in COUNTED_TABLES:
        row = connection.execute(
            sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
        ).fetchone()
        counts[table] = row[0]
    return counts


def _migrations(connection: psycopg.Connection) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for app, name in connection.execute("SELECT app, name FROM django_migrations ORDER BY id"):
        found.setdefault(app, []).append(name)
    return found


def backup(directory: Path, *, target: Target | None = None) -> dict[str, Any]:
    """Write a backup into ``directory`` (new, or empty); its manifest."""
    target = target or current_target()
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise BackupError(f"{directory} exists and is not an empty directory")
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / (DUMP + ".partial")
    try:
        with target.connect(target.name) as connection:
            server_version = connection.execute("SHOW server_version").fetchone()[0]
            counts = _counts(connection)
            migrations = _migrations(connection)
        _run(
            [
                str(tool("pg_dump")),
                "--format=custom",
                "--no-owner",
                "--no-privileges",
                f"--file={partial}",
            ],
            target.env(),
        )
        partial.rename(directory / DUMP)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "created_at": datetime.now(UTC).isoformat(),
        "database": target.name,
        "server_version": server_version,
        "engine_version": engine_version(),
        "migrations": migrations,
        "counts": counts,
        "dump": DUMP,
        "bytes": (directory / DUMP).stat().st_size,
        "sha256": sha256_of(directory / DUMP),
        "note": "counts are as the manifest's queries read them just before the dump started",
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    if not path.is_file():
        raise BackupError(f"{directory} holds no {MANIFEST}: not a backup")
    try:
        manifest = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise BackupError(f"{path} is not valid JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{path} is not a {FORMAT} manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise BackupError(
            f"{path}: backup format version {manifest.get('version')!r}; this engine reads "
            f"version {FORMAT_VERSION}"
        )
    dump = directory / DUMP
    if not dump.is_file():
        raise BackupError(f"{directory} holds no {DUMP}")
    if dump.stat().st_size != manifest.get("bytes") or sha256_of(dump) != manifest.get("sha256"):
        raise BackupError(f"{dump} is not the file the manifest describes (size or sha256 differ)")
    return manifest


def unknown_migrations(manifest: dict[str, Any], known: dict[str, set[str]]) -> list[str]:
    """The backup's migrations this engine does not have (a backup by a newer version)."""
    return [
        f"{app}.{name}"
        for app, names in manifest.get("migrations", {}).items()
        if app in known
        for name in names
        if name not in known[app]
    ]


@dataclass
class Restored:
    manifest: dict[str, Any]
    database: str
    previous: str | None  # the database it replaced, kept under this name (None: dropped/none)


def restore(
    directory: Path,
    *,
    known_migrations: dict[str, set[str]],
    keep_previous: bool = True,
    target: Target | None = None,
) -> Restored:
    """Restore a backup in place of the configured database (see the module's docstring)."""
    manifest = read_manifest(directory)
    if unknown := unknown_migrations(manifest, known_migrations):
        raise BackupError(
            "the backup was made by a newer version of the engine (migrations this one does "
            f"not have: {', '.join(unknown[:5])}); restore it with that version"
        )
    target = target or current_target()
    _close_django_connections()
    stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    staging = f"{target.name}_restoring"
    previous = f"{target.name}_before_restore_{stamp}"
    with _maintenance(target) as admin:
        others = _connected(admin, target.name)
        if others:
            raise BackupError(
                f"{others} other connection(s) to database {target.name!r} (a running "
                "`meaning-memory serve` or worker?): stop them, then restore"
            )
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(staging)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(staging)))
        try:
            _run(
                [
                    str(tool("pg_restore")),
                    "--no-owner",
                    "--no-privileges",
                    "--exit-on-error",
                    f"--dbname={staging}",
                    str(directory / DUMP),
                ],
                target.env(staging),
            )
            with target.connect(staging) as restored:
                counts = _counts(restored)
            if counts != manifest.get("counts"):
                raise BackupError(
                    f"the restored database counts {counts}, the manifest {manifest.get('counts')}"
                )
        except BaseException:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(staging)))
            raise
        exists = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [target.name]
        ).fetchone()
        if exists:
            if _connected(admin, target.name):
                admin.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(staging)))
                raise BackupError(f"something connected to {target.name!r} meanwhile: try again")
            admin.execute(
                sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                    sql.Identifier(target.name), sql.Identifier(previous)
                )
            )
        admin.execute(
            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                sql.Identifier(staging), sql.Identifier(target.name)
            )
        )
        if exists and not keep_previous:
            admin.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(previous)))
    return Restored(manifest, target.name, previous if exists and keep_previous else None)


def _connected(admin: psycopg.Connection, database: str) -> int:
    return admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
        [database],
    ).fetchone()[0]


def _maintenance(target: Target) -> psycopg.Connection:
    """A connection to the server's maintenance database (renaming needs one elsewhere)."""
    for database in ("postgres", "template1"):
        try:
            return target.connect(database)
        except psycopg.OperationalError as exc:
            failure = exc
    raise BackupError(f"cannot reach the server's maintenance database: {failure}")


def _close_django_connections() -> None:
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        if connection.alias in getattr(connection, "_connection_pools", {}):
            connection.close_pool()
        connection.close()
