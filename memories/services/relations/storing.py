"""A write's relations stored in its transaction: the entities it names resolved or created,
one link per (memory, other end, type), and its memories marked as extracted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memories.models import Agent, Entity, Link, Memory
from memories.relational.extraction import MODEL_NAME
from memories.services.relations import namesakes
from memories.services.relations.given import EntityRef, LinkRef
from memories.services.relations.recognition import Recognised
from memories.services.relations.resolution import EntityResolver, Resolved, _Request

#: What ``Memory.relations_version`` says once a memory's entities were extracted.
RELATIONS_VERSION = 1


@dataclass
class WrittenRelations:
    """One memory's relations as its write gives them."""

    memory: Memory
    entities: list[EntityRef]
    links: list[LinkRef]
    recognised: Recognised


def _requests(items: Sequence[WrittenRelations]) -> list[_Request]:
    """The names the memories' relations resolve, in order: the writer's entities, the speaker,
    the recogniser's spans."""
    requests: list[_Request] = []
    typed = Entity.TypedBy.WRITER
    for item in items:
        requests += [
            _Request(e.name, e.kind, Entity.Origin.WRITER, False, typed) for e in item.entities
        ]
        if item.recognised.speaker is not None:
            name = item.recognised.speaker[0]
            requests.append(
                _Request(name, "person", Entity.Origin.EXTRACTION, False, Entity.TypedBy.SPEAKER)
            )
        requests += [
            _Request(s.text, s.entity_type, Entity.Origin.EXTRACTION, True)
            for s in item.recognised.spans
        ]
    return requests


def names_of(items: Sequence[WrittenRelations]) -> list[str]:
    """Every name ``store_relations`` will resolve for ``items`` (a write's claimant resolved
    first locks them with its own: ``EntityResolver``'s ``also_lock``)."""
    return [request.name for request in _requests(items)]


def store_relations(
    items: Sequence[WrittenRelations], *, agent: Agent | None = None, user: Any = None
) -> int:
    """The entities and links of newly written memories (inside the write's transaction):
    entities resolved or created, one link per (memory, other end, type), the first source
    winning (writer, gazetteer, model). Returns how many links were stored."""
    if not items:
        return 0
    workspace_id = items[0].memory.workspace_id
    requests = _requests(items)
    resolver = EntityResolver(workspace_id, agent=agent, user=user)
    resolved = iter(resolver.resolve(requests))
    rows: list[Link] = []
    writer = Link.Origin.MEMBER if user is not None else Link.Origin.WRITER
    for item in items:
        memory = item.memory
        made = {"workspace_id": workspace_id, "source": memory}
        by_writer = {**made, "agent": agent, "user": user}  # the gazetteer and the model: by no one
        for ref in item.entities:
            found = next(resolved)
            rows.append(
                Link(
                    **by_writer,
                    target_entity_id=found.entity_id,
                    kind="mentions",
                    origin=writer,
                    evidence={"given": ref.name, "type": ref.kind, **_how(found)},
                )
            )
        # The gazetteer's finds (declared names, exactly or alike) and the names the workspace
        # knows already (exactly): one shape of evidence, the rule that found each.
        for finds, origin, rule in (
            (item.recognised.finds, Link.Origin.GAZETTEER, "gazetteer"),
            (item.recognised.known, Link.Origin.EXTRACTION, "known name"),
        ):
            for find in finds:
                evidence = {
                    "rule": rule,
                    "alias": find.alias,
                    "text": find.text,
                    "span": [find.start, find.end],
                }
                if rule == "gazetteer":
                    evidence["score"] = round(find.score, 1)
                rows.append(
                    Link(
                        **made,
                        target_entity_id=find.entity,
                        kind="mentions",
                        origin=origin,
                        evidence=evidence,
                    )
                )
        if item.recognised.speaker is not None:
            name, start, end = item.recognised.speaker
            found = next(resolved)
            rows.append(
                Link(
                    **made,
                    target_entity_id=found.entity_id,
                    kind="mentions",
                    origin=Link.Origin.EXTRACTION,
                    evidence={"rule": "speaker", "text": name, "span": [start, end], **_how(found)},
                )
            )
        for span in item.recognised.spans:
            found = next(resolved)
            rows.append(
                Link(
                    **made,
                    target_entity_id=found.entity_id,
                    kind="mentions",
                    origin=Link.Origin.EXTRACTION,
                    evidence={
                        "model": MODEL_NAME,
                        "label": span.label,
                        "text": span.text,
                        "span": [span.start, span.end],
                        **_how(found),
                    },
                )
            )
        for ref in item.links:
            rows.append(
                Link(
                    **by_writer,
                    target_memory=ref.target,
                    kind=ref.kind,
                    weight=ref.weight,
                    origin=writer,
                    evidence={"given": True},
                )
            )
    namesakes.fit_mentions(workspace_id, rows, resolver.scopes)
    unique: dict[tuple, Link] = {}
    for row in rows:
        end = ("m", row.target_memory.pk) if row.target_memory else ("e", row.target_entity_id)
        first = unique.setdefault((row.source.pk, end, row.kind), row)
        if first is not row and "span" in first.evidence and "span" in row.evidence:
            # One link per entity a memory mentions; each place it is named is kept.
            first.evidence.setdefault("spans", [first.evidence["span"]]).append(
                row.evidence["span"]
            )
    Link.objects.bulk_create(list(unique.values()), ignore_conflicts=True, batch_size=1_000)
    # A new memory is inserted with its version already (``Placed.build`` in
    # ``memories.services.remember``); an older one, linked now, is marked here.
    extracted = [
        item.memory.pk
        for item in items
        if item.recognised.extracted and item.memory.relations_version != RELATIONS_VERSION
    ]
    if extracted:
        Memory.objects.filter(pk__in=extracted).update(relations_version=RELATIONS_VERSION)
    return len(unique)


def _how(found: Resolved) -> dict[str, Any]:
    if found.how == "new":
        return {"resolved": "new entity"}
    return {"resolved": found.how, "matched": found.matched, "score": round(found.score, 1)}
