"""Namesakes: entities of one workspace with one name and different types ("Jordan" the person
and "Jordan" the country, "Phoenix" the project and the city). An entity is its name and its
type; which of them a mention means is read from its context:

1. **the type its source gives**: a writer's declared type, the recogniser's label (PERSON a
   person, GPE a place...), when exactly one namesake has it;
2. **the other names around it**: the namesake that more memories mention together with the
   other entities of the same text (a "Jordan" beside "Amman" is the country, beside "Jordan's
   manager" and the team's people the person);
3. else the surest typed (declared first), then the oldest: what one entity per name did.

A namesake is made only when a source that says what a name is (a writer, the team, a
curator) gives it a type that no namesake has, and every namesake's type was given by such a
source too: a recogniser's guess is a guess, and a writer's type replaces it
(``memories.services.relations.resolution``). One exception keeps private names private: a
writer who may not know of any entity of a name gets the row of the type it gives (made if
there is none), whatever rows memories it cannot read made, so the type it is told is its own.
A curator keeps namesakes together by merging them, apart by undoing a merge, and splits off
the mentions of another thing (``memories.services.entity_curation``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connection

from memories.kinds import ENTITY_TYPE_KINDS
from memories.models import TYPE_RANK, Entity, Link
from memories.relational.extraction import LABEL_TYPES
from memories.selectors.relations import entities_known

#: The least sure source whose type is an entity's identity rather than a guess.
SURE_RANK = TYPE_RANK[Entity.TypedBy.WRITER]


@dataclass(frozen=True)
class Namesake:
    pk: int
    kind: str
    typed_by: str
    declared: bool


def surest(candidates: Iterable[Namesake]) -> Namesake:
    """The namesake a mention with no context means: declared, surest typed, oldest."""
    return min(candidates, key=lambda n: (not n.declared, -TYPE_RANK[n.typed_by], n.pk))


def thing(kind: str) -> str:
    """What kind of thing an entity of type ``kind`` is (``ENTITY_TYPE_KINDS``)."""
    return ENTITY_TYPE_KINDS.get(kind, kind)


def by_kind(candidates: Sequence[Namesake], kind: str | None) -> Namesake | None:
    """The one namesake of type ``kind`` (else of its kind of thing), if exactly one has it."""
    if not kind:
        return None
    for fits in (lambda n: n.kind == kind, lambda n: thing(n.kind) == thing(kind)):
        fitting = [n for n in candidates if fits(n)]
        if len(fitting) == 1:
            return fitting[0]
        if fitting:
            return None
    return None


def pick(candidates: Sequence[Namesake], kind: str, typed_by: str) -> Namesake | None:
    """Which of one name's entities a name given as ``kind`` by ``typed_by`` is, or None when
    it is another thing (a new namesake): the one of that type (else of that kind of thing);
    else, for a sure source, one a guess typed (its type is then replaced) and otherwise none;
    for a guess, the surest."""
    if not candidates:
        return None
    fitted = by_kind(candidates, kind)
    if fitted is not None:
        return fitted
    if TYPE_RANK[typed_by] < SURE_RANK:
        return surest(candidates)
    guessed = [n for n in candidates if TYPE_RANK[n.typed_by] < SURE_RANK]
    return surest(guessed) if guessed else None


def hint(evidence: dict) -> str | None:
    """The type a link's evidence gives its mention: a writer's type, a conversation line's
    speaker (a person), the recogniser's label."""
    if evidence.get("type"):
        return str(evidence["type"])
    if evidence.get("rule") == "speaker":
        return "person"
    return LABEL_TYPES.get(evidence.get("label", ""))


