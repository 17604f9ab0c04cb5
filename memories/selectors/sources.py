"""Sources' records: how often the memories of each writer and of each entity that made claims
were found right or wrong in a workspace, read live from the memories and their history (see
``memories.asymmetry.score`` for what counts and how an estimate is shrunk).

A reader sees the record its memories make: an agent's records count only the memories of the
scopes it reads (None: a team member, the whole workspace).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from memories.asymmetry.score import shrunk, workspace_prior
from memories.errors import NotFound
from memories.models import Entity, Link, Memory, ProvenanceEvent
from memories.reading import reader as database
from memories.selectors.reader import Reader
from memories.selectors.relations import entity_members

WRITER, ENTITY, TOPIC = "writer", "entity", "topic"

#: One row per judged or unjudged memory that counts: its writer, the entity its claim is
#: attributed to (merged entities as their target) and its verdict: 1 right, -1 wrong, 0 not
#: judged (the sign of its events).
VERDICTS = f"""
    WITH feedback AS (
        SELECT e.memory_id, sum(
            CASE WHEN e.action = 'important'
                    OR (e.action = 'resolve' AND e.new_values->>'outcome' = 'right') THEN 1
                WHEN e.action = 'demote'
                    OR (e.action = 'resolve' AND e.new_values->>'outcome' = 'wrong') THEN -1
                ELSE 0 END) AS net
        FROM {ProvenanceEvent._meta.db_table} e
        WHERE e.workspace_id = %(workspace)s AND e.action IN ('important', 'demote', 'resolve')
        GROUP BY e.memory_id
    ),
    verdicts AS (
        SELECT m.id, m.source, COALESCE(a.merged_into_id, m.attributed_to_id) AS attributed,
            sign(COALESCE(f.net, 0) - CASE
                WHEN m.status = 'superseded' AND r.source IS DISTINCT FROM m.source
                    AND (m.attributed_to_id IS NULL
                        OR r.attributed_to_id IS DISTINCT FROM m.attributed_to_id)
                THEN 1 ELSE 0 END)::int AS verdict
        FROM {Memory._meta.db_table} m
        LEFT JOIN feedback f ON f.memory_id = m.id
        LEFT JOIN {Entity._meta.db_table} a
            ON a.workspace_id = %(workspace)s AND a.id = m.attributed_to_id
        LEFT JOIN {Memory._meta.db_table} r
            ON r.workspace_id = %(workspace)s AND r.id = m.superseded_by_id
        WHERE m.workspace_id = %(workspace)s AND m.status IN ('active', 'superseded')
            AND (%(scopes)s::bigint[] IS NULL OR m.scope_id = ANY(%(scopes)s::bigint[]))
    )
"""
TALLY = "count(*), count(*) FILTER (WHERE verdict > 0), count(*) FILTER (WHERE verdict < 0)"
#: The topics of each memory: the entities it mentions (merged ones as their target).
TOPICS = f"""
    JOIN {Link._meta.db_table} l
        ON l.workspace_id = %(workspace)s AND l.source_id = v.id AND l.kind = 'mentions'
        AND l.removed_at IS NULL AND l.target_entity_id IS NOT NULL
    JOIN {Entity._meta.db_table} t ON t.workspace_id = %(workspace)s AND t.id = l.target_entity_id
"""


@dataclass
class Record:
    """One source's (or topic's) record and its shrunk estimate."""

    kind: str  # writer, entity or topic
    key: str  # the writer's name, or the entity's entity_id
    name: str
    memories: int
    right: int
    wrong: int
    estimate: float
    #: A source's records on the topics it has judged memories about, by the topic's entity_id.
    on_topics: dict[str, Record] = field(default_factory=dict)

    @property
    def judged(self) -> int:
        return self.right + self.wrong


@dataclass
class Records:
    """A workspace's records as one reader sees them."""

    prior: float
    strength: float
    right: int
    wrong: int
    sources: dict[tuple[str, str], Record]
    topics: dict[str, Record]


