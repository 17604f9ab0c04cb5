"""Plain-data views of memories and search hits, shared by every adapter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memories.compile import CUT_LIST_MAX, CompiledEntry, CompiledFile
from memories.errors import MemoryEngineError, ValidationFailed
from memories.models import (
    PLAIN_FIELDS,
    TIME_FIELDS,
    Divergence,
    Entity,
    Link,
    Memory,
    ProvenanceEvent,
)
from memories.search import SearchHit
from memories.selectors import enrichment_state, memory_history
from memories.selectors.first_seen import Known, as_known
from memories.selectors.reader import Reader
from memories.selectors.relations import LinkView, memory_entities, memory_links
from memories.selectors.sources import Record
from memories.selectors.traversal import Reached, made_by, step_time
from memories.services import BulkResult, iso
from memories.tokens import COUNTER_NAME

TABLE_TEXT_WIDTH = 80

#: Every engine error's HTTP status, by its ``code`` (``MemoryEngineError.code``): the REST
#: API answers with it, the MCP tools turn every one into a tool error with the same body, the
#: dashboard shows 404s as its 404 page and the rest as form errors or messages.
ERROR_STATUS = {
    "invalid": 400,
    "not_found": 404,
    "missing": 404,
    "conflicting": 409,
    "forbidden": 403,
    "conflict": 409,
    "embedder_unavailable": 503,
    "unavailable": 503,
    "divergence_model_failed": 502,
}
#: What precedes an error's message in its body, by code.
ERROR_PREFIX = {"embedder_unavailable": "embedder unavailable: "}


def error_status(exc: MemoryEngineError) -> int:
    """The HTTP status of an engine error: its code's in ``ERROR_STATUS``, else 400."""
    return ERROR_STATUS.get(exc.code, 400)


def error_response(exc: MemoryEngineError) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body of an engine error: a ValidationFailed's body maps each
    field to the rules it broke; any other's is ``{"detail": message}``."""
    status = error_status(exc)
    if isinstance(exc, ValidationFailed):
        return status, exc.errors
    return status, {"detail": ERROR_PREFIX.get(exc.code, "") + exc.message}


#: What the API keeps back of a memory's plain fields (``PLAIN_FIELDS``): the engine's own.
KEPT_BACK = frozenset({"episode_text", "idempotency_key", "relations_version"})


def memory_to_dict(memory: Memory) -> dict[str, Any]:
    return {
        "mem_id": memory.mem_id,
        **{name: getattr(memory, name) for name in PLAIN_FIELDS if name not in KEPT_BACK},
        **{name: iso(getattr(memory, name)) for name in TIME_FIELDS},
        "scope": memory.scope.name,
        "superseded_by": memory.superseded_by.mem_id if memory.superseded_by_id else None,
        "stare_scores": memory.stare_scores,
        "stare_origins": memory.stare_origins,
        "attributed_to": _attributed(memory),
        "source_kind": memory.source_kind or None,
    }


def _attributed(memory: Memory) -> dict[str, str] | None:
    """Who made the memory's claim."""
    entity = memory.claimant
    if entity is None:
        return None
    return {"entity_id": entity.entity_id, "name": entity.name, "type": entity.kind}


def provenance_to_dict(event: ProvenanceEvent) -> dict[str, Any]:
    return {
        "action": event.action,
        "actor": event.actor,
        "old": event.old_values,
        "new": event.new_values,
        "reason": event.reason,
        "at": iso(event.created_at),
    }


def memory_detail(memory: Memory, reader: Reader, *, written_now: bool = False) -> dict[str, Any]:
    """A memory with its entities, its links and its history, as ``reader`` may see them.

    ``written_now``: stored by this very request. While its enrichment is pending no one has
    made a link row from or to it yet (no one else knows its id; its own come with the
    enrichment), so only the engine's links are read."""
    events = memory_history(memory)
    state = enrichment_state(memory)
    if written_now and state == "pending":
        entities, seen = [], {}
        links = memory_links(reader, memory, rows=False)
    else:
        entities = memory_entities(memory)
        seen = as_known(reader, entities)
        links = memory_links(reader, memory)
    return {
        **memory_to_dict(memory),
        "entities": [entity_to_dict(e, seen=seen) for e in entities],
        "links": [link_to_dict(link) for link in links],
        "provenance": [provenance_to_dict(e) for e in events],
        "enrichment": state,
    }


