"""Supersede: a newer memory that corrects an older one of its subject supersedes it, or is
proposed to a curator (``memories.temporal.judgment``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from psycopg.types.numeric import Int8

from consolidation.models import (
    SupersessionProposal,
)
from consolidation.phases.context import BATCH, PhaseContext, newest_id, written_since
from memories import metadata_filter
from memories.errors import ValidationFailed
from memories.models import (
    Entity,
    Memory,
)
from memories.models.base import TEXT_SEARCH_CONFIG
from memories.services.supersede import supersede
from memories.temporal.judgment import judge, mentions, names, worth_reading
from memories.temporal.spoken import changes


def run(context: PhaseContext) -> dict[str, int]:
    """A memory written since the watermark that changes what an older active memory of its
    scope says of one subject supersedes it, or is proposed to a curator
    (``SupersessionProposal``), as ``memories.temporal.judgment.judge`` says. The subject is an
    entity both mention, a name both write in capitals, or the session both are turns of; a
    statement that hedges, plans, sets a condition, asks or reports the past never supersedes
    anything."""
    through = context.watermark("supersede")
    high = newest_id(context.workspace_id)
    ids = list(written_since(context, through, high).values_list("id", flat=True))
    counts = {"memories": len(ids), "applied": 0, "proposed": 0}
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        with transaction.atomic():
            for finding in _slot_changes(context.workspace_id, batch):
                kind = _settle(context, finding)
                if kind:
                    counts[kind] += 1
            context.advance("supersede", batch[-1])
        context.step("supersede", min(start + BATCH, len(ids)), len(ids))
    context.advance("supersede", high)
    return {**counts, "read_after_id": through}


@dataclass
class SlotChange:
    """A newer memory that changes what an older one of its scope says of a subject (an
    entity both mention, ``entity_id``; else a name or a session, ``subject``), with what
    consolidation does with it (``verdict``: apply or propose) and why."""

    older: Memory
    newer: Memory
    entity_id: int | None
    subject: str
    attribute: str
    old_values: list[str]
    new_values: list[str]
    verdict: str
    why: str
    score: float | None = None

    @property
    def confident(self) -> bool:
        return self.verdict == "apply"


#: At most this many older memories of one subject are read for each newer one.
PER_SUBJECT = 50


def _candidates(
    workspace_id: int, newer: dict[int, Memory]
) -> list[tuple[int, int, int | None, str]]:
    """(newer id, older id, entity id or None, subject) for each older active memory of the
    newer's scope written before it that mentions an entity it mentions, writes a name it
    writes in capitals, or is a turn of its session; the entity first."""
    ids = [Int8(i) for i in newer]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT m.id, o.id, a.target_entity_id
            FROM memories_memory m
            JOIN memories_link a ON a.workspace_id = %(workspace)s AND a.source_id = m.id
                AND a.target_entity_id IS NOT NULL
                AND a.removed_at IS NULL
            CROSS JOIN LATERAL (
                SELECT o.id FROM memories_link b
                JOIN memories_memory o ON o.workspace_id = %(workspace)s AND o.id = b.source_id
                WHERE b.target_entity_id = a.target_entity_id AND b.removed_at IS NULL
                    AND b.workspace_id = %(workspace)s AND o.scope_id = m.scope_id
                    AND o.status = 'active' AND o.id <> m.id
                    AND (o.created_at, o.id) < (m.created_at, m.id)
                ORDER BY o.created_at DESC, o.id DESC
                LIMIT %(limit)s
            ) AS o
            WHERE m.id = ANY(%(ids)s) AND m.workspace_id = %(workspace)s
            ORDER BY m.id, o.id
            """,
            {"ids": ids, "workspace": workspace_id, "limit": PER_SUBJECT},
        )
        rows = [(n, o, e, "") for n, o, e in cursor.fetchall()]
        sessions = [(Int8(m.pk), m.session) for m in newer.values() if m.session]
        if sessions:
            cursor.execute(
                """
                SELECT s.id, o.id
                FROM unnest(%(ids)s::bigint[], %(sessions)s::text[]) AS s(id, session)
                JOIN memories_memory m ON m.workspace_id = %(workspace)s AND m.id = s.id
                CROSS JOIN LATERAL (
                    SELECT o.id FROM memories_memory o
                    WHERE o.workspace_id = %(workspace)s AND o.scope_id = m.scope_id
                        AND o.session = s.session AND o.status = 'active' AND o.id <> m.id
                        AND (o.created_at, o.id) < (m.created_at, m.id)
                    ORDER BY o.created_at DESC, o.id DESC
                    LIMIT %(limit)s
                ) AS o
                """,
                {"ids": [i for i, _ in sessions], "sessions": [t for _, t in sessions],
                 "workspace": workspace_id, "limit": PER_SUBJECT},
            )  # fmt: skip
            rows += [(n, o, None, f"session {newer[n].session}") for n, o in cursor.fetchall()]
        written = [(Int8(m.pk), name) for m in newer.values() for name in names(m.text)]
        if written:
            cursor.execute(
                """
                SELECT s.id, s.name, o.id
                FROM unnest(%(ids)s::bigint[], %(names)s::text[]) AS s(id, name)
                JOIN memories_memory m ON m.workspace_id = %(workspace)s AND m.id = s.id
                CROSS JOIN LATERAL (
                    SELECT o.id FROM memories_memory o
                    WHERE o.workspace_id = %(workspace)s AND o.scope_id = m.scope_id
                        AND o.search_vector @@ phraseto_tsquery(%(config)s, s.name)
                        AND o.status = 'active' AND o.id <> m.id
                        AND (o.created_at, o.id) < (m.created_at, m.id)
                    ORDER BY o.created_at DESC, o.id DESC
                    LIMIT %(limit)s
                ) AS o
                """,
                {"ids": [i for i, _ in written], "names": [t for _, t in written],
                 "workspace": workspace_id, "limit": PER_SUBJECT, "config": TEXT_SEARCH_CONFIG},
            )  # fmt: skip
            rows += [(n, o, None, name) for n, name, o in cursor.fetchall()]
    return rows