def _rows(sql: str, params: dict[str, Any]) -> list[tuple]:
    with database.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def source_records(reader: Reader) -> Records:
    """Every writer's, attributed entity's and topic's record in the workspace (a source's
    records on its topics with it), from the memories ``reader`` sees."""
    workspace_id, scope_ids = reader.workspace_id, reader.scope_ids
    params = {
        "workspace": workspace_id,
        "scopes": None if scope_ids is None else [int(s) for s in scope_ids],
    }
    strength = float(settings.MM_SOURCE_PRIOR_STRENGTH)
    writers = _rows(f"{VERDICTS} SELECT source, {TALLY} FROM verdicts GROUP BY source", params)
    entities = _rows(
        f"{VERDICTS} SELECT attributed, {TALLY} FROM verdicts "
        "WHERE attributed IS NOT NULL GROUP BY attributed",
        params,
    )
    topics = _rows(
        f"{VERDICTS} SELECT COALESCE(t.merged_into_id, t.id), {TALLY} FROM verdicts v {TOPICS} "
        "GROUP BY 1",
        params,
    )
    # A source's record on a topic: only where it has judged memories about it.
    pairs = _rows(
        f"{VERDICTS} SELECT v.attributed, CASE WHEN v.attributed IS NULL THEN v.source END, "
        f"COALESCE(t.merged_into_id, t.id), {TALLY} FROM verdicts v {TOPICS} "
        "WHERE v.verdict <> 0 GROUP BY 1, 2, 3",
        params,
    )
    right = sum(r for _, _, r, _ in writers)
    wrong = sum(w for _, _, _, w in writers)
    prior = workspace_prior(right, wrong)
    entity_pks = {pk for pk, *_ in entities} | {pk for pk, *_ in topics}
    entity_pks |= {pk for _, _, pk, *_ in pairs} | {pk for pk, *_ in pairs if pk is not None}
    named = dict(
        (pk, (entity_id, name))
        for pk, entity_id, name in Entity.objects.filter(
            workspace_id=workspace_id, pk__in=entity_pks
        ).values_list("pk", "entity_id", "name")
    )

    def record(kind: str, key: str, name: str, tally: tuple, toward: float) -> Record:
        memories, right, wrong = tally
        return Record(
            kind, key, name, memories, right, wrong, shrunk(right, wrong, toward, strength)
        )

    sources: dict[tuple[str, str], Record] = {}
    for source, *tally in writers:
        sources[(WRITER, source)] = record(WRITER, source, source, tuple(tally), prior)
    for pk, *tally in entities:
        entity_id, name = named[pk]
        sources[(ENTITY, entity_id)] = record(ENTITY, entity_id, name, tuple(tally), prior)
    by_topic: dict[str, Record] = {}
    for pk, *tally in topics:
        entity_id, name = named[pk]
        by_topic[entity_id] = record(TOPIC, entity_id, name, tuple(tally), prior)
    for attributed, writer, topic, *tally in pairs:
        key = (ENTITY, named[attributed][0]) if attributed is not None else (WRITER, writer)
        source = sources.get(key)
        if source is None:
            continue
        entity_id, name = named[topic]
        source.on_topics[entity_id] = record(TOPIC, entity_id, name, tuple(tally), source.estimate)
    return Records(prior, strength, right, wrong, sources, by_topic)


def source_events(reader: Reader, *, kind: str, key: str, limit: int = 50) -> list[dict[str, Any]]:
    """The events behind one source's record, newest first, from the memories ``reader`` sees:
    their feedback and divergences resolved, and their supersessions by another source."""
    workspace_id = reader.workspace_id
    memories = reader.sees(
        Memory.objects.exclude(status__in=[Memory.Status.FORGOTTEN, Memory.Status.MERGED])
    )
    if kind == WRITER:
        memories = memories.filter(source=key)
    else:
        memories = memories.filter(attributed_to__in=_entity_members(workspace_id, key))
    events = (
        ProvenanceEvent.objects.filter(
            memory__in=memories,
            action__in=[
                ProvenanceEvent.Action.IMPORTANT,
                ProvenanceEvent.Action.DEMOTE,
                ProvenanceEvent.Action.RESOLVE,
                ProvenanceEvent.Action.SUPERSEDE,
            ],
        )
        .select_related("memory", "agent", "user")
        .order_by("-created_at", "-id")[:limit]
    )
    found = []
    for event in events:
        effect = event_effect(event)
        found.append(
            {
                "mem_id": event.memory.mem_id,
                "text": event.memory.text,
                "action": event.action,
                "effect": effect,
                "actor": event.actor,
                "reason": event.reason,
                "at": event.created_at,
            }
        )
    return found


def event_effect(event: ProvenanceEvent) -> str:
    """What an event says of its memory's claim: right, wrong, or nothing (a supersession by
    the same source is an update; one by another source counts against the older memory)."""
    action = event.action
    if action == ProvenanceEvent.Action.IMPORTANT:
        return "right"
    if action == ProvenanceEvent.Action.DEMOTE:
        return "wrong"
    if action == ProvenanceEvent.Action.RESOLVE:
        return event.new_values.get("outcome") or "none"
    if action == ProvenanceEvent.Action.SUPERSEDE and event.old_values.get("status") == "active":
        memory = event.memory
        newer = memory.superseded_by
        if newer is not None and newer.source != memory.source:
            return "wrong"
    return "none"


def _entity_members(workspace_id: int, entity_id: str) -> list[int]:
    target = Entity.objects.filter(workspace_id=workspace_id, entity_id=entity_id).first()
    return [] if target is None else entity_members(target)


def source_list(records: Records, *, kind: str = "", query: str = "") -> list[Record]:
    """The sources of ``records`` (writers and attributed entities, or one ``kind``), those
    with the most judged memories first, then by name; ``query``: part of a name."""
    needle = query.strip().lower()
    found = [
        r
        for (k, _), r in records.sources.items()
        if (not kind or k == kind) and (not needle or needle in r.name.lower())
    ]
    return sorted(found, key=lambda r: (-r.judged, -r.memories, r.name.lower(), r.key))


def source_detail(records: Records, *, kind: str, key: str) -> Record:
    """One source's record; NotFound when the reader sees no memory of it (as one that does
    not exist)."""
    record = records.sources.get((kind, key))
    if record is None:
        raise NotFound(f"no {kind} source {key!r} among the memories you see.")
    return record
