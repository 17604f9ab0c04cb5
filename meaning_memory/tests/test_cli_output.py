"""The command line says what a newcomer needs (issue 38): no worker-library lines among a
command's output, and a database not yet migrated is a sentence saying what to run, not a
traceback."""

from __future__ import annotations

import os

import psycopg
import pytest

from meaning_memory.testing import database_url
from meaning_memory.tests.served import engine_command


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": url, "MM_Q_SYNC": "false"}


def test_a_command_that_queues_work_prints_no_worker_lines(transactional_db):
    done = engine_command(
        _env(database_url()),
        "shell",
        "-c",
        "from django_q.tasks import async_task; async_task('math.floor', 1.5); print('queued')",
    )

    assert "queued" in done.stdout
    assert "Enqueued" not in done.stdout + done.stderr


@pytest.fixture
def unmigrated(transactional_db):
    name = "mm_unmigrated_cli"
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
        admin.execute(f"ALTER DATABASE {name} OWNER TO CURRENT_USER")
    yield database_url(name)
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.mark.parametrize(
    "command",
    [("readiness",), ("search", "renewal", "--workspace", "acme", "--agent", "assistant")],
)
def test_a_command_on_a_database_not_migrated_says_what_to_run(unmigrated, command):
    done = engine_command(_env(unmigrated), *command, check=False)

    assert done.returncode == 1
    assert "migrations to apply: run `meaning-memory migrate`" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