def entity_to_dict(
    entity: Entity, mentions: int | None = None, seen: dict[int, Known] | None = None
) -> dict[str, Any]:
    """An entity; ``seen`` (``selectors.first_seen.as_known``) gives its ``created_at`` and
    ``origin`` as the reader knows them, when the reader is an agent."""
    known = seen[entity.pk] if seen is not None else Known(entity.created_at, entity.origin)
    data: dict[str, Any] = {
        "entity_id": entity.entity_id,
        "name": entity.name,
        "type": entity.kind,
        "aliases": entity.aliases,
        "declared": entity.declared,
        "origin": known.origin,
        "merged_into": entity.merged_into.entity_id if entity.merged_into_id else None,
        "created_at": iso(known.at),
    }
    if mentions is not None:
        data["mentions"] = mentions
    return data


def link_to_dict(link: LinkView) -> dict[str, Any]:
    """One of a memory's links: its type, which way it points, the other end, who or what made
    it and why."""
    other: dict[str, Any]
    if link.other_memory is not None:
        other = {"mem_id": link.other_memory.mem_id, "text": link.other_memory.text}
    else:
        entity = link.other_entity
        other = {"entity_id": entity.entity_id, "name": entity.name, "type": entity.kind}
    return {
        "link_id": link.link_id,
        "type": link.kind,
        "direction": link.direction,
        ("memory" if link.other_memory is not None else "entity"): other,
        "weight": link.weight,
        "origin": link.origin,
        "made_by": link.made_by,
        "evidence": link.evidence,
        "created_at": iso(link.created_at),
    }


def node_to_dict(node: Memory | Entity) -> dict[str, Any]:
    """A node of a traversal: a memory (its mem_id and text) or an entity."""
    if isinstance(node, Memory):
        return {"kind": "memory", "mem_id": node.mem_id, "text": node.text}
    return {"kind": "entity", "entity_id": node.entity_id, "name": node.name, "type": node.kind}


def path_to_list(reached: Reached) -> list[dict[str, Any]]:
    """A path, one step a link: the nodes it joins, its type and which way it points, who or
    what made it, its evidence and when."""
    steps = []
    pairs = zip(reached.nodes, reached.nodes[1:])  # noqa: B905 (one fewer pair than nodes)
    for (before, after), step in zip(pairs, reached.steps, strict=True):
        link = step.link
        steps.append(
            {
                "from": node_to_dict(before),
                "to": node_to_dict(after),
                "type": step.kind,
                "direction": step.direction,
                "link_id": link.link_id if link is not None else None,
                "origin": link.origin if link is not None else "engine",
                "made_by": made_by(step),
                "weight": link.weight if link is not None else 1.0,
                "evidence": link.evidence if link is not None else {},
                "created_at": iso(step_time(step)),
            }
        )
    return steps


def traversal_to_dict(start: Memory | Entity, reached: list[Reached]) -> dict[str, Any]:
    return {
        "from": node_to_dict(start),
        "count": len(reached),
        "nodes": [
            {"node": node_to_dict(r.node), "depth": r.depth, "path": path_to_list(r)}
            for r in reached
        ],
    }


def path_to_dict(
    start: Memory | Entity, end: Memory | Entity, found: Reached | None
) -> dict[str, Any]:
    return {
        "from": node_to_dict(start),
        "to": node_to_dict(end),
        "found": found is not None,
        "length": found.depth if found is not None else None,
        "path": path_to_list(found) if found is not None else [],
    }


def divergence_to_dict(divergence: Divergence) -> dict[str, Any]:
    """A divergence with both memories (the older first), why it was flagged and its state."""
    return {
        "divergence_id": divergence.divergence_id,
        "status": divergence.status,
        "score": round(divergence.score, 6),
        "detector": divergence.detector,
        "evidence": divergence.evidence,
        "memories": [
            {
                "mem_id": memory.mem_id,
                "text": memory.text,
                "source": memory.source,
                "scope": memory.scope.name,
                "created_at": iso(memory.created_at),
            }
            for memory in (divergence.first, divergence.second)
        ],
        "link_id": divergence.link.link_id if divergence.link_id else None,
        "reason": divergence.reason,
        "closed_by": divergence.closed_by.get_username() if divergence.closed_by_id else None,
        "closed_at": iso(divergence.closed_at),
        "created_at": iso(divergence.created_at),
    }


def stored_link_to_dict(link: Link) -> dict[str, Any]:
    """A link as stored (the answer to adding or removing one)."""
    return {
        "link_id": link.link_id,
        "type": link.kind,
        "from": link.source.mem_id,
        "to": link.target_memory.mem_id if link.target_memory_id else None,
        "entity": link.target_entity.entity_id if link.target_entity_id else None,
        "weight": link.weight,
        "origin": link.origin,
        "evidence": link.evidence,
        "created_at": iso(link.created_at),
        "removed_at": iso(link.removed_at),
    }


