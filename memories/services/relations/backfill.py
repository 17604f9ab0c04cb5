"""The backfill: entities and links for the memories written before extraction ran (or with
``MM_ENTITY_EXTRACTION`` off), in resumable batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memories.models import Memory, Workspace
from memories.services.relations.recognition import recognise
from memories.services.relations.storing import WrittenRelations, store_relations


@dataclass
class BackfillProgress:
    memories: int = 0
    links: int = 0
    remaining: int = 0


def link_backfill(
    *,
    workspace: Workspace,
    batch: int = 200,
    limit: int | None = None,
    progress: Any = None,
) -> BackfillProgress:
    """Extract entities and links for the workspace's memories that have none yet (written
    before this existed, or with ``MM_ENTITY_EXTRACTION`` off), oldest first, in batches of
    ``batch``. Each batch is one transaction that also marks its memories done, so a run that
    is stopped loses nothing and the next one goes on from there; running it again over done
    memories stores nothing twice (one active link per memory, other end and type)."""
    pending = Memory.objects.filter(workspace=workspace, relations_version__isnull=True)
    done = BackfillProgress(remaining=pending.count())
    last_id = 0
    while limit is None or done.memories < limit:
        size = batch if limit is None else min(batch, limit - done.memories)
        memories = list(
            pending.filter(pk__gt=last_id)
            .order_by("pk")
            .only("pk", "text", "workspace_id", "relations_version")[:size]
        )
        if not memories:
            break
        last_id = memories[-1].pk
        recognised = recognise(workspace.pk, [m.text for m in memories])
        with transaction.atomic():
            done.links += store_relations(
                [
                    WrittenRelations(memory, [], [], found)
                    for memory, found in zip(memories, recognised, strict=True)
                ]
            )
        done.memories += len(memories)
        done.remaining -= len(memories)
        if progress is not None:
            progress(done)
    return done
