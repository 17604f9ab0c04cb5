from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.indexing import existing_workspace_indexes, workspace_indexes_sync
from memories.models import Memory
from memories.operations import memory_remember, memory_search
from memories.selectors.reader import Reader
from memories.services.placing import by_idempotency_key


@pytest.fixture
def shared_table(alice, charlie, settings):
    """Workspace A with 6 memories, workspace B with 12: with a threshold of 5, only A holds
    less than half of the table and needs its own index."""
    settings.MM_WORKSPACE_INDEX_MIN_ROWS = 5
    for i in range(6):
        memory_remember(agent=alice.agent, text=f"Acme note {i} about the renewal.")
    for i in range(12):
        memory_remember(agent=charlie.agent, text=f"Globex note {i} about shipping.")
    yield
    Memory.objects.all().delete()  # indexes outlive the test's flush: an empty table drops them
    workspace_indexes_sync()


@pytest.mark.django_db(transaction=True)
def test_a_large_workspace_in_a_shared_table_gets_its_own_index(shared_table, alice, charlie):
    out = StringIO()
    call_command("index_workspaces", stdout=out)
    assert "1 created, 0 dropped, 0 kept" in out.getvalue()
    assert existing_workspace_indexes() == {alice.agent.workspace_id}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
            [f"memory_hnsw_ws_{alice.agent.workspace_id}"],
        )
        (definition,) = cursor.fetchone()
    assert "hnsw" in definition and f"(workspace_id = {alice.agent.workspace_id})" in definition
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
            [f"memory_gin_ws_{alice.agent.workspace_id}"],
        )
        (definition,) = cursor.fetchone()
    assert "gin (search_vector, metadata jsonb_path_ops)" in definition
    assert f"(workspace_id = {alice.agent.workspace_id})" in definition

    again = workspace_indexes_sync()  # idempotent
    assert (again.created, again.dropped, again.kept) == ([], [], [alice.agent.workspace_id])

    # The planner can use it for that workspace's search: with sorting off, only an index that
    # yields rows in distance order can answer (on a table this small and never analysed the
    # planner would otherwise sort the few rows the workspace_id index finds).
    with connection.cursor() as cursor:
        cursor.execute("SET enable_bitmapscan = off")
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_sort = off")
        cursor.execute(
            "EXPLAIN SELECT id FROM memories_memory WHERE workspace_id = %s "
            "ORDER BY embedding <=> (SELECT embedding FROM memories_memory LIMIT 1) LIMIT 5",
            [alice.agent.workspace_id],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_bitmapscan")
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET enable_sort")
    assert f"memory_hnsw_ws_{alice.agent.workspace_id}" in plan
    hits = memory_search(Reader.of_agent(alice.agent), query="renewal note")
    assert hits and all(h.memory.workspace_id == alice.agent.workspace_id for h in hits)

    for i in range(20):  # A now holds more than half of the table: the global index serves it
        memory_remember(agent=alice.agent, text=f"More Acme {i}.")
    changed = workspace_indexes_sync()  # ... and B (12 of 38) now needs one
    assert changed.dropped == [alice.agent.workspace_id]
    assert changed.created == [charlie.agent.workspace_id]
    assert existing_workspace_indexes() == {charlie.agent.workspace_id}
    with connection.cursor() as cursor:  # both of A's indexes are gone
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE indexname ~ %s", ["_ws_[0-9]+$"])
        assert cursor.fetchone() == (2,)


def test_index_sync_refuses_to_run_inside_a_transaction(db):
    with pytest.raises(RuntimeError, match="no transaction"):
        workspace_indexes_sync()


def test_the_worker_schedule_is_created_once(db):
    from django_q.models import Schedule

    from memories.tasks import ensure_schedules

    ensure_schedules()
    ensure_schedules()
    schedule = Schedule.objects.get(func="memories.tasks.sync_workspace_indexes")
    assert schedule.schedule_type == Schedule.HOURLY
    assert Schedule.objects.count() == 2  # with the worker's heartbeat (meaning_memory.health)


@pytest.mark.django_db(transaction=True)
def test_an_index_of_an_earlier_definition_is_built_again(shared_table, alice):
    """Before a workspace's full-text index held the metadata too, it held the words alone: a
    sync builds that one again with today's definition and keeps the vector index it has."""
    workspace = alice.agent.workspace_id
    workspace_indexes_sync()
    gin, hnsw = f"memory_gin_ws_{workspace}", f"memory_hnsw_ws_{workspace}"

    def index(name: str) -> tuple[int, str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexrelid::int, pg_get_indexdef(indexrelid) FROM pg_index "
                "WHERE indexrelid = %s::regclass",
                [name],
            )
            return cursor.fetchone()

    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {gin}")
        cursor.execute(
            f"CREATE INDEX {gin} ON memories_memory USING gin (search_vector) "
            f"WHERE workspace_id = {workspace}"
        )
    vector_index = index(hnsw)

    result = workspace_indexes_sync()

    assert (result.created, result.kept) == ([workspace], [])
    assert "gin (search_vector, metadata jsonb_path_ops)" in index(gin)[1]
    assert index(hnsw) == vector_index  # the vector index is today's: kept, not built again
    again = workspace_indexes_sync()
    assert (again.created, again.kept) == ([], [workspace])


@pytest.mark.django_db(transaction=True)
def test_the_migration_rebuilds_an_earlier_index_and_keeps_the_workspaces_chosen(
    shared_table, alice, charlie, settings
):
    """Migration 0040's step builds a workspace's full-text index of the earlier definition
    again, for the workspaces that have one, whatever the thresholds now say (an operator may
    have chosen them with others), and builds none for a workspace without."""
    from memories.indexing import workspace_indexes_rebuild_outdated

    workspace = alice.agent.workspace_id
    workspace_indexes_sync()
    gin = f"memory_gin_ws_{workspace}"
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {gin}")
        cursor.execute(
            f"CREATE INDEX {gin} ON memories_memory USING gin (search_vector) "
            f"WHERE workspace_id = {workspace}"
        )
    settings.MM_WORKSPACE_INDEX_MIN_ROWS = 1_000  # no workspace would get one today

    assert workspace_indexes_rebuild_outdated() == [workspace]

    assert existing_workspace_indexes() == {workspace}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef(%s::regclass)", [gin])
        assert "gin (search_vector, metadata jsonb_path_ops)" in cursor.fetchone()[0]
    assert workspace_indexes_rebuild_outdated() == []


def leave_invalid_index(name: str) -> None:
    """What a crash or a kill in the middle of ``CREATE INDEX CONCURRENTLY`` leaves: an
    INVALID index of that name (here from a unique build that fails on duplicates)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS leftover (x int)")
        cursor.execute("INSERT INTO leftover VALUES (1), (1)")
        with pytest.raises(Exception, match="could not create unique index"):
            cursor.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {name} ON leftover (x)")
        cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [name])
        assert cursor.fetchone() == (False,)


@pytest.mark.django_db(transaction=True)
def test_an_index_build_that_crashed_is_rebuilt(shared_table, alice):
    workspace = alice.agent.workspace_id
    try:
        leave_invalid_index(f"memory_hnsw_ws_{workspace}")
        assert existing_workspace_indexes() == set()  # an invalid index serves no search

        result = workspace_indexes_sync()

        assert result.created == [workspace]
        assert existing_workspace_indexes() == {workspace}
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT c.relname, i.indrelid::regclass::text, i.indisvalid FROM pg_index i "
                "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE %s",
                [f"memory_%_ws_{workspace}"],
            )
            rows = sorted(cursor.fetchall())
        assert rows == [
            (f"memory_gin_ws_{workspace}", "memories_memory", True),
            (f"memory_hnsw_ws_{workspace}", "memories_memory", True),
        ]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS leftover")


def _copies(memory: Memory, count: int, scope_id: int, prefix: str) -> None:
    """``count`` copies of ``memory`` in the scope ``scope_id``, written in one statement, each
    with its own mem_id, key and content hash, and no vector: thousands of one vector make a
    clump of the vector index's graph that links only to itself (every copy's nearest are the
    others), which outlives the test's rollback until a vacuum and leaves a memory written
    later unreachable by the searches of the tests after."""
    columns = [
        f.column
        for f in Memory._meta.concrete_fields
        if f.column not in {"id", "scope_id", "search_vector"}
    ]
    chosen = [
        {
            "mem_id": f"'{prefix}' || g",
            "idempotency_key": f"'{prefix}' || g",
            "content_hash": f"md5('{prefix}' || g)",
            "embedding": "NULL",
            "episode_embedding": "NULL",
        }.get(column, f'm."{column}"')
        for column in columns
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO memories_memory (scope_id, {', '.join(columns)}) "
            f"SELECT %s, {', '.join(chosen)} FROM memories_memory m, generate_series(1, %s) g "
            "WHERE m.id = %s",
            [scope_id, count, memory.pk],
        )


def _plan_nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _plan_nodes(child)


def test_a_key_is_found_by_its_index_in_a_scope_grown_since_the_last_analyze(alice, bob):
    """The idempotency key's lookup reads the key's index, not the scope: a scope the table's
    statistics have not seen yet (a new agent's, an import's) is expected to hold one row, and
    an index of the scope alone looked cheapest; the lookup read all 3,000 memories of it."""
    shared = memory_remember(agent=alice.agent, text="Shared note.", scope="team:accounts")
    _copies(shared.memory, 3000, shared.memory.scope_id, "shared")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    private = memory_remember(agent=bob.agent, text="Bob's own note.", idempotency_key="k0")
    _copies(private.memory, 3000, private.memory.scope_id, "bob")

    with CaptureQueriesContext(connection) as queries:
        found = by_idempotency_key(private.memory.scope, "k0")
        missing = by_idempotency_key(private.memory.scope, "k-unused \u00e9 ")
    assert found.pk == private.memory.pk and missing is None
    lookups = [q["sql"] for q in queries.captured_queries if '"idempotency_key" =' in q["sql"]]
    assert len(lookups) == 2
    for sql in lookups:
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
            ((plan,),) = cursor.fetchall()
        nodes = list(_plan_nodes(plan[0]["Plan"]))
        assert [n.get("Index Name") for n in nodes if "Index Name" in n] == [
            "memory_unique_scope_idempotency_key"
        ], plan
        assert sum(n.get("Rows Removed by Filter", 0) for n in nodes) == 0, plan
