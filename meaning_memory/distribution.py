"""How the schema maps onto Citus, the distributed PostgreSQL that pgvector supports
(docs/SCALING.md, "Ready for Citus").

Every table is one of three kinds:

- **distributed** by ``workspace_id``, all colocated: a workspace's memories, links, entities,
  history, threads and runs live on one shard, so a search, a traversal or a compile, each of
  which names its workspace in every table it reads, runs on one node;
- **reference**: small and shared, copied to every node (workspaces, scopes, agents, users);
- **local**: the coordinator's own (the job queue, sessions, migrations, readiness evidence).

``meaning_memory/tests/test_distribution.py`` holds the schema to it: every table is listed
here exactly once; every primary key and unique key of a distributed table includes
``workspace_id``; a foreign key between two distributed tables is composite, with
``workspace_id``; none points from a reference or local table into a distributed one; and the
statements of search, traversal and compile restrict every distributed table they read to one
workspace. ``distribution_statements()`` is what to run on a Citus coordinator after
``migrate``.
"""

from __future__ import annotations

from django.conf import settings

from meaning_memory.db import index_scan_settings

DISTRIBUTION_COLUMN = "workspace_id"

#: Distributed by ``workspace_id``, colocated with one another (with the first).
DISTRIBUTED = (
    "memories_entity",
    "memories_memory",
    "memories_link",
    "memories_memorydegree",
    "memories_provenanceevent",
    "memories_divergence",
    "memories_divergencescan",
    "memories_thread",
    "memories_threadmember",
    "memories_sourcerecord",
    "memories_memoryenrichment",
    "consolidation_consolidationrun",
    "consolidation_phasewatermark",
    "consolidation_compiledsnapshot",
    "consolidation_supersessionproposal",
    "consolidation_threadcorpus",
    "consolidation_wordfrequency",
)

#: Small and shared: a copy on every node (a distributed table may point at them).
REFERENCE = (
    "django_content_type",
    "auth_permission",
    "auth_group",
    "auth_group_permissions",
    "auth_user",
    "auth_user_groups",
    "auth_user_user_permissions",
    "memories_workspace",
    "memories_scope",
    "memories_agent",
    "memories_agent_scopes",
    "memories_membership",
)

#: The coordinator's own tables: no workspace's data.
LOCAL = (
    "django_migrations",
    "django_session",
    "django_admin_log",
    "django_q_ormq",
    "django_q_schedule",
    "django_q_task",
    "memories_loginthrottle",
    "readiness_evaluationrun",
    "readiness_evidence",
)

#: Set first, in the session that runs the statements (tried on a Citus 13.2 cluster,
#: docs/SCALING.md):
#: - a local table that points at a reference table is made a "Citus local table" the moment
#:   that table becomes a reference table, and ``create_distributed_table`` then refuses it
#:   ("cannot complete operation on a table with identity column": the ids are identity
#:   columns): off, the workspace tables stay plain until each is distributed;
#: - Citus refuses to distribute a table with triggers unless told they are safe: each of the
#:   engine's triggers reads and writes rows of its own workspace only, on one shard group.
SESSION_SETTINGS = (
    "SET citus.enable_local_reference_table_foreign_keys = off;",
    "SET citus.enable_unsafe_triggers = on;",
)

#: Every foreign key of the public schema: (table, referenced table).
_FOREIGN_KEYS = """
SELECT con.conrelid::regclass::text, con.confrelid::regclass::text
FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
WHERE con.contype = 'f' AND n.nspname = 'public'
ORDER BY 1, 2
"""


def distribution_statements(cursor) -> list[str]:
    """The statements that distribute the schema ``cursor`` sees on a Citus coordinator: the
    session's settings, reference tables, then distributed ones, each after the tables its
    foreign keys point at (Citus requires it), every distributed table colocated with the
    first."""
    cursor.execute(_FOREIGN_KEYS)
    listed = [*REFERENCE, *DISTRIBUTED]
    after: dict[str, set[str]] = {table: set() for table in listed}
    for table, target in cursor.fetchall():
        if table in after and target in after and target != table:
            after[table].add(target)
    # Each table once all it points at are placed; among those ready, the first listed.
    order: list[str] = []
    while len(order) < len(listed):
        ready = [t for t in listed if t not in order and after[t] <= set(order)]
        if not ready:
            raise ValueError(f"foreign keys in a cycle among {sorted(set(listed) - set(order))}")
        order.append(ready[0])
    statements = [
        *SESSION_SETTINGS,
        *(f"SELECT create_reference_table('{table}');" for table in order if table in REFERENCE),
    ]
    first = None
    for table in order:
        if table not in DISTRIBUTED:
            continue
        if first is None:
            first = table
            statements.append(
                f"SELECT create_distributed_table('{table}', '{DISTRIBUTION_COLUMN}');"
            )
        else:
            statements.append(
                f"SELECT create_distributed_table('{table}', '{DISTRIBUTION_COLUMN}', "
                f"colocate_with => '{first}');"
            )
    # A search's HNSW scan runs on the worker that holds the workspace, in a connection the
    # coordinator opened: the engine's connection options do not reach it, the database's
    # settings do (Citus sends ALTER DATABASE ... SET to every worker).
    cursor.execute("SELECT current_database()")
    database = '"' + cursor.fetchone()[0].replace('"', '""') + '"'
    for name, value in index_scan_settings(settings.MM_HNSW_EF_SEARCH).items():
        statements.append(f"ALTER DATABASE {database} SET {name} = '{value}';")
    return statements


def distribute(cursor) -> bool:
    """Run ``distribution_statements()`` on a Citus coordinator whose schema is not distributed
    yet; False (nothing run) when it already is."""
    cursor.execute(
        "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = 'memories_memory'::regclass"
    )
    if cursor.fetchone()[0]:
        return False
    for statement in distribution_statements(cursor):
        cursor.execute(statement)
    return True
