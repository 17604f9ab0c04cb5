"""Ready for Citus (issue 22): the schema and the hot statements hold to
``meaning_memory.distribution``. Every table is classified once; every primary and unique key
of a distributed table includes ``workspace_id``; a foreign key between two distributed
tables is composite with it, and none points from a shared table into a distributed one; and
every statement a search, a traversal, a path, a compile, a list, a write that supersedes or
links, a curator's feedback or a consolidation run runs restricts every distributed table it
reads to one workspace named as a constant (so that Citus routes it to one shard), and every
row lock names it: checked on PostgreSQL's own plans of those statements, run on real data."""

from __future__ import annotations

import io
import json
import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from consolidation.services import consolidation_execute, consolidation_start
from meaning_memory.distribution import (
    DISTRIBUTED,
    DISTRIBUTION_COLUMN,
    LOCAL,
    REFERENCE,
    SESSION_SETTINGS,
    distribution_statements,
)
from meaning_memory.testing import make_actor
from memories.models import Membership, Memory
from memories.models.keys import WorkspaceForeignKey, WorkspaceOneToOneField, WorkspaceRow
from memories.operations import memory_remember
from memories.selectors.reader import Reader
from memories.services.feedback import memory_feedback_by_user
from memories.services.relations.links import link_add, link_remove

TEAM = "team:accounts"
ZEPHYR = [{"name": "Zephyr Logistics", "type": "customer"}]


