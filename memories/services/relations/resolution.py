"""Names to a workspace's entities (``EntityResolver``, a batch at a time): an exact name or
alias (of the type its source gives among namesakes: ``namesakes``), else one alike of the same
type, else a new entity (one per name and type); a merged entity stands for the one it was
merged into; a surer source's type replaces a less sure one's (the rules in full: the package's
docstring).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import connection

from memories import rules
from memories.models import TYPE_RANK, Agent, Entity, Link, Memory
from memories.relational.gazetteer import best_match, normalize, tokens
from memories.selectors.reader import Reader
from memories.selectors.relations import entities_known
from memories.services.relations import namesakes

#: Most entities a fuzzy match compares a name with.
FUZZY_CANDIDATES_MAX = 5_000
#: The seed of the hash that names a new entity's lock (``EntityResolver._create``).
NAME_LOCK_SEED = 0x6D66


@dataclass(frozen=True)
class _Known:
    pk: int
    kind: str
    declared: bool
    origin: str
    merged_into_id: int | None
    typed_by: str
    #: The entity it stands for (itself, or the one it was merged into), as a namesake.
    stands_for: namesakes.Namesake

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
    any_kind: bool  # a guess at its type (the model's, a cue's): an entity of any type will do
    #: Who gives its type (``Entity.TypedBy``): a surer one retypes an entity a less sure one
    #: typed.
    typed_by: str = Entity.TypedBy.EXTRACTION


def _fitted(name: str) -> str:
    """``name`` cut to ``ENTITY_NAME_MAX`` characters, at the last space before if it has one."""
    if len(name) <= rules.ENTITY_NAME_MAX:
        return name
    cut = name[: rules.ENTITY_NAME_MAX]
    return cut.rsplit(" ", 1)[0] if " " in cut.strip() else cut


class EntityResolver:
    """Resolves names to a workspace's entities in a few statements for a whole batch: one
    entity per normalised name and kind of thing, the type a request gives choosing among
    namesakes (a surer source's type replaces a less sure one's: ``TYPE_RANK``)."""

    def __init__(
        self,
        workspace_id: int,
        *,
        agent: Agent | None = None,
        user: Any = None,
        also_lock: Sequence[str] = (),
    ) -> None:
        self.workspace_id = workspace_id
        self.agent, self.user = agent, user
        # Names a later resolution of the same transaction may make: locked with this one's
        # new names, in one sorted pass, so two writes never wait on each other's names.
        self.also_lock = {_fitted(normalize(name)) for name in also_lock}
        self.threshold = settings.MM_ENTITY_MATCH_SCORE
        # An agent's names resolve to the entities it may know of (declared ones, and those a
        # memory it sees mentions or is attributed to): what it is told (the evidence's
        # "resolved") never says that a name was written where it cannot read. A name whose
        # only entity it may not know of is a new entity to it (a guess takes that shared row,
        # a sure type the row of that name and type: see ``_create`` and docs/SECURITY.md).
        self.scopes = Reader.of_agent(agent).scope_list if agent is not None else None
        self.entities = (
            entities_known(workspace_id, self.scopes)
            if self.scopes is not None
            else Entity.objects.filter(workspace_id=workspace_id)
        )

    def resolve(self, requests: Sequence[_Request]) -> list[Resolved]:
        # Names of any length come here (a model's span, a cued claimant, a casefolded name
        # that grew): each is kept to what an entity row holds, cut at a word.
        requests = [replace(r, name=_fitted(r.name)) for r in requests]
        keys = [_fitted(normalize(r.name)) for r in requests]
        by_key = self._known(self.entities.filter(keys__overlap=sorted(set(keys))))
        results: list[Resolved | None] = [
            self._exact(request, key, by_key.get(key, []))
            for request, key in zip(requests, keys, strict=True)
        ]
        missing = [i for i, found in enumerate(results) if found is None]
        if missing:
            candidates = self._candidates([keys[i] for i in missing])
            for i in missing:
                results[i] = self._alike(requests[i], keys[i], candidates)
        # New names, by name and, for a sure source's type, kind of thing: one batch may name
        # two things of one name; a guess of a name a sure source names too is that entity.
        new: dict[tuple[str, str | None], list[_Request]] = {}
        parts: dict[int, tuple[str, str | None]] = {}
        for i, found in enumerate(results):
            if found is None:
                sure = TYPE_RANK[requests[i].typed_by] >= namesakes.SURE_RANK
                parts[i] = (keys[i], namesakes.thing(requests[i].kind) if sure else None)
        first_sure = {}
        for key, part in parts.values():
            if part is not None:
                first_sure.setdefault(key, (key, part))
        for i, group in parts.items():
            parts[i] = first_sure.get(group[0], group) if group[1] is None else group
            new.setdefault(parts[i], []).append(requests[i])
        if new:
            created = self._create(new)
            for i, group in parts.items():
                results[i] = Resolved(created[group], "new", 100.0, keys[i])
        resolved = [r for r in results if r is not None]
        self._retype(requests, resolved)
        return resolved

    def _known(self, queryset) -> dict[str, list[tuple[_Known, list[str]]]]:
        by_key: dict[str, list[tuple[_Known, list[str]]]] = {}
        rows = queryset.filter(workspace_id=self.workspace_id).values_list(
            "pk",
            "kind",
            "declared",
            "origin",
            "merged_into_id",
            "typed_by",
            "keys",
            "merged_into__kind",
            "merged_into__typed_by",
            "merged_into__declared",
        )
        for row in rows[:FUZZY_CANDIDATES_MAX]:
            pk, kind, declared, origin, merged, typed_by, entity_keys = row[:7]
            stands_for = (
                namesakes.Namesake(merged, *row[7:])
                if merged
                else namesakes.Namesake(pk, kind, typed_by, declared)
            )
            known = _Known(pk, kind, declared, origin, merged, typed_by, stands_for)
            for key in entity_keys:
                by_key.setdefault(key, []).append((known, entity_keys))
        return by_key

    @staticmethod
    def _exact(request: _Request, key: str, known: list) -> Resolved | None:
        """The entity named ``key`` (or with it as an alias) that the request means among
        namesakes (``namesakes.pick``); None when a sure source names another thing than all
        of them (a new namesake)."""
        if not known:
            return None
        candidates = list({k.target: k.stands_for for k, _ in known}.values())
        best = namesakes.pick(candidates, request.kind, request.typed_by)
        return None if best is None else Resolved(best.pk, "exact", 100.0, key)

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

    @staticmethod
    def _chosen(requests: list[_Request]) -> _Request:
        """The request whose type a new entity takes: the surest source's, else the type most
        of the model's guesses of the batch agree on (the first on a tie)."""
        surest = max(TYPE_RANK[r.typed_by] for r in requests)
        sure = [r for r in requests if TYPE_RANK[r.typed_by] == surest]
        votes = Counter(r.kind for r in sure)
        kind = max(votes, key=lambda k: (votes[k], -[r.kind for r in sure].index(k)))
        return next(r for r in sure if r.kind == kind)

    def _create(
        self, new: dict[tuple[str, str | None], list[_Request]]
    ) -> dict[tuple[str, str | None], int]:
        """Insert the new entities (``new``: by name and, for a sure type, kind of thing), one a
        name and type. A name new to this writer may be a row that memories it cannot read made:
        a guess (the model's) takes that row, as one entity per name did; a sure type takes the
        row of that very type, or a new one, so the type it is told is its own. Each new name is
        locked until the write commits, so two writers' guesses of one new name make one entity,
        not namesakes. Locks are taken in one sorted pass (with ``also_lock``'s): a write that
        resolves its claimant and then its mentions never holds one name while waiting for
        another that a second write holds while waiting for the first."""
        chosen = {group: self._chosen(requests) for group, requests in new.items()}
        names = sorted({key for key, _ in chosen})
        with connection.cursor() as cursor:
            for key in sorted(set(names) | self.also_lock):
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))",
                    [f"{self.workspace_id}:{key}", NAME_LOCK_SEED],
                )
        rows = self._standing(names)
        found: dict[tuple[str, str | None], int] = {}
        for group, request in chosen.items():
            candidates = rows.get(group[0], [])
            if candidates and TYPE_RANK[request.typed_by] < namesakes.SURE_RANK:
                found[group] = (
                    namesakes.by_kind(candidates, request.kind) or namesakes.surest(candidates)
                ).pk
        made = {group: request for group, request in chosen.items() if group not in found}
        Entity.objects.bulk_create(
            [
                Entity(
                    workspace_id=self.workspace_id,
                    kind=request.kind,
                    name=request.name,
                    normalized=key,
                    keys=[key],
                    tokens=tokens([key]),
                    origin=request.origin,
                    typed_by=request.typed_by,
                    created_by_agent=self.agent,
                    created_by_user=self.user,
                )
                for (key, _), request in made.items()
            ],
            ignore_conflicts=True,
        )
        rows = self._standing(sorted({key for key, _ in made}))
        for (key, part), request in made.items():
            found[key, part] = next(n.pk for n in rows[key] if n.kind == request.kind)
        return found

    def _standing(self, keys: list[str]) -> dict[str, list[namesakes.Namesake]]:
        """The entities standing for themselves named ``keys`` (every scope's), by name."""
        rows = Entity.objects.filter(
            workspace_id=self.workspace_id, normalized__in=keys, merged_into__isnull=True
        ).values_list("normalized", "pk", "kind", "typed_by", "declared")
        by_name: dict[str, list[namesakes.Namesake]] = {}
        for key, *row in rows:
            by_name.setdefault(key, []).append(namesakes.Namesake(*row))
        return by_name

    def _retype(self, requests: list[_Request], resolved: list[Resolved]) -> None:
        """A surer source's type replaces a less sure one's: a writer's ``customer`` over the
        model's ``organization``, a speaker's ``person`` over the model's guess; never the other
        way, and never a declared or curated type."""
        surest: dict[int, _Request] = {}
        for request, found in zip(requests, resolved, strict=True):
            # Only an entity its writer may know of: a name it resolved as new (the row of a
            # name only memories it cannot read wrote) keeps the type others gave it.
            if request.any_kind or found.how == "new":
                continue
            held = surest.get(found.entity_id)
            if held is None or TYPE_RANK[request.typed_by] > TYPE_RANK[held.typed_by]:
                surest[found.entity_id] = request
        if not surest:
            return
        current = dict(Entity.objects.filter(pk__in=list(surest)).values_list("pk", "typed_by"))
        wanted = [
            pk
            for pk, request in surest.items()
            if current.get(pk) is not None and TYPE_RANK[request.typed_by] > TYPE_RANK[current[pk]]
        ]
        # Never a type a namesake has: that would make two entities one name and type.
        taken = namesakes.collisions(self.workspace_id, {pk: surest[pk].kind for pk in wanted})
        wanted = [pk for pk in wanted if pk not in taken]
        if self.scopes is not None and wanted:
            # The row is the workspace's: an agent retypes only an entity no memory it cannot
            # read names, so a type never tells another agent what a private memory said.
            hidden = set(
                Link.objects.filter(
                    workspace_id=self.workspace_id,
                    target_entity_id__in=wanted,
                    removed_at__isnull=True,
                )
                .exclude(source_scope_id__in=self.scopes)
                .values_list("target_entity_id", flat=True)
            ) | set(
                Memory.objects.filter(workspace_id=self.workspace_id, attributed_to_id__in=wanted)
                .exclude(scope_id__in=self.scopes)
                .values_list("attributed_to_id", flat=True)
            )
            wanted = [pk for pk in wanted if pk not in hidden]
        for pk in wanted:
            request = surest[pk]
            Entity.objects.filter(pk=pk).update(kind=request.kind, typed_by=request.typed_by)


def attributed_entities(
    workspace_id: int,
    names: Sequence[tuple[str, str]],
    *,
    agent: Agent | None = None,
    also_lock: Sequence[str] = (),
) -> list[int]:
    """The entities that made memories' claims, from their names and origins (the writer's or
    a cue's): an exact match of any type, else a person alike, else a new person.
    ``also_lock``: the names the write resolves next (its mentions), locked with a new
    claimant's."""
    requests = [_Request(name, "person", origin, True) for name, origin in names]
    resolver = EntityResolver(workspace_id, agent=agent, also_lock=also_lock)
    return [found.entity_id for found in resolver.resolve(requests)]
