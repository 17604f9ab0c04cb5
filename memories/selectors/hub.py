"""What a team reads on an entity's page (a customer's, a person's) and on a conversation's:
what is true now, what changed and why, what is promised and what is ahead, who and what else
is involved, and where it came from. Every part is read from the memories the reader sees, and
bounded, so a customer with thousands of memories reads as fast as one with ten."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Max, Min, QuerySet

from memories.models import Entity, Link, Memory, ProvenanceEvent, Thread
from memories.selectors.reader import Reader
from memories.selectors.relations import entity_members
from memories.selectors.subjects import Group, roles, subject_groups
from memories.temporal.validity import not_yet_valid_q, valid_at_q

#: How many changes, commitments, dates ahead, related entities and sessions are shown.
CHANGES_SHOWN = 20
LIST_SHOWN = 12
RELATED_SHOWN = 24
SESSIONS_SHOWN = 20


@dataclass
class Change:
    """A supersession: ``before`` stopped being true when ``after`` was written (``after`` is
    None when the reader may not see it). ``undone`` when a curator made ``before`` active
    again since."""

    before: Memory
    after: Memory | None
    when: datetime
    actor: str
    reason: str
    undone: bool = False


@dataclass
class Related:
    entity: Entity
    memories: int
    #: What the notes true now say the person is ("CTO", "main contact"): ``subjects.roles``.
    role: str = ""


@dataclass
class Session:
    name: str
    memories: int
    first: datetime
    last: datetime


@dataclass
class Hub:
    #: Grouped by what each memory is about (``subjects.subject_groups``); ``now_true_more``
    #: when more memories were true now than it groups.
    now_true: list[Group] = field(default_factory=list)
    now_true_more: bool = False
    changes: list[Change] = field(default_factory=list)
    commitments: list[Memory] = field(default_factory=list)
    ahead: list[Memory] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)
    sessions: list[Session] = field(default_factory=list)
    threads: list[Thread] = field(default_factory=list)


def entity_hub(reader: Reader, entity: Entity, memories: QuerySet[Memory], now: datetime) -> Hub:
    """The hub of ``entity`` from ``memories``, those that mention it that the reader sees
    (``entity_memories``)."""
    own = entity_members(entity)
    hub = _hub(reader, memories, now, entity, own)
    hub.related = related_entities(memories, own)
    _read_roles(hub, memories, now, [entity.name, *entity.aliases])
    hub.sessions = _sessions(memories)
    return hub


def session_hub(reader: Reader, memories: QuerySet[Memory], now: datetime) -> Hub:
    """What consolidation made of a conversation, from its memories the reader sees: the facts
    true now, the changes, the entities it mentions and its threads."""
    hub = _hub(reader, memories, now, None, [])
    hub.related = related_entities(memories, [])
    _read_roles(hub, memories, now, [])
    hub.threads = _threads(reader, memories)
    return hub


def _current(memories: QuerySet[Memory], now: datetime) -> QuerySet[Memory]:
    return memories.filter(status=Memory.Status.ACTIVE).filter(valid_at_q(now))


def _hub(
    reader: Reader,
    memories: QuerySet[Memory],
    now: datetime,
    entity: Entity | None,
    own: list[int],
) -> Hub:
    active = memories.filter(status=Memory.Status.ACTIVE)
    current = _current(memories, now)
    groups, more = subject_groups(current, entity, own)
    return Hub(
        now_true=groups,
        now_true_more=more,
        changes=_changes(reader, memories),
        commitments=list(
            current.filter(category=Memory.Category.COMMITMENT)
            .select_related("attributed_to")  # each line says who said it
            .order_by("-created_at", "-id")[:LIST_SHOWN]
        ),
        ahead=list(
            active.filter(not_yet_valid_q(now))
            .select_related("attributed_to")
            .order_by("valid_from", "id")[:LIST_SHOWN]
        ),
    )


def _changes(reader: Reader, memories: QuerySet[Memory]) -> list[Change]:
    """The latest supersessions of these memories, each with who or what decided it and why
    (its history's supersede event), newest first, and those a curator undid since."""
    events = (
        ProvenanceEvent.objects.filter(
            workspace_id=reader.workspace_id,
            action=ProvenanceEvent.Action.SUPERSEDE,
            memory__in=memories.order_by().values("pk"),
        )
        .exclude(new_values__superseded_by=None)
        .filter(new_values__has_key="superseded_by")
        .select_related("memory", "memory__scope", "agent", "user")
        .defer(*(f"memory__{name}" for name in Memory.UNREAD_ON_PAGES))
        .order_by("-created_at", "-id")[:CHANGES_SHOWN]
    )
    events = list(events)
    successors = {
        m.mem_id: m
        for m in reader.sees(
            Memory.objects.filter(mem_id__in=[e.new_values["superseded_by"] for e in events])
        )
        .select_related("scope")
        .defer(*Memory.UNREAD_ON_PAGES)
    }
    restored = set(
        ProvenanceEvent.objects.filter(
            workspace_id=reader.workspace_id,
            action=ProvenanceEvent.Action.RESTORE,
            memory__in=[e.memory_id for e in events],
        ).values_list("memory_id", "created_at")
    )
    changes = []
    for event in events:
        undone = any(m == event.memory_id and at > event.created_at for m, at in restored)
        changes.append(
            Change(
                before=event.memory,
                after=successors.get(event.new_values["superseded_by"]),
                when=event.created_at,
                actor=event.actor if event.agent_id or event.user_id else "consolidation",
                reason=_why(event.reason),
                undone=undone and event.memory.status != Memory.Status.SUPERSEDED,
            )
        )
    return changes


def _why(reason: str) -> str:
    """The reason a supersede event gives, without the ``superseded by <id>`` it starts with
    (the page shows the memory itself)."""
    head, _, rest = reason.partition(": ")
    return rest if head.startswith("superseded by ") else reason


def related_entities(
    memories: QuerySet[Memory], own: list[int], shown: int = RELATED_SHOWN
) -> list[Related]:
    """The ``shown`` other entities (not ``own``) these memories mention, most shared first
    (people and customers alike: each with its type)."""
    counted = (
        Link.objects.filter(
            source__in=memories.order_by().values("pk"),
            target_entity__isnull=False,
            target_entity__merged_into__isnull=True,
            removed_at__isnull=True,
        )
        .exclude(target_entity_id__in=own)
        .values("target_entity")
        .annotate(n=Count("source", distinct=True))
        .order_by("-n", "target_entity")[:shown]
    )
    counts = {row["target_entity"]: row["n"] for row in counted}
    entities = Entity.objects.in_bulk(list(counts))
    return [Related(entities[pk], n) for pk, n in counts.items() if pk in entities]


def _read_roles(hub: Hub, memories: QuerySet[Memory], now: datetime, places: list[str]) -> None:
    """Each related person's role, as the memories true now give it."""
    people = [r.entity for r in hub.related if r.entity.kind == "person"]
    found = roles(_current(memories, now), people, places)
    for related in hub.related:
        related.role = found.get(related.entity.pk, "")


def _sessions(memories: QuerySet[Memory]) -> list[Session]:
    rows = (
        memories.exclude(session="")
        .order_by()
        .values("session")
        .annotate(n=Count("id"), first=Min("created_at"), last=Max("created_at"))
        .order_by("-last", "session")[:SESSIONS_SHOWN]
    )
    return [Session(r["session"], r["n"], r["first"], r["last"]) for r in rows]


def _threads(reader: Reader, memories: QuerySet[Memory]) -> list[Thread]:
    """The threads any of these memories belongs to."""
    threads = Thread.objects.filter(members__memory__in=memories.order_by().values("pk"))
    return list(reader.sees(threads).distinct().order_by("-last_seen", "id")[:LIST_SHOWN])


#: The entity types a hit names first (what a team files its memories by).
FIRST_KINDS = ("customer", "organization", "person")


def named_entities(memories: list[Memory]) -> dict[int, list[Entity]]:
    """The entities each memory mentions (merged ones as the entity they were merged into),
    customers first, in one statement for them all (a search's hits)."""
    if not memories:
        return {}
    rows = Link.objects.filter(
        workspace_id=memories[0].workspace_id,
        source__in=[m.pk for m in memories],
        target_entity__isnull=False,
        removed_at__isnull=True,
    ).values_list("source_id", "target_entity__merged_into_id", "target_entity_id")
    wanted: dict[int, set[int]] = {}
    for source, merged, pk in rows:
        wanted.setdefault(source, set()).add(merged or pk)
    entities = Entity.objects.in_bulk({pk for pks in wanted.values() for pk in pks})

    def order(entity: Entity) -> tuple[int, str]:
        kind = entity.kind
        return (FIRST_KINDS.index(kind) if kind in FIRST_KINDS else len(FIRST_KINDS), entity.name)

    return {
        source: sorted((entities[pk] for pk in pks if pk in entities), key=order)
        for source, pks in wanted.items()
    }
