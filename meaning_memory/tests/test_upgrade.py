"""An upgrade as an operator makes it: a database the previous release made and filled (its own
code, its own migrations, data of every kind: ``upgrade_data``) is migrated by this release's
``migrate``, and nothing is lost: every row of every table the previous release had is there,
with what it said, and the engine works on it (search, the compiled file, an agent's token).

The previous release is a commit of this repository (``PREVIOUS_RELEASE``), taken from its
history with ``git archive``; a checkout without that history skips the test (``.ci/run`` sets
``MM_REQUIRE_HISTORY``, which makes it fail instead)."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

import psycopg
import pytest

from meaning_memory.testing import scratch_database
from meaning_memory.tests.served import engine_command
from meaning_memory.tests.upgrade_data import SCRIPT

ROOT = Path(__file__).resolve().parents[2]
#: The release before this one: the last commit of 2026-12-02 (memories 0030, consolidation
#: 0005, readiness 0003).
PREVIOUS_RELEASE = "752908a"

#: What each table the previous release had says, by columns both releases hold: compared as
#: sets of rows before and after the upgrade (a row may gain columns, never lose one of these).
SNAPSHOT = {
    "workspaces": "SELECT id, name FROM memories_workspace",
    "agents": "SELECT name, workspace_id, token_prefix, token_hash, is_active FROM memories_agent",
    "scopes": "SELECT name, kind, workspace_id FROM memories_scope",
    "memberships": "SELECT u.username, m.workspace_id, m.role FROM memories_membership m "
    "JOIN auth_user u ON u.id = m.user_id",
    "memories": "SELECT m.mem_id, m.text, m.status, m.category, m.memory_type, m.significance, "
    "m.pinned, m.valid_from, m.valid_until, m.created_at, m.session, m.metadata::text, "
    "m.idempotency_key, m.content_hash, s.mem_id, m.embedding::text, m.episode_text "
    "FROM memories_memory m LEFT JOIN memories_memory s ON s.id = m.superseded_by_id",
    "entities": "SELECT e.entity_id, e.name, e.kind, e.declared, e.aliases::text, m.entity_id "
    "FROM memories_entity e LEFT JOIN memories_entity m ON m.id = e.merged_into_id",
    "links": "SELECT l.link_id, l.kind, l.origin, s.mem_id, t.mem_id, e.entity_id, "
    "l.weight, l.evidence::text, l.removed_at FROM memories_link l "
    "JOIN memories_memory s ON s.id = l.source_id "
    "LEFT JOIN memories_memory t ON t.id = l.target_memory_id "
    "LEFT JOIN memories_entity e ON e.id = l.target_entity_id",
    "history": "SELECT p.action, m.mem_id, p.reason, p.created_at FROM memories_provenanceevent p "
    "LEFT JOIN memories_memory m ON m.id = p.memory_id",
    "threads": "SELECT t.thread_id, t.title, t.status, t.size FROM memories_thread t",
    "divergences": "SELECT d.divergence_id, a.mem_id, b.mem_id, d.status, d.score "
    "FROM memories_divergence d JOIN memories_memory a ON a.id = d.first_id "
    "JOIN memories_memory b ON b.id = d.second_id",
    "runs": "SELECT run_id, status, trigger, phases::text FROM consolidation_consolidationrun",
    "snapshots": "SELECT markdown FROM consolidation_compiledsnapshot",
    "evidence": "SELECT capability, check_id, value, passed, code_version, detail::text "
    "FROM readiness_evidence",
    "proposals": "SELECT o.mem_id, n.mem_id, p.status FROM consolidation_supersessionproposal p "
    "JOIN memories_memory o ON o.id = p.older_id JOIN memories_memory n ON n.id = p.newer_id",
}


def previous_release(into: Path) -> Path:
    """The previous release's files, from this repository's history."""
    archived = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", PREVIOUS_RELEASE],
        capture_output=True,
        check=False,
    )
    if archived.returncode != 0:
        reason = f"the previous release ({PREVIOUS_RELEASE}) is not in this checkout's history"
        if os.environ.get("MM_REQUIRE_HISTORY"):
            pytest.fail(reason)
        pytest.skip(reason)
    with tarfile.open(fileobj=BytesIO(archived.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


@pytest.fixture
def scratch(django_db_blocker):
    with scratch_database("mm_upgrade", django_db_blocker) as made:
        yield made


def engine(code: Path, url: str, *args: str) -> str:
    """``meaning-memory <args>`` with the code in ``code`` (this release's or the previous),
    on the database at ``url``."""
    env = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(code)}
    env |= {"MM_DIVERGENCE": "1", "MM_OPEN_THREADS": "1"}
    return engine_command(env, *args, cwd=code, timeout=600).stdout


def snapshot(database: dict) -> dict[str, set[tuple]]:
    with psycopg.connect(**database) as conn:
        return {name: set(conn.execute(query).fetchall()) for name, query in SNAPSHOT.items()}


@pytest.mark.slow
def test_an_upgrade_from_the_previous_release_loses_nothing(scratch, tmp_path):
    url, database = scratch
    old = previous_release(tmp_path / "previous")
    engine(old, url, "migrate", "--no-input")
    where = engine(old, url, "shell", "-c", "import memories; print(memories.__file__)")
    assert where.strip().splitlines()[-1].startswith(str(old))  # that release's code ran
    tokens = json.loads(engine(old, url, "shell", "-c", SCRIPT).strip().splitlines()[-1])
    engine(old, url, "stare-eval")  # the checks that need no data: readiness evidence
    before = snapshot(database)
    assert all(before.values()), {name: len(rows) for name, rows in before.items()}

    migrated = engine(ROOT, url, "migrate", "--no-input")

    after = snapshot(database)
    # Two workspaces whose slugs differ only in case (that release allowed it): the later one
    # is renamed, and migrate says so; nothing else of it changes.
    with psycopg.connect(**database) as conn:
        slugs = {row[0] for row in conn.execute("SELECT slug FROM memories_workspace")}
    assert slugs == {"acme", "Acme-2"}
    assert "Workspace 'Acme' renamed 'Acme-2'" in migrated
    lost = {name: rows - after[name] for name, rows in before.items() if rows - after[name]}
    assert lost == {}
    # The engine works on it: an agent's token, a search, the compiled file.
    found = engine(
        ROOT, url, "search", "When does Zephyr Logistics renew?", "--token", tokens["alice"]
    )
    assert "June instead of March" in found
    engine(ROOT, url, "consolidate", "--workspace", "acme")  # every phase, on the old rows
    compiled = engine(ROOT, url, "compile", "--token", tokens["bob"])
    assert "June instead of March" in compiled and "Globex" not in compiled
    assert "Globex" in engine(ROOT, url, "compile", "--workspace", "Acme-2")