def rows(sql: str, params=None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


KEYS = """
SELECT con.conrelid::regclass::text, con.conname, con.contype::text,
       array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i),
       con.confrelid::regclass::text,
       array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
WHERE n.nspname = 'public' AND con.contype IN ('p', 'u', 'f')
"""


@pytest.mark.django_db
def test_every_key_of_a_distributed_table_carries_the_workspace():
    tables = {name for (name,) in rows(
        "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
    )}  # fmt: skip
    listed = [*DISTRIBUTED, *REFERENCE, *LOCAL]
    assert len(listed) == len(set(listed)), "a table is listed twice"
    assert tables == set(listed), {
        "not classified": sorted(tables - set(listed)),
        "listed but absent": sorted(set(listed) - tables),
    }
    violations = []
    for table in DISTRIBUTED:
        nullable = rows(
            "SELECT is_nullable FROM information_schema.columns "
            "WHERE table_schema = 'public' AND table_name = %s AND column_name = %s",
            [table, DISTRIBUTION_COLUMN],
        )
        if nullable != [("NO",)]:
            violations.append(f"{table}: no NOT NULL {DISTRIBUTION_COLUMN} ({nullable})")
    for table, name, kind, columns, target, target_columns in rows(KEYS):
        if kind in ("p", "u") and table in DISTRIBUTED and DISTRIBUTION_COLUMN not in columns:
            violations.append(f"{table}.{name}: key {columns} without {DISTRIBUTION_COLUMN}")
        if kind != "f" or target not in DISTRIBUTED:
            continue
        if table not in DISTRIBUTED:
            violations.append(f"{table}.{name}: a {table} row points into {target}")
        elif (DISTRIBUTION_COLUMN, DISTRIBUTION_COLUMN) not in zip(
            columns, target_columns, strict=True
        ):
            violations.append(f"{table}.{name}: {columns} → {target}{target_columns}")
    # Unique indexes that no constraint declares (partial ones) count as keys too.
    for table, index, definition in rows(
        "SELECT t.relname, i.relname, pg_get_indexdef(x.indexrelid) FROM pg_index x "
        "JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid "
        "WHERE x.indisunique AND t.relname = ANY(%s)",
        [list(DISTRIBUTED)],
    ):
        columns = definition.split(" USING ", 1)[1].split(")", 1)[0]
        if DISTRIBUTION_COLUMN not in columns:
            violations.append(f"{table}.{index}: unique on {columns}")
    assert violations == []


@pytest.mark.django_db
def test_the_distribution_statements_follow_the_foreign_keys(settings):
    with connection.cursor() as cursor:
        statements = distribution_statements(cursor)
    reference = [s for s in statements if "create_reference_table" in s]
    distributed = [s for s in statements if "create_distributed_table" in s]
    assert len(reference) == len(REFERENCE) and len(distributed) == len(DISTRIBUTED)
    database = [s for s in statements if s.startswith("ALTER DATABASE")]
    assert statements == [*SESSION_SETTINGS, *reference, *distributed, *database]
    # The index scan's settings, which a search's connection options do not carry to the
    # workers, set on the database (the test's transaction takes them back).
    with connection.cursor() as cursor:
        for statement in database:
            cursor.execute(statement)
        cursor.execute(
            "SELECT setconfig FROM pg_db_role_setting s JOIN pg_database d "
            "ON d.oid = s.setdatabase WHERE d.datname = current_database() AND s.setrole = 0"
        )
        (found,) = cursor.fetchone()
    assert sorted(found) == sorted(
        [f"hnsw.ef_search={settings.MM_HNSW_EF_SEARCH}", "hnsw.iterative_scan=relaxed_order"]
    )
    order = [s.split("'")[1] for s in reference + distributed]
    position = {table: i for i, table in enumerate(order)}
    for table, _, kind, _, target, _ in rows(KEYS):
        if kind == "f" and table in position and target in position and table != target:
            assert position[target] < position[table], (table, target)
    first = distributed[0].split("'")[1]
    assert all(f"colocate_with => '{first}'" in s for s in distributed[1:])
    # What `meaning-memory distribution` prints.
    out = io.StringIO()
    call_command("distribution", stdout=out)
    assert out.getvalue().splitlines() == statements


def _keys_between_distributed_tables():
    for model in apps.get_models():
        if model._meta.db_table not in DISTRIBUTED:
            continue
        for field in model._meta.concrete_fields:
            if field.is_relation and field.related_model._meta.db_table in DISTRIBUTED:
                yield model, field


@pytest.mark.django_db
def test_every_join_between_distributed_tables_matches_the_workspace():
    """Django joins along a key by its id; Citus runs a join on one node only when it matches
    the distribution column too (tried: "complex joins are only supported when ... joined on
    their distribution columns"). Both ways along every such key, the join matches it."""
    keys = list(_keys_between_distributed_tables())
    assert len(keys) >= 19
    for model, field in keys:
        assert isinstance(field, WorkspaceForeignKey | WorkspaceOneToOneField), field
        other = field.related_model
        forward = str(model.objects.values(f"{field.name}__{DISTRIBUTION_COLUMN}").query)
        joined = forward.split(" JOIN ", 1)[1].split(" WHERE ")[0]
        assert f'"{field.column}" = ' in joined and f'"{DISTRIBUTION_COLUMN}" = (' in joined, (
            field,
            forward,
        )
        if field.remote_field.hidden:  # related_name "+": no way back to join along
            continue
        lookup = field.related_query_name()
        backward = str(other.objects.filter(**{f"{lookup}__{DISTRIBUTION_COLUMN}": 1}).query)
        joined = backward.split(" JOIN ", 1)[1].split(" WHERE ")[0]
        assert f'"{DISTRIBUTION_COLUMN}" = (' in joined, (field, backward)


@pytest.mark.django_db
def test_a_saved_row_of_workspace_data_is_updated_where_its_workspace_is():
    """Citus refuses an UPDATE that sets the distribution column, to its own value too
    ("modifying the partition value of rows is not allowed", tried), and an UPDATE by id
    alone asks every shard: saving a row names its workspace and never sets it."""
    for model in apps.get_models():
        assert issubclass(model, WorkspaceRow) == (model._meta.db_table in DISTRIBUTED), model
    alice = make_actor("acme", "alice")
    other = make_actor("globex", "carol")
    memory = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory
    memory.significance = 0.5
    memory.workspace_id = other.agent.workspace_id  # a row never moves: not written
    with (
        CaptureQueriesContext(connection) as queries,
        pytest.raises(ValueError, match="in another workspace: a row never moves"),
        transaction.atomic(),
    ):
        memory.save()
    (update,) = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assigned, where = update.split(" WHERE ")
    assert f'"{DISTRIBUTION_COLUMN}"' not in assigned and f'"{DISTRIBUTION_COLUMN}" =' in where
    memory.refresh_from_db()
    assert memory.workspace_id == alice.agent.workspace_id and memory.significance != 0.5
    memory.significance = 0.5
    memory.save()
    memory.refresh_from_db()
    assert memory.significance == 0.5
    assert Memory.objects.filter(workspace_id=other.agent.workspace_id).count() == 0


class Recorder:
    """Every statement run on the connection (its text and parameters)."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, object]] = []

    def __call__(self, execute, sql, params, many, context):
        self.statements.append((sql, params))
        return execute(sql, params, many, context)


CONDITIONS = ("Index Cond", "Filter", "Recheck Cond", "TID Cond")


def _conditions(node: dict) -> list[str]:
    found = [node[key] for key in CONDITIONS if key in node]
    if node.get("Index Name"):
        predicate = rows(
            "SELECT pg_get_expr(indpred, indrelid) FROM pg_index WHERE indexrelid = %s::regclass",
            [node["Index Name"]],
        )
        if predicate and predicate[0][0]:
            found.append(predicate[0][0])
    for child in node.get("Plans", []):
        if child["Node Type"] in ("Bitmap Index Scan", "BitmapAnd", "BitmapOr"):
            found += _conditions(child)
    return found


#: A scan of one workspace's rows: a condition compares its column with a constant or a
#: parameter. (A comparison with another table's column inside a subquery restricts the rows
#: on one PostgreSQL too, but does not tell Citus which shard the subquery reads: refused.)
ONE_WORKSPACE = re.compile(rf"\b{DISTRIBUTION_COLUMN} = ('?\d+'?(::\w+)?|\$\d+)")


#: The one statement that reads every shard: which workspace a memory a curator names by its id
#: alone is in (its row is then locked and read there).
WHICH_WORKSPACE = (
    'SELECT "memories_memory"."workspace_id" AS "workspace_id" FROM "memories_memory" '
    'WHERE "memories_memory"."id" = %s '
)


def not_one_workspace(plan: dict) -> list[str]:
    """The scans of distributed tables in a plan that no constant workspace restricts."""
    missing = []
    relation = plan.get("Relation Name")
    if relation in DISTRIBUTED and not any(
        ONE_WORKSPACE.search(condition) for condition in _conditions(plan)
    ):
        missing.append(f"{plan['Node Type']} on {relation} ({plan.get('Alias')})")
    for child in plan.get("Plans", []):
        missing += not_one_workspace(child)
    return missing


@pytest.fixture
def workspace_data(settings):
    from memories.models import Entity
    from memories.operations import memory_remember

    settings.MM_TRAVERSAL = True
    settings.MM_OPEN_THREADS = True
    alice = make_actor("acme", "alice", scopes=[TEAM])
    make_actor("globex", "charlie")
    start = timezone.now() - timedelta(days=30)

    def remember(text, **fields):
        return memory_remember(agent=alice.agent, text=text, **fields).memory

    hub = remember("The Zephyr renewal is due in March.", scope=TEAM, entities=ZEPHYR)
    support = remember(
        "Finance approved the March renewal budget.",
        scope=TEAM,
        links=[{"to": hub.mem_id, "type": "supports"}],
    )
    remember(
        "The budget line is under operations.",
        scope=TEAM,
        links=[{"to": support.mem_id, "type": "relates_to"}],
    )
    remember(
        "Zephyr renews in June now.",
        scope=TEAM,
        entities=ZEPHYR,
        supersedes=hub.mem_id,
    )
    for day in range(3):
        remember(
            f"Pottery class {day}: the bowl goes in the kiln.",
            session=f"s{day}",
            memory_type="episodic",
            created_at=start + timedelta(days=7 * day),
        )
    entity = Entity.objects.get(workspace_id=alice.agent.workspace_id, name="Zephyr Logistics")
    return alice, hub, support, entity


SEARCHES = [
    {"query": "Zephyr renewal"},
    {"query": "renewal budget", "category": "fact", "min_s_score": 0.1, "source": "api"},
    {"query": "renewal", "perspective": "self", "source_kind": "observed"},
    {"query": "renewal", "entity": "Zephyr Logistics"},
    {"query": "renewal", "attributed_to": "Zephyr Logistics"},
    {"query": "renewal", "min_r": 1},
    {"query": "renewal", "expand": "graph"},
    {"query": "renewal", "currently_valid": False},
    {"query": "pottery kiln", "memory_type": "episodic"},
]


@pytest.mark.django_db
def test_search_traversal_compile_and_list_read_one_workspace(workspace_data):
    from memories.compile import compiled_memory_file
    from memories.operations import memory_search
    from memories.selectors.memories import memory_list
    from memories.selectors.traversal import path_between, traverse_from

    alice, hub, support, entity = workspace_data
    agent = alice.agent
    searches = [
        *SEARCHES,
        {"query": "renewal", "related_to": support.mem_id, "link_types": ["supports"]},
        {"query": "renewal", "as_of": (timezone.now() - timedelta(days=1)).isoformat()},
    ]
    recorder = Recorder()
    with connection.execute_wrapper(recorder):
        for arguments in searches:
            memory_search(Reader.of_agent(agent), arguments=arguments)
        traverse_from(Reader.of_agent(agent), start=support.mem_id, depth=3)
        traverse_from(Reader.of_agent(agent), start=entity.entity_id, depth=2)
        path_between(Reader.of_agent(agent), start=support.mem_id, end=entity.entity_id, depth=3)
        compiled_memory_file(Reader.of_agent(agent))
        list(memory_list(Reader.of_agent(agent), {}, timezone.now())[:20])
    checked, violations = 0, {}
    for sql, params in recorder.statements:
        text = sql.lstrip().upper()
        if not text.startswith(("SELECT", "WITH")) or not any(t in sql for t in DISTRIBUTED):
            continue
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            plan = cursor.fetchone()[0]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        checked += 1
        missing = not_one_workspace(plan[0]["Plan"])
        if missing:
            violations[" ".join(sql.split())[:300]] = missing
    assert checked >= 20, checked  # the statements were seen
    print("VIOL", json.dumps(violations, indent=1))
    assert violations == {}


@pytest.mark.django_db(transaction=True)
def test_writes_and_a_consolidation_run_lock_and_read_one_workspace(workspace_data, client):
    """Superseding, adding and removing a link, a curator's feedback and decision, erasing, and
    a consolidation run of every default phase: each row lock names the workspace, and each
    statement that reads a distributed table reads it for one workspace named as a constant
    (what Citus needs to send the statement to one shard; on a cluster the same statements
    run in ``test_citus.py``)."""
    alice, hub, support, entity = workspace_data
    agent = alice.agent
    carol = get_user_model().objects.create_user("carol", password="pw")
    Membership.objects.create(user=carol, workspace=agent.workspace, role="curator")
    recorder = Recorder()
    with connection.execute_wrapper(recorder):
        newer = memory_remember(
            agent=agent, text="Zephyr renews in July now.", scope=TEAM, supersedes=support.mem_id
        ).memory
        added = link_add(agent=agent, mem_id=newer.mem_id, to=hub.mem_id, kind="relates_to")
        link_remove(agent=agent, mem_id=newer.mem_id, link_id=added.link.link_id, reason="no")
        memory_feedback_by_user(user=carol, memory_pk=newer.pk, action="important", reason="ok")
        run = consolidation_execute(
            consolidation_start(workspace=agent.workspace, trigger="command")
        )
    assert run.status == run.Status.DONE, run.error
    locks = [sql for sql, _ in recorder.statements if "FOR UPDATE" in sql or "FOR SHARE" in sql]
    assert locks, "no row was locked"
    assert [sql for sql in locks if not re.search(r'\."workspace_id" = %s', sql)] == []
    checked, violations = 0, {}
    for sql, params in recorder.statements:
        text = sql.lstrip().upper()
        if not text.startswith(("SELECT", "WITH")) or not any(t in sql for t in DISTRIBUTED):
            continue
        if "FOR UPDATE" in text or "FOR SHARE" in text:
            continue  # checked above: EXPLAIN of a lock would take it
        if sql.startswith(WHICH_WORKSPACE):
            continue  # a curator names a memory by id alone: its workspace is looked up first
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            plan = cursor.fetchone()[0]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        checked += 1
        if missing := not_one_workspace(plan[0]["Plan"]):
            violations[" ".join(sql.split())[:300]] = missing
    assert checked >= 50, checked
    print("VIOL", json.dumps(violations, indent=1))
    assert violations == {}
