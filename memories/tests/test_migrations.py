"""A migration that crashed halfway can simply be run again: every index the migrations build
``CONCURRENTLY`` may have been left INVALID by a crash or a kill (not transactional), and the
rerun must finish with every index valid. Real processes: ``migrate`` runs as a subprocess on a
database of its own on the tests' server."""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from meaning_memory.testing import scratch_database as scratch_database_of

ROOT = Path(__file__).resolve().parents[2]
#: Every index a migration builds concurrently, by name.
CONCURRENT_INDEXES = [
    "memory_embedding_hnsw_new",  # 0004, renamed to memory_embedding_hnsw once built
    "memory_episode",  # 0008
    "memory_compile",  # 0009
    "memory_content_hash",  # 0011
    "memory_unique_idempotency_key",  # 0011, dropped by 0015
    "memory_unique_scope_idempotency_key",  # 0015
    "memory_unlinked",  # 0018
    "provenance_entity_time",  # 0018
]
#: Built by one migration, dropped by a later one.
DROPPED = {"memory_unique_idempotency_key"}


@pytest.fixture
def scratch_database(django_db_blocker):
    with scratch_database_of("mm_migration_rerun", django_db_blocker) as (url, params):
        yield url, psycopg.connect(**params, autocommit=True)


def migrate(url: str, *target: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "meaning_memory", "migrate", "--no-input", *target],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_a_migrate_that_crashed_in_every_concurrent_build_is_rerun(scratch_database):
    url, conn = scratch_database
    with conn:
        first = migrate(url, "memories", "0003")
        assert first.returncode == 0, first.stderr
        conn.execute("CREATE TABLE leftover (x int)")
        conn.execute("INSERT INTO leftover VALUES (1), (1)")
        for name in CONCURRENT_INDEXES:
            with pytest.raises(psycopg.errors.UniqueViolation):
                conn.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {name} ON leftover (x)")
        invalid = conn.execute("SELECT count(*) FROM pg_index WHERE NOT indisvalid").fetchone()[0]
        assert invalid == len(CONCURRENT_INDEXES)

        rerun = migrate(url)

        assert rerun.returncode == 0, rerun.stderr
        rows = dict(
            conn.execute(
                "SELECT c.relname, i.indisvalid AND i.indrelid <> 'leftover'::regclass "
                "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            ).fetchall()
        )
        for name in ["memory_embedding_hnsw", *CONCURRENT_INDEXES[1:]]:
            if name not in DROPPED:
                assert rows.get(name) is True, (name, rows.get(name))
        for name in ["memory_embedding_hnsw_new", *DROPPED]:
            assert name not in rows
        assert conn.execute("SELECT count(*) FROM pg_index WHERE NOT indisvalid").fetchone()[0] == 0

        again = migrate(url)
        assert again.returncode == 0 and "No migrations to apply" in again.stdout
