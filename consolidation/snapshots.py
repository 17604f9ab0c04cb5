"""The compiled files consolidation keeps for agents (``CompiledSnapshot``): each one records
the memories whose words it may hold, by their ids, and an erasure drops every file that names
an erased memory. A file never matches a memory by its text: the file collapses white space and
cuts lines, so a text's words are not found in it as they were written."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Q

from consolidation.models import CompiledSnapshot, ConsolidationRun
from memories.compile import CompiledFile
from memories.models import Agent, Memory


@transaction.atomic
def snapshot_keep(*, agent: Agent, compiled: CompiledFile, run: ConsolidationRun) -> bool:
    """Keep ``compiled`` as ``agent``'s file, with the memories it may quote; False (nothing
    kept, the agent's earlier file left as it is) when one of them was erased since it was
    compiled. Their rows are locked until the file is stored (``FOR KEY SHARE``), so an
    erasure either waits and then drops the file, or erased them first and the file is not
    kept."""
    wanted = sorted(set(compiled.memory_pks))
    if wanted:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id FROM {Memory._meta.db_table} "
                "WHERE id = ANY(%s) AND workspace_id = %s FOR KEY SHARE",
                [wanted, agent.workspace_id],
            )
            if len(cursor.fetchall()) < len(wanted):
                return False
    CompiledSnapshot.objects.update_or_create(
        workspace_id=agent.workspace_id,
        agent=agent,
        defaults={
            "markdown": compiled.markdown,
            "tokens": compiled.tokens,
            "as_of": compiled.as_of,
            "run": run,
            "memory_ids": wanted,
        },
    )
    return True


def snapshots_drop(*, workspace_id: int, memory_pks: list[int]) -> int:
    """Drop the kept files of ``workspace_id`` that name one of ``memory_pks`` (in the
    erasure's transaction, while it holds their rows). A file kept before the files recorded
    their memories (``memory_ids`` is NULL, before consolidation 0006) may quote any memory:
    those are dropped too, whichever memories are erased. The next run's compile phase keeps
    new ones; until then ``/api/v1/compiled/kept`` answers 404 and the live file serves."""
    named = Q(memory_ids__overlap=memory_pks) | Q(memory_ids__isnull=True)
    dropped, _ = CompiledSnapshot.objects.filter(named, workspace_id=workspace_id).delete()
    return dropped