def _slot_changes(workspace_id: int, batch: list[int]) -> list[SlotChange]:
    """The batch's memories that change what an older memory of their scope says of a subject
    both have, oldest change first."""
    newer = {
        m.pk: m
        for m in Memory.objects.filter(workspace_id=workspace_id, pk__in=batch).defer(
            "embedding", "episode_embedding"
        )
        if worth_reading(m.text)
    }
    if not newer:
        return []
    rows = _candidates(workspace_id, newer)
    older = (
        Memory.objects.filter(workspace_id=workspace_id)
        .defer("embedding", "episode_embedding")
        .in_bulk({o for _, o, _, _ in rows})
    )
    turns = _turns(rows, newer, older)
    found: dict[tuple[int, int], SlotChange] = {}
    for new_id, old_id, entity_id, subject in rows:
        if (new_id, old_id) in found:
            continue
        before, after = older[old_id], newer[new_id]
        if metadata_filter.apart(before.metadata or {}, after.metadata or {}):
            continue  # another customer's, user's or item's: a change of neither
        if (
            entity_id is None
            and not subject.startswith("session ")
            and not mentions(before.text, subject)
        ):
            continue  # the words matched, not the name in capitals
        said = turns.get(new_id, {}).get(old_id)
        judged = judge(
            before.text,
            after.text,
            same_source=before.source == after.source,
            conversation=said is not None,
            turns=said,
        )
        if judged.verdict:
            found[(new_id, old_id)] = SlotChange(
                before,
                after,
                entity_id,
                subject,
                judged.attribute[:40],
                [v[:200] for v in judged.old if v],
                [v[:200] for v in judged.new if v],
                judged.verdict,
                judged.why,
                judged.score,
            )
    recorded = set(
        SupersessionProposal.objects.filter(
            workspace_id=workspace_id, newer_id__in={n for n, _ in found}
        ).values_list("newer_id", "older_id")
    )
    return [change for key, change in sorted(found.items()) if key not in recorded]


def _turns(rows, newer: dict[int, Memory], older: dict[int, Memory]) -> dict[int, dict]:
    """For each newer memory, the older candidates of its own session, nearest first, with
    the values of each that the newer changes (``memories.temporal.spoken.changes``): a turn
    is compared with the nearest earlier turn that said a value of the same thing, never with
    one that turn replaced already, as ``readiness.dialogue`` measures it."""
    session: dict[int, set[int]] = {}
    for new_id, old_id, _, _ in rows:
        after, before = newer[new_id], older[old_id]
        if after.session and before.session == after.session:
            session.setdefault(new_id, set()).add(old_id)
    found: dict[int, dict] = {}
    for new_id, olds in session.items():
        nearest = sorted(olds, key=lambda o: (older[o].created_at, o), reverse=True)
        said = changes([older[o].text for o in nearest], newer[new_id].text)
        found[new_id] = {o: said.get(i, []) for i, o in enumerate(nearest)}
    return found


def _settle(context: PhaseContext, change: SlotChange) -> str:
    """Apply a confident change (``applied``) or propose it (``proposed``); in a dry run only
    say which. A memory superseded meanwhile (by an earlier change of this run) is left."""
    kind = "applied" if change.confident else "proposed"
    if context.run.dry_run:
        return kind
    entity = (
        Entity.objects.get(workspace_id=context.workspace_id, pk=change.entity_id)
        if change.entity_id is not None
        else None
    )
    subject = entity.name if entity is not None else change.subject
    rule = (
        f"{change.attribute} of {subject}: {', '.join(change.old_values)} -> "
        f"{', '.join(change.new_values) or '?'}"
    )[:200]
    if kind == "applied":
        try:
            with transaction.atomic():
                supersede(
                    old=change.older,
                    new=change.newer,
                    reason=f"consolidation rule ({change.why}): {rule}",
                )
        except ValidationFailed:
            return ""
    SupersessionProposal.objects.create(
        workspace_id=context.workspace_id,
        older=change.older,
        newer=change.newer,
        entity=entity,
        subject=subject[:200],
        attribute=change.attribute,
        old_values=change.old_values,
        new_values=change.new_values,
        rule=rule,
        confidence="high" if kind == "applied" else "low",
        why=change.why[:200],
        score=change.score,
        status=(
            SupersessionProposal.Status.APPLIED
            if kind == "applied"
            else SupersessionProposal.Status.OPEN
        ),
    )
    return kind
