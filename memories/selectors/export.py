"""A workspace as JSON Lines records (``meaning-memory export``; ``services.transfer`` reads
them back): what an import into another workspace or install needs to rebuild it.

The records, in the order they are written (the format is described in docs/operations.md's
"Export and import"):

``header`` (the format, its version, the workspace, when, ``since``, whether vectors are in),
``scope``, ``agent`` (names and scopes, never tokens), ``entity`` (with its history),
``memory`` (every status; its scores, validity, attribution, episode and history; its vectors
with ``vectors``), ``link``, ``thread`` (with its members), ``divergence``, and ``end`` (the
count of each type: an import refuses a file cut short).

A memory is named everywhere in the file by its ``origin``: the ``mem_id`` it was first given
(``Memory.imported_from`` when an import brought it here, its own ``mem_id`` otherwise), so
that a file exported from an import names the same memories as the file imported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import Q, Value
from django.db.models.functions import Coalesce, NullIf

from memories.embeddings import current_model_name
from memories.exchange import FORMAT, FORMAT_VERSION, encode_vector
from memories.models import (
    PLAIN_FIELDS,
    STARE_DIMENSIONS,
    TIME_FIELDS,
    Agent,
    Divergence,
    Entity,
    Link,
    Memory,
    ProvenanceEvent,
    Scope,
    Thread,
    ThreadMember,
    Workspace,
)

#: Memories read (and their histories fetched) at a time.
CHUNK = 500


def origin_of(prefix: str = "") -> Coalesce:
    """The origin of a memory (``prefix`` names a relation to one, e.g. ``follows__``)."""
    return Coalesce(NullIf(f"{prefix}imported_from", Value("")), f"{prefix}mem_id")


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def export_records(
    workspace: Workspace, *, since: datetime | None = None, vectors: bool = False
) -> Iterator[dict[str, Any]]:
    """The workspace's records, one dict a line, read in chunks (a large workspace is never
    held in memory). With ``since``, the memories written since then, the links made or
    removed since then or from those memories, the threads changed since then and the
    divergences about those memories; scopes, agents and entities always."""
    counts: dict[str, int] = defaultdict(int)

    def counted(record: dict[str, Any]) -> dict[str, Any]:
        counts[record["type"]] += 1
        return record

    yield {
        "type": "header",
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "workspace": workspace.slug,
        "workspace_name": workspace.name,
        "since": iso(since),
        "vectors": vectors,
        "embedding_model": current_model_name(),
    }
    for record in _scopes(workspace):
        yield counted(record)
    for record in _agents(workspace):
        yield counted(record)
    for record in _entities(workspace):
        yield counted(record)
    memories = Memory.objects.filter(workspace=workspace)
    if since is not None:
        memories = memories.filter(created_at__gte=since)
    for record in _memories(memories, vectors=vectors):
        yield counted(record)
    links = Link.objects.filter(workspace=workspace)
    divergences = Divergence.objects.filter(workspace=workspace)
    threads = Thread.objects.filter(workspace=workspace)
    if since is not None:
        links = links.filter(
            Q(created_at__gte=since) | Q(removed_at__gte=since) | Q(source__created_at__gte=since)
        )
        divergences = divergences.filter(
            Q(first__created_at__gte=since) | Q(second__created_at__gte=since)
        )
        threads = threads.filter(updated_at__gte=since)
    for record in _links(links):
        yield counted(record)
    for record in _threads(threads):
        yield counted(record)
    for record in _divergences(divergences):
        yield counted(record)
    yield {"type": "end", "counts": dict(counts)}


def _scopes(workspace: Workspace) -> Iterator[dict[str, Any]]:
    for name, kind in (
        Scope.objects.filter(workspace=workspace).order_by("name").values_list("name", "kind")
    ):
        yield {"type": "scope", "name": name, "kind": kind}


def _agents(workspace: Workspace) -> Iterator[dict[str, Any]]:
    agents = (
        Agent.objects.filter(workspace=workspace)
        .order_by("name")
        .prefetch_related("scopes")
        .only("name", "is_active")
    )
    for agent in agents:
        yield {
            "type": "agent",
            "name": agent.name,
            "active": agent.is_active,
            "scopes": sorted(scope.name for scope in agent.scopes.all()),
        }


def _event(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "action": event["action"],
        "agent": event["agent__name"],
        "user": event["user__username"],
        "old": event["old_values"],
        "new": event["new_values"],
        "reason": event["reason"],
        "created_at": iso(event["created_at"]),
    }


EVENT_FIELDS = (
    "action",
    "agent__name",
    "user__username",
    "old_values",
    "new_values",
    "reason",
    "created_at",
)


def _histories(column: str, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The events of the memories (``column`` "memory") or entities ("subject_entity") of
    ``ids``, oldest first."""
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    events = (
        ProvenanceEvent.objects.filter(**{f"{column}__in": ids})
        .order_by("created_at", "id")
        .values(f"{column}_id", *EVENT_FIELDS)
    )
    for event in events:
        found[event[f"{column}_id"]].append(_event(event))
    return found