def of(workspace_id: int, pks: Iterable[int]) -> dict[int, list[Namesake]]:
    """For each of ``pks`` that has namesakes: every entity (itself included) standing for
    itself with its name."""
    pks = sorted(set(pks))
    if not pks:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT e.id, n.id, n.kind, n.typed_by, n.declared
            FROM memories_entity e
            JOIN memories_entity n ON n.workspace_id = e.workspace_id
                AND n.normalized = e.normalized AND n.merged_into_id IS NULL
            WHERE e.workspace_id = %s AND e.id = ANY(%s) AND EXISTS (
                SELECT 1 FROM memories_entity o
                WHERE o.workspace_id = e.workspace_id AND o.normalized = e.normalized
                    AND o.merged_into_id IS NULL AND o.id <> e.id
            )
            """,
            [workspace_id, pks],
        )
        found: dict[int, list[Namesake]] = {}
        for pk, other, kind, typed_by, declared in cursor.fetchall():
            found.setdefault(pk, []).append(Namesake(other, kind, typed_by, declared))
    return found


#: The latest memories of each namesake that ``together`` reads: the names around a mention
#: are read from recent use, and a customer mentioned a hundred thousand times costs no more.
RECENT_MEMORIES = 1_000


def together(
    workspace_id: int, candidates: Iterable[int], context: Iterable[int], scope_ids
) -> dict[tuple[int, int], int]:
    """Of the latest ``RECENT_MEMORIES`` memories (that ``scope_ids`` may read; every one for
    None) mentioning each of ``candidates``, how many mention each of the ``context`` entities
    too."""
    candidates, context = sorted(set(candidates)), sorted(set(context))
    if not candidates or not context:
        return {}
    scoped = "" if scope_ids is None else "AND l.source_scope_id = ANY(%(scopes)s)"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT c.id, b.target_entity_id, count(DISTINCT a.source_id)
            FROM unnest(%(candidates)s::bigint[]) AS c(id)
            CROSS JOIN LATERAL (
                SELECT l.source_id FROM memories_link l
                WHERE l.target_entity_id = c.id AND l.workspace_id = %(workspace)s
                    AND l.removed_at IS NULL {scoped}
                ORDER BY l.source_id DESC
                LIMIT %(recent)s
            ) a
            JOIN memories_link b ON b.workspace_id = %(workspace)s AND b.source_id = a.source_id
            WHERE b.target_entity_id = ANY(%(context)s) AND b.removed_at IS NULL
            GROUP BY 1, 2
            """,
            {
                "workspace": workspace_id,
                "candidates": candidates,
                "context": context,
                "scopes": list(scope_ids or []),
                "recent": RECENT_MEMORIES,
            },
        )
        return {(a, b): n for a, b, n in cursor.fetchall()}


def choose(
    candidates: Sequence[Namesake],
    kind: str | None,
    context: Iterable[int],
    counts: dict[tuple[int, int], int],
) -> tuple[Namesake, str]:
    """The namesake a mention means and why (the module docstring's order): its type, then the
    other names around it (``counts``: ``together``'s answer), then the surest typed."""
    fitted = by_kind(candidates, kind)
    if fitted is not None:
        return fitted, "its type"
    context = set(context)
    scored = [
        (sum(counts.get((n.pk, c), 0) for c in context), n)
        for n in candidates
        if n.pk not in context
    ]
    best = max((score for score, _ in scored), default=0)
    if best > 0:
        leaders = [n for score, n in scored if score == best]
        if len(leaders) == 1:
            return leaders[0], "the names around it"
    return surest(candidates), "the surest typed"