def hit_to_dict(hit: SearchHit, position: int) -> dict[str, object]:
    return {
        "rank": position,
        **memory_to_dict(hit.memory),
        "eligible": hit.eligible,
        "explanation": hit.explanation(),
    }


def results_table(hits: Iterable[SearchHit]) -> str:
    """The markdown table ``| # | mem_id | Sig | Eligible | Category | Date | Text |``."""
    lines = [
        "| # | mem_id | Sig | Eligible | Category | Date | Text |",
        "|---|---|---|---|---|---|---|",
    ]
    for position, hit in enumerate(hits, start=1):
        memory = hit.memory
        text = " ".join(memory.text.split())
        if len(text) > TABLE_TEXT_WIDTH:
            text = text[: TABLE_TEXT_WIDTH - 3] + "..."
        text = text.replace("|", "\\|")
        lines.append(
            f"| {position} | {memory.mem_id} | {memory.significance:.2f} | "
            f"{hit.eligible} | {memory.category} | {memory.created_at:%Y-%m-%d} | "
            f"{text} |"
        )
    return "\n".join(lines) + "\n"


def _entry_to_dict(entry: CompiledEntry) -> dict[str, object]:
    data: dict[str, object] = {
        "mem_id": entry.mem_id,
        "category": entry.category,
        "significance": entry.significance,
        "weight": entry.weight,
        "protected": entry.protected,
    }
    if entry.tokens is not None:
        data["tokens"] = entry.tokens
    if entry.reason:
        data["reason"] = entry.reason
    return data


def compiled_to_dict(compiled: CompiledFile) -> dict[str, object]:
    """The compiled memory file with what went in, what was cut and why."""
    options = compiled.options
    return {
        "as_of": iso(compiled.as_of),
        "budget": options.budget,
        "tokens": compiled.tokens,
        "token_counter": COUNTER_NAME,
        "display_mode": options.display_mode,
        "decay": options.decay.describe(),
        "show_ids": options.show_ids,
        "candidates": compiled.candidates,
        "included_count": len(compiled.included),
        "cut_count": compiled.cut_count,
        "cut_protected_count": compiled.cut_protected,
        "included": [_entry_to_dict(entry) for entry in compiled.included],
        "cut": [_entry_to_dict(entry) for entry in compiled.cut],
        "cut_listed_max": CUT_LIST_MAX,
        "markdown": compiled.markdown,
    }


def bulk_result_to_dict(result: BulkResult) -> dict[str, object]:
    memory = result.memory
    return {
        "index": result.index,
        "status": result.status,
        "mem_id": memory.mem_id,
        "stare_scores": memory.stare_scores,
        "stare_origins": memory.stare_origins,
    }


def bulk_results_to_dict(results: list[BulkResult]) -> dict[str, object]:
    """A bulk write's answer: how many were stored, how many were there already, and each."""
    stored = sum(1 for result in results if result.status == "stored")
    return {
        "stored": stored,
        "existing": len(results) - stored,
        "results": [bulk_result_to_dict(result) for result in results],
    }


def hits_to_list(hits: list[SearchHit]) -> list[dict[str, object]]:
    """Search hits in rank order, each with its rank and explanation."""
    return [hit_to_dict(hit, position) for position, hit in enumerate(hits, 1)]


#: How many of a source's records on topics its detail lists (most judged first).
SOURCE_TOPICS_LISTED = 20


def source_to_dict(record: Record) -> dict[str, object]:
    """A source's record: its memories, how many were found right and wrong, its estimate
    (shrunk toward the workspace's prior; ``memories.asymmetry.score``)."""
    return {
        "kind": record.kind,
        "key": record.key,
        "name": record.name,
        "memories": record.memories,
        "right": record.right,
        "wrong": record.wrong,
        "estimate": round(record.estimate, 6),
    }


def source_detail_to_dict(record: Record, events: list[dict]) -> dict[str, object]:
    """A source's record with its records on topics and the events behind it."""
    topics = sorted(record.on_topics.values(), key=lambda r: (-r.judged, r.name.lower()))
    return {
        **source_to_dict(record),
        "topics": [source_to_dict(t) for t in topics[:SOURCE_TOPICS_LISTED]],
        "events": [{**e, "at": iso(e["at"])} for e in events],
    }


def erasure_to_dict(erasure: Any) -> dict[str, Any]:
    """What an erasure removed (``memories.services.erase``): never what the memories said."""
    return {
        "erased": erasure.mem_ids,
        "count": erasure.count,
        "by": erasure.by,
        "episodes_rewritten": erasure.episodes_rewritten,
        "entities_removed": erasure.entities_removed,
        "dry_run": erasure.dry_run,
    }
