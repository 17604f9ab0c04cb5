"""What a reader sees: an agent its private scope and its shared ones; a team member the
whole workspace."""

from __future__ import annotations

from memories.models import Agent, Scope
from memories.reading import reader

#: The shared scopes an agent belongs to (one parameter: the agent's id).
SHARED_SCOPE_IDS_SQL = (
    f"SELECT scope_id FROM {Agent.scopes.through._meta.db_table} WHERE agent_id = %s"
)
#: Every scope of a workspace (one parameter: its id): what a team member reads.
WORKSPACE_SCOPE_IDS_SQL = f"SELECT id FROM {Scope._meta.db_table} WHERE workspace_id = %s"


def with_private_scope(agent: Agent, shared_scope_ids: list[int]) -> list[int]:
    return (
        [*shared_scope_ids, agent.private_scope_id] if agent.private_scope_id else shared_scope_ids
    )


def visible_scope_ids(agent: Agent) -> list[int]:
    """The agent's private scope plus every shared scope it belongs to.

    Every search and read asks this first, so it reads the membership table directly: the
    ORM's join through ``Scope`` costs more to build than to run. (Search asks it in the same
    round trip as the query's words: see ``memories.search``.)
    """
    with reader.cursor() as cursor:
        cursor.execute(SHARED_SCOPE_IDS_SQL, [agent.pk])
        return with_private_scope(agent, [scope_id for (scope_id,) in cursor.fetchall()])