def fit_mentions(workspace_id: int, rows: Sequence, scope_ids) -> None:
    """Each of a write's ``mentions`` link rows (``Link`` objects not saved yet) that a
    recogniser, a speaker or the gazetteer made, pointed at the namesake its context means:
    the one its writer named in the same memory, else ``choose``'s (the writer's own were
    resolved by their type). Only namesakes the writer may know of are chosen, and only the
    memories it may read count: ``scope_ids`` (an agent's), or with None each memory's own
    scope (a member's write, a backfill)."""
    guessed = [
        row
        for row in rows
        if row.target_entity_id is not None
        and row.origin not in (Link.Origin.WRITER, Link.Origin.MEMBER)
    ]
    found = of(workspace_id, {row.target_entity_id for row in guessed})
    if not found:
        return
    # What the write itself resolved or named: the resolver only ever gives what it may know.
    resolved = {
        row.target_entity_id
        for row in rows
        if row.target_entity_id is not None
        and ("resolved" in row.evidence or row.origin in (Link.Origin.WRITER, Link.Origin.MEMBER))
    }
    groups: dict[tuple[int, ...], list] = {}
    for row in guessed:
        scopes = tuple(sorted(scope_ids)) if scope_ids is not None else (row.source.scope_id,)
        groups.setdefault(scopes, []).append(row)
    for scopes, members in groups.items():
        _fit(workspace_id, rows, members, found, resolved, list(scopes))


def _fit(workspace_id, rows, guessed, found, resolved, scopes) -> None:
    """``fit_mentions`` for the rows of one set of readable scopes."""
    candidates = {n.pk for group in found.values() for n in group}
    known = resolved | set(
        entities_known(workspace_id, scopes).filter(pk__in=candidates).values_list("pk", flat=True)
    )
    sources = {id(row.source) for row in guessed}
    by_memory: dict[int, set[int]] = {}
    by_writer: dict[int, set[int]] = {}
    for row in rows:
        if row.target_entity_id is not None and id(row.source) in sources:
            by_memory.setdefault(id(row.source), set()).add(row.target_entity_id)
            if row.origin in (Link.Origin.WRITER, Link.Origin.MEMBER):
                by_writer.setdefault(id(row.source), set()).add(row.target_entity_id)
    counts = together(workspace_id, candidates & known, set().union(*by_memory.values()), scopes)
    for row in guessed:
        if row.target_entity_id not in found:
            continue
        group = [n for n in found[row.target_entity_id] if n.pk in known]
        seen = row.target_entity_id in known
        if not group or (seen and len(group) < 2):
            continue
        pks = {n.pk for n in group}
        written = by_writer.get(id(row.source), set()) & pks
        if len(written) == 1:  # the namesake its writer named in the same memory
            chosen, why = next(n for n in group if n.pk in written), "the writer's"
        else:
            context = by_memory[id(row.source)] - pks
            chosen, why = choose(group, hint(row.evidence), context, counts)
        if chosen.pk != row.target_entity_id:
            row.target_entity_id = chosen.pk
            if seen:  # an entity the writer could not know of is never named, even as "moved"
                row.evidence = {**row.evidence, "namesake": why}


def collisions(workspace_id: int, wanted: dict[int, str]) -> set[int]:
    """Of ``wanted`` (entity → the type it would take), those that would then be one name and
    kind of thing with another entity standing for itself: a namesake already of that kind,
    or another of ``wanted`` (the first by key is let through)."""
    if not wanted:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT e.id, e.normalized, n.id, n.kind
            FROM memories_entity e
            LEFT JOIN memories_entity n ON n.workspace_id = e.workspace_id
                AND n.normalized = e.normalized AND n.merged_into_id IS NULL AND n.id <> e.id
            WHERE e.workspace_id = %s AND e.id = ANY(%s)
            ORDER BY e.id
            """,
            [workspace_id, list(wanted)],
        )
        rows = cursor.fetchall()
    names: dict[int, str] = {}
    others: dict[int, list[tuple[int, str]]] = {}
    for pk, name, other, kind in rows:
        names[pk] = name
        if other is not None:
            others.setdefault(pk, []).append((other, kind))
    taken: set[int] = set()
    claimed: set[tuple[str, str]] = set()
    for pk in sorted(wanted):
        want = thing(wanted[pk])
        clash = any(thing(kind) == want for o, kind in others.get(pk, []) if o not in wanted)
        if clash or (names[pk], want) in claimed:
            taken.add(pk)
        else:
            claimed.add((names[pk], want))
    return taken
