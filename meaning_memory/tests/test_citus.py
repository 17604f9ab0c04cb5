"""The API's core flows on a Citus cluster answer as they do on one PostgreSQL.

It needs a Citus coordinator's database with its workers in its metadata, named by
``MM_TEST_CITUS_URL`` (docs/SCALING.md, "A Citus cluster on one machine":
``scripts/citus-local.sh start``, then ``scripts/citus-local.sh createdb NAME`` and
``MM_TEST_CITUS_URL=$(scripts/citus-local.sh url NAME)``). Without one it is skipped, saying
what is missing. The flows (``citus_flows.py``) run in a process of their own against each
database: the engine migrated there (and distributed, on Citus), then remember, supersede,
search with each filter, traverse, explain-path, entities, a memory's detail, the compiled
file, a consolidation run, erase, export and import into another workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from meaning_memory.testing import database_url

ROOT = Path(__file__).resolve().parents[2]
CITUS_URL = os.environ.get("MM_TEST_CITUS_URL", "")

pytestmark = pytest.mark.slow


def _unusable(url: str) -> str:
    """Why ``url`` is no Citus coordinator with workers ("" when it is one)."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            if (
                conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'").fetchone()
                is None
            ):
                return "MM_TEST_CITUS_URL names a database without the citus extension"
            (workers,) = conn.execute(
                "SELECT count(*) FROM pg_dist_node WHERE groupid > 0 AND isactive"
            ).fetchone()
    except psycopg.Error as error:
        return f"MM_TEST_CITUS_URL names no database this test can reach ({error})"
    return "" if workers else "MM_TEST_CITUS_URL names a Citus database with no worker"


@pytest.fixture(scope="module")
def citus_url() -> str:
    if not CITUS_URL:
        pytest.skip(
            "no Citus cluster: MM_TEST_CITUS_URL is not set (docs/SCALING.md, "
            '"A Citus cluster on one machine")'
        )
    if reason := _unusable(CITUS_URL):
        pytest.skip(reason)
    return CITUS_URL


@pytest.fixture
def single_node_url(transactional_db):
    """A database of its own on the tests' PostgreSQL, dropped afterwards."""
    name = f"mm_flows_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {name}")
    try:
        yield database_url(name)
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def flows(url: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "meaning_memory.tests.citus_flows", *args],
        env={**os.environ, "DATABASE_URL": url},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_core_flows_answer_on_citus_as_on_one_postgresql(citus_url, single_node_url):
    on_citus = flows(citus_url, "--distribute")
    alone = flows(single_node_url)
    assert sorted(on_citus) == sorted(alone)
    for step, answer in alone.items():
        assert on_citus[step] == answer, step
