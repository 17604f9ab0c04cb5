"""Reads: what an agent may see, one memory by id."""

from __future__ import annotations

import re

from django.db import connection

from memories.errors import NotFound
from memories.models import Agent, Memory


def agent_by_name(*, workspace_slug: str, name: str) -> Agent | None:
    """An active agent, for operators' commands that act as it."""
    return (
        Agent.objects.select_related("workspace", "private_scope")
        .filter(workspace__slug=workspace_slug, name=name, is_active=True)
        .first()
    )


#: The shared scopes an agent belongs to (one parameter: the agent's id).
SHARED_SCOPE_IDS_SQL = (
    f"SELECT scope_id FROM {Agent.scopes.through._meta.db_table} WHERE agent_id = %s"
)


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
    with connection.cursor() as cursor:
        cursor.execute(SHARED_SCOPE_IDS_SQL, [agent.pk])
        return with_private_scope(agent, [scope_id for (scope_id,) in cursor.fetchall()])


MEM_ID = re.compile(r"[0-9a-f]{16}")


def is_mem_id(value: object) -> bool:
    """The shape of a ``mem_id`` (16 lowercase hex characters): anything else names nothing,
    and is refused before it reaches the database (a NUL character would be an error there)."""
    return isinstance(value, str) and MEM_ID.fullmatch(value) is not None


def memory_get(*, agent: Agent, mem_id: str, for_update: bool = False) -> Memory:
    """One memory the agent may see. Anything else — another workspace's, another agent's
    private one, or an id that does not exist — is the same NotFound."""
    if not is_mem_id(mem_id):
        raise NotFound(f"no memory {mem_id!r}")
    queryset = Memory.objects.filter(
        workspace_id=agent.workspace_id, scope_id__in=visible_scope_ids(agent), mem_id=mem_id
    )
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    memory = queryset.select_related("scope", "superseded_by").first()
    if memory is None:
        raise NotFound(f"no memory {mem_id!r}")
    return memory
