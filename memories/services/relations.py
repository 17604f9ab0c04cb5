"""What a memory connects to (the R of STARE): entities and typed links, made on every write.

Three sources name the entities a memory mentions, each recorded on the link it makes (its
``origin`` and ``evidence``):

* the writer: ``entities: [{"name": ..., "type": ...}]``, resolved within that type;
* the workspace's gazetteer (its ``declared`` entities): their names and aliases found in the
  text, exactly or alike (``MM_ENTITY_MATCH_SCORE``; ``memories.gazetteer``);
* named-entity recognition (``memories.extraction``, ``MM_ENTITY_EXTRACTION``). Where a name it
  found overlaps a gazetteer find, the gazetteer wins.

Resolution (``EntityResolver``): a name is an existing entity of the workspace when its
normalised form is one of that entity's names or aliases, else when it is alike one
(rapidfuzz's ratio ≥ ``MM_ENTITY_MATCH_SCORE``) among the entities of the same type; else a new
entity. A name the model found takes an exact match of any type (a declared one first), since
the model's type is a guess. A merged entity stands for the one it was merged into.

Writers link memories too: ``links: [{"to": mem_id, "type": "supports"}]``. ``supersedes`` and
``follows`` are not link rows: they are the memories' own ``superseded_by`` and ``follows``, read
as links (``memories.selectors.relations``). Every link stays in its workspace; a removed link
keeps its row, with the reason in its memory's history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memories import rules
from memories.errors import Errors, NotFound, ValidationFailed
from memories.extraction import MODEL_NAME, Span, extract
from memories.gazetteer import Found, Gazetteer, best_match, normalize, tokens
from memories.models import Agent, Entity, Link, Memory, Workspace
from memories.reading import note_writes
from memories.selectors.memories import memory_get
from memories.selectors.permissions import require_role
from memories.selectors.relations import entity_get, visible_entities
from memories.selectors.visibility import visible_scope_ids
from memories.services.provenance import Action, record

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"R/links": "beta"}
#: What ``Memory.relations_version`` says once a memory's entities were extracted.
RELATIONS_VERSION = 1
#: Most entities a fuzzy match compares a name with.
FUZZY_CANDIDATES_MAX = 5_000


# --- What a writer gives ---------------------------------------------------------------------


@dataclass(frozen=True)
class EntityRef:
    name: str
    kind: str


@dataclass(frozen=True)
class LinkRef:
    target: Memory
    kind: str
    weight: float


def check_entities(value: Any, errors: Errors, field_name: str = "entities") -> list[EntityRef]:
    """The writer's ``entities`` (a list of ``{"name", "type"}``), each rule broken named as
    ``entities[<i>].<field>``."""
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(field_name, 'must be a list of {"name": ..., "type": ...}.')
        return []
    if len(value) > settings.MM_MAX_ENTITIES_PER_MEMORY:
        errors.add(
            field_name,
            f"must hold at most {settings.MM_MAX_ENTITIES_PER_MEMORY} entities "
            f"(got {len(value)}; MM_MAX_ENTITIES_PER_MEMORY).",
        )
        return []
    found = []
    for i, item in enumerate(value):
        name, kind = (
            (item.get("name"), item.get("type")) if isinstance(item, dict) else (None, None)
        )
        message = rules.entity_name(name)
        errors.check(f"{field_name}[{i}].name", message)
        errors.check(f"{field_name}[{i}].type", rules.entity_type(kind))
        if message is None and rules.entity_type(kind) is None:
            found.append(EntityRef(name.strip(), kind))
    return found


def check_links(
    agent: Agent, value: Any, errors: Errors, field_name: str = "links"
) -> list[LinkRef]:
    """The writer's ``links`` (a list of ``{"to": mem_id, "type", "weight"?}``). A target the
    agent cannot see is named exactly as one that does not exist."""
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(field_name, 'must be a list of {"to": mem_id, "type": ...}.')
        return []
    if len(value) > settings.MM_MAX_LINKS_PER_MEMORY:
        errors.add(
            field_name,
            f"must hold at most {settings.MM_MAX_LINKS_PER_MEMORY} links "
            f"(got {len(value)}; MM_MAX_LINKS_PER_MEMORY).",
        )
        return []
    wanted: list[tuple[int, str, str, float]] = []
    for i, item in enumerate(value):
        item = item if isinstance(item, dict) else {}
        to, kind, weight = item.get("to"), item.get("type"), item.get("weight", 1.0)
        broken = False
        for name, message in (
            ("to", rules.mem_id(to)),
            ("type", rules.link_type(kind)),
            ("weight", rules.unit_interval(weight) if weight is not None else "must be a number."),
        ):
            errors.check(f"{field_name}[{i}].{name}", message)
            broken = broken or message is not None
        if not broken:
            wanted.append((i, to, kind, float(weight)))
    visible = {
        m.mem_id: m
        for m in Memory.objects.filter(
            workspace_id=agent.workspace_id,
            scope_id__in=visible_scope_ids(agent),
            mem_id__in={to for _, to, _, _ in wanted},
        )
    }
    found = []
    for i, to, kind, weight in wanted:
        if to not in visible:
            errors.missing(f"{field_name}[{i}].to", f"no memory {to!r} is visible to this agent.")
        else:
            found.append(LinkRef(visible[to], kind, weight))
    return found


# --- What the text names -----------------------------------------------------------------------


@dataclass
class Recognised:
    """What one text names: the gazetteer's finds, and the model's names that no find
    overlaps."""

    finds: list[Found] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    extracted: bool = False


def workspace_gazetteer(workspace_id: int) -> Gazetteer:
    rows = Entity.objects.filter(
        workspace_id=workspace_id, declared=True, merged_into__isnull=True
    ).values_list("pk", "keys")
    return Gazetteer(
        ((key, pk) for pk, keys in rows for key in keys), settings.MM_ENTITY_MATCH_SCORE
    )


def recognise(workspace_id: int, texts: Sequence[str]) -> list[Recognised]:
    """The gazetteer's finds and the model's names in each text (CPU work: call it outside a
    transaction)."""
    gazetteer = workspace_gazetteer(workspace_id)
    spans = extract(list(texts))
    found = []
    for text, names in zip(texts, spans, strict=True):
        finds = gazetteer.find(text)
        taken = [(f.start, f.end) for f in finds]
        kept = [
            s
            for s in names
            if not any(s.start < end and start < s.end for start, end in taken)
            and len(s.text) <= rules.ENTITY_NAME_MAX  # a longer "name" is the model's mistake
        ]
        found.append(Recognised(finds, kept, extracted=settings.MM_ENTITY_EXTRACTION))
    return found


# --- Resolution --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Known:
    pk: int
    kind: str
    declared: bool
    origin: str
    merged_into_id: int | None

    @property
    def target(self) -> int:
        return self.merged_into_id or self.pk


@dataclass(frozen=True)
class Resolved:
    entity_id: int  # the entity's primary key (the one it was merged into, if merged)
    how: str  # "exact", "alike" or "new"
    score: float
    matched: str  # the normalised name or alias it matched


@dataclass(frozen=True)
class _Request:
    name: str
    kind: str
    origin: str
    any_kind: bool  # a model's guess: an exact match of any type will do


def _fitted(name: str) -> str:
    """``name`` cut to ``ENTITY_NAME_MAX`` characters, at the last space before if it has one."""
    if len(name) <= rules.ENTITY_NAME_MAX:
        return name
    cut = name[: rules.ENTITY_NAME_MAX]
    return cut.rsplit(" ", 1)[0] if " " in cut.strip() else cut


class EntityResolver:
    """Resolves names to a workspace's entities in a few statements for a whole batch."""

    def __init__(self, workspace_id: int, *, agent: Agent | None = None, user: Any = None) -> None:
        self.workspace_id = workspace_id
        self.agent, self.user = agent, user
        self.threshold = settings.MM_ENTITY_MATCH_SCORE
        # An agent's names resolve to the entities it may know of (declared ones, and those a
        # memory it sees mentions or is attributed to): what it is told (the evidence's
        # "resolved") never says that a name was written where it cannot read. A name whose
        # only entity it may not know of is a new entity to it (the row, one per type and
        # name in a workspace, is shared: see docs/SECURITY.md).
        self.entities = (
            visible_entities(workspace_id, visible_scope_ids(agent))
            if agent is not None
            else Entity.objects.filter(workspace_id=workspace_id)
        )

    def resolve(self, requests: Sequence[_Request]) -> list[Resolved]:
        # Names of any length come here (a model's span, a cued claimant, a casefolded name
        # that grew): each is kept to what an entity row holds, cut at a word.
        requests = [replace(r, name=_fitted(r.name)) for r in requests]
        keys = [_fitted(normalize(r.name)) for r in requests]
        # A model's guess at a name a writer of the same batch typed: the writer's type.
        typed: dict[str, str] = {}
        for request, key in zip(requests, keys, strict=True):
            if not request.any_kind:
                typed.setdefault(key, request.kind)
        requests = [
            replace(r, kind=typed[key]) if r.any_kind and key in typed else r
            for r, key in zip(requests, keys, strict=True)
        ]
        by_key = self._known(self.entities.filter(keys__overlap=sorted(set(keys))))
        results: list[Resolved | None] = [
            self._exact(r, key, by_key.get(key, [])) for r, key in zip(requests, keys, strict=True)
        ]
        missing = [i for i, found in enumerate(results) if found is None]
        if missing:
            candidates = self._candidates([keys[i] for i in missing])
            for i in missing:
                results[i] = self._alike(requests[i], keys[i], candidates)
        new = {
            (requests[i].kind, keys[i]): requests[i]
            for i, found in enumerate(results)
            if found is None
        }
        if new:
            created = self._create(new)
            for i, found in enumerate(results):
                if found is None:
                    results[i] = Resolved(
                        created[(requests[i].kind, keys[i])], "new", 100.0, keys[i]
                    )
        return [r for r in results if r is not None]

    def _known(self, queryset) -> dict[str, list[tuple[_Known, list[str]]]]:
        by_key: dict[str, list[tuple[_Known, list[str]]]] = {}
        rows = queryset.filter(workspace_id=self.workspace_id).values_list(
            "pk", "kind", "declared", "origin", "merged_into_id", "keys"
        )
        for pk, kind, declared, origin, merged_into_id, entity_keys in rows[:FUZZY_CANDIDATES_MAX]:
            known = _Known(pk, kind, declared, origin, merged_into_id)
            for key in entity_keys:
                by_key.setdefault(key, []).append((known, entity_keys))
        return by_key

    @staticmethod
    def _rank(known: _Known, kind: str) -> tuple:
        return (
            not known.declared,
            known.kind != kind,
            known.origin == Entity.Origin.EXTRACTION,
            known.pk,
        )

    def _exact(self, request: _Request, key: str, known: list) -> Resolved | None:
        matches = [k for k, _ in known if request.any_kind or k.kind == request.kind]
        if not matches:
            return None
        best = min(matches, key=lambda k: self._rank(k, request.kind))
        return Resolved(best.target, "exact", 100.0, key)

    def _candidates(self, keys: list[str]) -> dict[str, dict[str, _Known]]:
        """The entities sharing a token with any of ``keys``: by type, by name or alias."""
        by_kind: dict[str, dict[str, _Known]] = {}
        found = self._known(self.entities.filter(tokens__overlap=tokens(keys)))
        for key, entries in found.items():
            for known, _ in entries:
                by_kind.setdefault(known.kind, {}).setdefault(key, known)
        return by_kind

    def _alike(self, request: _Request, key: str, candidates) -> Resolved | None:
        known, score = best_match(key, candidates.get(request.kind, {}), self.threshold)
        if known is None:
            return None
        matched = next(k for k, v in candidates[request.kind].items() if v is known)
        return Resolved(known.target, "alike", score, matched)

    def _create(self, new: dict[tuple[str, str], _Request]) -> dict[tuple[str, str], int]:
        """Insert the new entities (one writer wins a race; the others find its row)."""
        Entity.objects.bulk_create(
            [
                Entity(
                    workspace_id=self.workspace_id,
                    kind=kind,
                    name=request.name,
                    normalized=key,
                    keys=[key],
                    tokens=tokens([key]),
                    origin=request.origin,
                    created_by_agent=self.agent,
                    created_by_user=self.user,
                )
                for (kind, key), request in new.items()
            ],
            ignore_conflicts=True,
        )
        rows = Entity.objects.filter(
            workspace_id=self.workspace_id, normalized__in={key for _, key in new}
        ).values_list("kind", "normalized", "pk", "merged_into_id")
        stored = {(kind, key): merged or pk for kind, key, pk, merged in rows}
        return {pair: stored[pair] for pair in new}