def _entities(workspace: Workspace) -> Iterator[dict[str, Any]]:
    rows = list(
        Entity.objects.filter(workspace=workspace)
        .order_by("id")
        .values(
            "id",
            "entity_id",
            "kind",
            "name",
            "aliases",
            "declared",
            "origin",
            "typed_by",
            "created_by_agent__name",
            "created_by_user__username",
            "merged_into__entity_id",
        )
    )
    for first in range(0, len(rows), CHUNK):
        chunk = rows[first : first + CHUNK]
        histories = _histories("subject_entity", [row["id"] for row in chunk])
        for row in chunk:
            yield {
                "type": "entity",
                "entity_id": row["entity_id"],
                "kind": row["kind"],
                "name": row["name"],
                "aliases": row["aliases"],
                "declared": row["declared"],
                "origin": row["origin"],
                "typed_by": row["typed_by"],
                "created_by_agent": row["created_by_agent__name"],
                "created_by_user": row["created_by_user__username"],
                "merged_into": row["merged_into__entity_id"],
                "history": histories.get(row["id"], []),
            }


def _memories(memories, *, vectors: bool) -> Iterator[dict[str, Any]]:
    columns = [
        "id",
        "mem_id",
        *PLAIN_FIELDS,
        *TIME_FIELDS,
        *(f"{d}_score" for d in STARE_DIMENSIONS),
        *(f"{d}_origin" for d in STARE_DIMENSIONS),
        "scope__name",
        "attributed_to__entity_id",
    ]
    if vectors:
        columns += ["embedding", "episode_embedding"]
    memories = memories.annotate(
        key=origin_of(),
        follows_key=origin_of("follows__"),
        superseded_by_key=origin_of("superseded_by__"),
    )
    after = 0
    while True:
        chunk = list(
            memories.filter(id__gt=after)
            .order_by("id")
            .values(*columns, "key", "follows_key", "superseded_by_key")[:CHUNK]
        )
        if not chunk:
            return
        after = chunk[-1]["id"]
        histories = _histories("memory", [row["id"] for row in chunk])
        for row in chunk:
            record = {
                "type": "memory",
                "origin": row["key"],
                "mem_id": row["mem_id"],
                "scope": row["scope__name"],
                **{name: row[name] for name in PLAIN_FIELDS},
                **{name: iso(row[name]) for name in TIME_FIELDS},
                "scores": {d: row[f"{d}_score"] for d in STARE_DIMENSIONS},
                "score_origins": {d: row[f"{d}_origin"] for d in STARE_DIMENSIONS},
                "attributed_to": row["attributed_to__entity_id"],
                "follows": row["follows_key"],
                "superseded_by": row["superseded_by_key"],
                "history": histories.get(row["id"], []),
            }
            if vectors:
                record["embedding"] = encode_vector(row["embedding"])
                record["episode_embedding"] = encode_vector(row["episode_embedding"])
            yield record


def _links(links) -> Iterator[dict[str, Any]]:
    rows = (
        links.annotate(source_key=origin_of("source__"), target_key=origin_of("target_memory__"))
        .order_by("id")
        .values(
            "link_id",
            "source_key",
            "target_key",
            "target_entity__entity_id",
            "kind",
            "weight",
            "origin",
            "agent__name",
            "user__username",
            "evidence",
            "created_at",
            "removed_at",
        )
    )
    for row in rows.iterator(chunk_size=2000):
        yield {
            "type": "link",
            "link_id": row["link_id"],
            "source": row["source_key"],
            "target_memory": row["target_key"],
            "target_entity": row["target_entity__entity_id"],
            "kind": row["kind"],
            "weight": row["weight"],
            "origin": row["origin"],
            "agent": row["agent__name"],
            "user": row["user__username"],
            "evidence": row["evidence"],
            "created_at": iso(row["created_at"]),
            "removed_at": iso(row["removed_at"]),
        }


def _threads(threads) -> Iterator[dict[str, Any]]:
    for thread in threads.select_related("scope").order_by("id").iterator(chunk_size=200):
        members = (
            ThreadMember.objects.filter(thread=thread)
            .annotate(key=origin_of("memory__"))
            .order_by("memory_id")
            .values("key", "evidence")
        )
        yield {
            "type": "thread",
            "thread_id": thread.thread_id,
            "scope": thread.scope.name,
            "label": thread.label,
            "title": thread.title,
            "status": thread.status,
            "first_seen": iso(thread.first_seen),
            "last_seen": iso(thread.last_seen),
            "size": thread.size,
            "sessions": thread.sessions,
            "cues": thread.cues,
            "words": thread.words,
            "members": [{"memory": m["key"], "evidence": m["evidence"]} for m in members],
        }


def _divergences(divergences) -> Iterator[dict[str, Any]]:
    rows = (
        divergences.annotate(first_key=origin_of("first__"), second_key=origin_of("second__"))
        .order_by("id")
        .values(
            "divergence_id",
            "first_key",
            "second_key",
            "link__link_id",
            "score",
            "detector",
            "evidence",
            "status",
            "reason",
            "closed_by__username",
            "closed_at",
            "created_at",
        )
    )
    for row in rows.iterator(chunk_size=2000):
        yield {
            "type": "divergence",
            "divergence_id": row["divergence_id"],
            "first": row["first_key"],
            "second": row["second_key"],
            "link": row["link__link_id"],
            "score": row["score"],
            "detector": row["detector"],
            "evidence": row["evidence"],
            "status": row["status"],
            "reason": row["reason"],
            "closed_by": row["closed_by__username"],
            "closed_at": iso(row["closed_at"]),
            "created_at": iso(row["created_at"]),
        }
