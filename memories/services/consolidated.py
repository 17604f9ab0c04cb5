"""What consolidation writes to the memories: its ``relates_to`` links, the bundled scorer's
scores, its threads and their members. Consolidation's phases decide what changes (and skip a
dry run); these store it, so every write to the memories' tables goes through a service."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from memories.models import Link, Memory, Thread, ThreadMember
from memories.services.provenance import Action, record

#: Why a score the bundled scorer filled is in a memory's history.
RESCORE_REASON = "consolidation: the bundled scorer filled empty dimensions"


def links_relate(*, workspace_id: int, pairs: Mapping[tuple[int, int], tuple[float, str]]) -> None:
    """A ``relates_to`` link (origin consolidation) from each newer memory to the older one of
    its pair, ``(newer id, older id) -> (cosine similarity, why)``, weighted by the similarity;
    a pair linked already is left as it is. In the caller's transaction: one statement."""
    Link.objects.bulk_create(
        [
            Link(
                workspace_id=workspace_id,
                source_id=newer,
                target_memory_id=older,
                kind="relates_to",
                weight=min(max(similarity, 0.0), 1.0),
                origin=Link.Origin.CONSOLIDATION,
                evidence={"similarity": round(similarity, 6), "why": why},
            )
            for (newer, older), (similarity, why) in pairs.items()
        ],
        ignore_conflicts=True,
    )


def memories_rescore(*, memories: Sequence[Memory], scores: Sequence[Mapping[str, float]]) -> int:
    """Each memory's dimensions in its ``scores`` (dimension -> score) set with origin
    ``scorer``, and a provenance event each saying they were empty, in one transaction; a
    memory with no scores is left. Returns how many memories changed."""
    changed = 0
    with transaction.atomic():
        for memory, found in zip(memories, scores, strict=True):
            if not found:
                continue
            for dim, value in found.items():
                setattr(memory, f"{dim}_score", value)
                setattr(memory, f"{dim}_origin", Memory.ScoreOrigin.SCORER)
            memory.save(
                update_fields=[*(f"{d}_score" for d in found), *(f"{d}_origin" for d in found)]
            )
            record(
                memory,
                Action.RESCORE,
                old=dict.fromkeys((f"{d}_score" for d in found), None),
                new={f"{d}_score": v for d, v in found.items()},
                reason=RESCORE_REASON,
            )
            changed += 1
    return changed


def thread_store(
    *,
    workspace_id: int,
    scope_id: int,
    thread_pk: int | None,
    label: str,
    size: int,
    centroid: np.ndarray,
    words: dict[str, float],
    first_seen: datetime,
    last_seen: datetime,
    title: str,
    members: Iterable[tuple[int, dict[str, Any]]],
) -> int:
    """A thread of the scope created (no ``thread_pk``) or its values replaced, and its new
    ``members`` (memory id, evidence) added; returns its pk. In the caller's transaction, which
    holds a batch of threads whole."""
    values = {
        "size": size,
        "centroid": centroid,
        "words": words,
        "first_seen": first_seen,
        "last_seen": last_seen,
        "title": title,
    }
    if thread_pk is None:
        thread_pk = Thread.objects.create(
            workspace_id=workspace_id, scope_id=scope_id, label=label, **values
        ).pk
    else:
        Thread.objects.filter(workspace_id=workspace_id, pk=thread_pk).update(
            **values, updated_at=timezone.now()
        )
    ThreadMember.objects.bulk_create(
        [
            ThreadMember(
                workspace_id=workspace_id, thread_id=thread_pk, memory_id=memory_id, evidence=e
            )
            for memory_id, e in members
        ]
    )
    return thread_pk


def thread_status_set(*, workspace_id: int, thread_pk: int, cues: list[Any]) -> Thread:
    """A thread's cues, its status (open while it has a cue, else resolved) and the number of
    sessions its members are turns of, counted now; returns the thread as stored."""
    thread = Thread.objects.filter(workspace_id=workspace_id, pk=thread_pk)
    sessions = Memory.objects.filter(
        workspace_id=workspace_id, thread_member__thread_id=thread_pk
    ).exclude(session="")
    thread.update(
        cues=cues,
        status=Thread.Status.OPEN if cues else Thread.Status.RESOLVED,
        sessions=sessions.values("session").distinct().count(),
    )
    return thread.get()