def attributed_entities(
    workspace_id: int, names: Sequence[tuple[str, str]], *, agent: Agent | None = None
) -> list[int]:
    """The entities that made memories' claims, from their names and origins (the writer's or
    a cue's): an exact match of any type, else a person alike, else a new person."""
    requests = [_Request(name, "person", origin, True) for name, origin in names]
    return [
        found.entity_id for found in EntityResolver(workspace_id, agent=agent).resolve(requests)
    ]


# --- Storing a write's relations ---------------------------------------------------------------


@dataclass
class WrittenRelations:
    """One memory's relations as its write gives them."""

    memory: Memory
    entities: list[EntityRef]
    links: list[LinkRef]
    recognised: Recognised


def store_relations(
    items: Sequence[WrittenRelations], *, agent: Agent | None = None, user: Any = None
) -> int:
    """The entities and links of newly written memories (inside the write's transaction):
    entities resolved or created, one link per (memory, other end, type), the first source
    winning (writer, gazetteer, model). Returns how many links were stored."""
    if not items:
        return 0
    workspace_id = items[0].memory.workspace_id
    requests: list[_Request] = []
    for item in items:
        requests += [_Request(e.name, e.kind, Entity.Origin.WRITER, False) for e in item.entities]
        requests += [
            _Request(s.text, s.entity_type, Entity.Origin.EXTRACTION, True)
            for s in item.recognised.spans
        ]
    resolved = iter(EntityResolver(workspace_id, agent=agent, user=user).resolve(requests))
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
        for find in item.recognised.finds:
            rows.append(
                Link(
                    **made,
                    target_entity_id=find.entity,
                    kind="mentions",
                    origin=Link.Origin.GAZETTEER,
                    evidence={
                        "rule": "gazetteer",
                        "alias": find.alias,
                        "text": find.text,
                        "span": [find.start, find.end],
                        "score": round(find.score, 1),
                    },
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
    unique: dict[tuple, Link] = {}
    for row in rows:
        end = ("m", row.target_memory.pk) if row.target_memory else ("e", row.target_entity_id)
        unique.setdefault((row.source.pk, end, row.kind), row)
    Link.objects.bulk_create(list(unique.values()), ignore_conflicts=True, batch_size=1_000)
    # A new memory is inserted with its version already (``PreparedMemory.build``); an older
    # one, linked now, is marked here.
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


# --- Links by hand -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkResult:
    link: Link
    created: bool


def link_add(
    *,
    agent: Agent,
    mem_id: str,
    to: str | None = None,
    entity: str | None = None,
    kind: str,
    weight: float | None = None,
    note: str = "",
) -> LinkResult:
    """Link one memory the agent sees to another it sees (``to``) or to an entity of the
    workspace (``entity``: its id). A memory or entity it cannot see is NotFound, as one that
    does not exist. The same active link again is that link (``created`` false)."""
    errors = Errors()
    errors.check("type", rules.link_type(kind))
    weight = 1.0 if weight is None else weight
    errors.check("weight", rules.unit_interval(weight))
    if (to is None) == (entity is None):
        errors.add("to", "give either to (a mem_id) or entity (an entity id), not both.")
    elif to is not None:
        errors.check("to", rules.mem_id(to))
    else:
        errors.check("entity", rules.public_id(entity, "entity id"))
    if to is not None and to == mem_id:
        errors.add("to", "a memory cannot be linked to itself.")
    errors.check("note", rules.storable_text(note))
    errors.raise_if_any()
    source = memory_get(agent=agent, mem_id=mem_id)
    target_memory = memory_get(agent=agent, mem_id=to) if to is not None else None
    target_entity = None
    if entity is not None:
        target_entity = entity_get(
            workspace_id=agent.workspace_id, entity_id=entity, scope_ids=visible_scope_ids(agent)
        )
    with transaction.atomic():
        existing = Link.objects.filter(
            source=source,
            target_memory=target_memory,
            target_entity=target_entity,
            kind=kind,
            removed_at__isnull=True,
        ).first()
        if existing is not None:
            return LinkResult(existing, created=False)
        link = Link.objects.create(
            workspace_id=agent.workspace_id,
            source=source,
            target_memory=target_memory,
            target_entity=target_entity,
            kind=kind,
            weight=weight,
            origin=Link.Origin.WRITER,
            agent=agent,
            evidence={"given": True, **({"note": note} if note else {})},
        )
        record(source, Action.LINK, agent=agent, new=_link_values(link))
    return LinkResult(link, created=True)


def link_remove(*, agent: Agent, mem_id: str, link_id: str, reason: str) -> Link:
    """Remove one of a memory's links (either end the memory) that the agent sees whole; the
    reason is kept in the memory's history. Another's link, or one it cannot see, is NotFound."""
    reason = (reason or "").strip()
    if message := rules.reason_given(reason, "say why the link goes."):
        raise ValidationFailed.single("reason", message)
    source = memory_get(agent=agent, mem_id=mem_id)
    scope_ids = visible_scope_ids(agent)
    with transaction.atomic():
        link = (
            Link.objects.select_for_update(of=("self",))
            .select_related("source", "target_memory", "target_entity")
            .filter(
                link_id=link_id if rules.mem_id(link_id) is None else "", removed_at__isnull=True
            )
            .filter(Q(source_id=source.pk) | Q(target_memory_id=source.pk))
            .first()
        )
        if link is None or not _sees_both_ends(link, scope_ids):
            raise NotFound(f"no link {link_id!r} on memory {mem_id!r}")
        link.removed_at = timezone.now()
        link.save(update_fields=["removed_at"])
        record(link.source, Action.UNLINK, agent=agent, old=_link_values(link), reason=reason)
    return link


def _sees_both_ends(link: Link, scope_ids: Iterable[int]) -> bool:
    scope_ids = set(scope_ids)
    if link.source.scope_id not in scope_ids:
        return False
    return link.target_memory is None or link.target_memory.scope_id in scope_ids


def _link_values(link: Link) -> dict[str, Any]:
    return {
        "link_id": link.link_id,
        "type": link.kind,
        "to": link.target_memory.mem_id if link.target_memory else None,
        "entity": link.target_entity.entity_id if link.target_entity else None,
        "weight": link.weight,
    }


# --- The gazetteer -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DeclareResult:
    entity: Entity
    created: bool


def check_declared(
    value: dict[str, Any], errors: Errors, prefix: str = ""
) -> tuple[str, str, list[str]] | None:
    """One declared entity's ``name``, ``type`` and ``aliases``, every broken rule named."""
    name, kind, aliases = value.get("name"), value.get("type"), value.get("aliases") or []
    broken = False
    for field_name, message in (
        ("name", rules.entity_name(name)),
        ("type", rules.entity_type(kind)),
    ):
        errors.check(prefix + field_name, message)
        broken = broken or message is not None
    if not isinstance(aliases, list):
        errors.add(prefix + "aliases", "must be a list of names.")
        return None
    if len(aliases) > settings.MM_MAX_ENTITIES_PER_MEMORY:
        errors.add(
            prefix + "aliases",
            f"must hold at most {settings.MM_MAX_ENTITIES_PER_MEMORY} names (got {len(aliases)}).",
        )
        return None
    for i, alias in enumerate(aliases):
        message = rules.entity_name(alias)
        errors.check(f"{prefix}aliases[{i}]", message)
        broken = broken or message is not None
    if broken:
        return None
    return name.strip(), kind, [a.strip() for a in aliases]


def entity_declare(
    *,
    workspace_id: int,
    name: str,
    kind: str,
    aliases: list[str] | None = None,
    agent: Agent | None = None,
    user: Any = None,
) -> DeclareResult:
    """Put an entity in the workspace's gazetteer: the entity of that type and name (or alias)
    if there is one, now declared and with these aliases too; else a new one. An alias that
    already names another declared entity is refused (a text would not know which it means)."""
    return entities_declare(
        workspace_id=workspace_id,
        items=[{"name": name, "type": kind, "aliases": aliases or []}],
        agent=agent,
        user=user,
        prefix_items=False,
    )[0]


def entities_declare(
    *,
    workspace_id: int,
    items: list[dict[str, Any]],
    agent: Agent | None = None,
    user: Any = None,
    prefix_items: bool = True,
) -> list[DeclareResult]:
    """Declare many entities (an imported file) at once: all checked first, then all stored
    in one transaction, or none. A team member needs the role for it (``require_role``)."""
    if user is not None:
        require_role(user, workspace_id, "declare entities")
    errors = Errors()
    checked = []
    for i, item in enumerate(items):
        prefix = f"entities[{i}]." if prefix_items else ""
        if not isinstance(item, dict):
            errors.add(prefix.rstrip(".") or "body", "must be an object with name and type.")
            continue
        unknown = sorted(set(item) - {"name", "type", "aliases"})
        for name in unknown:
            errors.add(prefix + name, "is not a known field.")
        found = check_declared(item, errors, prefix)
        if found is not None:
            checked.append((prefix, *found))
    errors.raise_if_any()
    results = []
    with transaction.atomic():
        lock_entities(workspace_id)
        note_writes([agent.pk if agent else None])
        for prefix, name, kind, aliases in checked:
            results.append(
                _declare_one(workspace_id, prefix, name, kind, aliases, agent, user, errors)
            )
        errors.raise_if_any()  # rolls the whole file back
    return [r for r in results if r is not None]


def _declare_one(workspace_id, prefix, name, kind, aliases, agent, user, errors):
    key = _fitted(normalize(name))
    alias_keys = [_fitted(normalize(a)) for a in aliases]
    entity = (
        Entity.objects.select_for_update()
        .filter(workspace_id=workspace_id, kind=kind, keys__contains=[key])
        .order_by("-declared", "pk")
        .first()
    )
    if entity is None:
        # The model's entity of that name, if it made one: its type was a guess; the team's
        # is not.
        entity = (
            Entity.objects.select_for_update()
            .filter(
                workspace_id=workspace_id,
                keys__contains=[key],
                origin=Entity.Origin.EXTRACTION,
                declared=False,
                merged_into__isnull=True,
            )
            .order_by("pk")
            .first()
        )
        if entity is not None:
            entity.kind = kind
    taken = (
        Entity.objects.filter(
            workspace_id=workspace_id, declared=True, keys__overlap=[key, *alias_keys]
        )
        .exclude(pk=entity.pk if entity else None)
        .values_list("name", "keys")
    )
    for other_name, other_keys in taken:
        for i, alias_key in enumerate([key, *alias_keys]):
            if alias_key in other_keys:
                field_name = "name" if i == 0 else f"aliases[{i - 1}]"
                errors.conflict(
                    prefix + field_name,
                    f"already names the declared entity {other_name!r}.",
                )
    if errors.errors:
        return None
    created = entity is None or not _known_to(agent, entity)
    if entity is not None and created:
        entity.name = name  # the row another scope's mention made: this declaration names it
    if entity is None:
        entity = Entity(
            workspace_id=workspace_id,
            kind=kind,
            name=name,
            normalized=key,
            origin=Entity.Origin.GAZETTEER if agent is not None else Entity.Origin.MEMBER,
            created_by_agent=agent,
            created_by_user=user,
        )
    if not entity.declared:
        entity.declared, entity.declared_at = True, timezone.now()
    entity.aliases = list(
        dict.fromkeys([*entity.aliases, *(a for a in aliases if a != entity.name)])
    )
    entity.keys = list(dict.fromkeys([entity.normalized, *entity.keys, key, *alias_keys]))
    entity.tokens = tokens(entity.keys)
    entity.save()
    return DeclareResult(entity, created)


def _known_to(agent: Agent | None, entity: Entity) -> bool:
    """Whether the declaring agent may know of ``entity`` (a team member knows every one): a
    declaration's answer (201 new, 200 known) says only what the caller could have seen."""
    if agent is None:
        return True
    scope_ids = visible_scope_ids(agent)
    return visible_entities(entity.workspace_id, scope_ids).filter(pk=entity.pk).exists()


#: First key of the advisory lock that serialises the gazetteer's changes in a workspace.
ENTITY_LOCK_NAMESPACE = 0x6D65  # "me"


def lock_entities(workspace_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)", [ENTITY_LOCK_NAMESPACE, workspace_id]
        )


# --- Backfill ----------------------------------------------------------------------------------


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
