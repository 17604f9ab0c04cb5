"""Names to a workspace's entities (``EntityResolver``, a batch at a time): an exact name or
alias, else one alike of the same type, else a new entity; a merged entity stands for the one
it was merged into (the rules in full: the package's docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings

from memories import rules
from memories.models import Agent, Entity
from memories.relational.gazetteer import best_match, normalize, tokens
from memories.selectors.relations import visible_entities
from memories.selectors.visibility import visible_scope_ids

#: Most entities a fuzzy match compares a name with.
FUZZY_CANDIDATES_MAX = 5_000


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
