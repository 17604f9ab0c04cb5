"""Supersede: a newer value for a slot supersedes the older, or is proposed to a curator."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from psycopg.types.numeric import Int8

from consolidation.models import (
    SupersessionProposal,
)
from consolidation.phases.context import BATCH, PhaseContext, newest_id, written_since
from memories.divergence.detectors import attributes
from memories.errors import ValidationFailed
from memories.models import (
    Entity,
    Memory,
)
from memories.services.supersede import supersede
from memories.temporal.corrections import assess, verdict, worth_reading


def run(context: PhaseContext) -> dict[str, int]:
    """A memory written since the watermark that changes what an older active memory of its
    scope says of an entity both mention supersedes it, or is proposed to a curator
    (``SupersessionProposal``): a single-valued slot (``ATTRIBUTES``: a renewal or due month, a
    plan, an owner) given another value, applied when the same writer restated it with one value
    on each side (``HIGH_CONFIDENCE``); else a correction the detector finds
    (``memories.temporal.corrections``: changed values, denials, negations), applied or proposed
    as its ``verdict`` says."""
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


#: What makes the slot rule confident enough to apply without a curator.
HIGH_CONFIDENCE = "the same writer restated the slot with one value on each side"


@dataclass
class SlotChange:
    """A newer memory that changes what an older one of its scope says of an entity both
    mention: a slot (``ATTRIBUTES``) given another value, or a correction the detector found
    (``memories.temporal.corrections``), with what consolidation does with it (``verdict``:
    apply or propose) and why (``rule``)."""

    older: Memory
    newer: Memory
    entity_id: int
    attribute: str
    old_values: list[str]
    new_values: list[str]
    verdict: str
    why: str
    score: float | None = None

    @property
    def confident(self) -> bool:
        return self.verdict == "apply"


def _slot(older: Memory, newer: Memory, entity_id: int) -> SlotChange | None:
    """The change of a single-valued slot (the older rule, kept: it knows plans and owners)."""
    before, after = attributes(older.text), attributes(newer.text)
    for slot in sorted(before.keys() & after.keys()):
        if before[slot].isdisjoint(after[slot]):
            old, new = sorted(before[slot]), sorted(after[slot])
            single = older.source == newer.source and len(old) == 1 and len(new) == 1
            return SlotChange(
                older,
                newer,
                entity_id,
                slot,
                old,
                new,
                "apply" if single else "propose",
                HIGH_CONFIDENCE if single else "a slot given another value",
            )
    return None


def _corrected(older: Memory, newer: Memory, entity_id: int) -> SlotChange | None:
    """A correction the detector found, with the verdict its rule gives."""
    found = assess(older.text, newer.text)
    decided = verdict(found, same_source=older.source == newer.source)
    if not decided:
        return None
    top = next(f for f in found.findings if f["rule"] in ("denial", "value", "negation", "cue"))
    old = top.get("old") or [top.get("denied", "")] if top["rule"] != "negation" else ["said"]
    new = top.get("new") or ["denied"] if top["rule"] != "negation" else ["not said"]
    why = f"correction detector: score {found.score:.2f} (model), {top['rule']}" + (
        ", same writer" if older.source == newer.source else ""
    )
    return SlotChange(
        older,
        newer,
        entity_id,
        top.get("kind", top["rule"])[:40],
        [v[:200] for v in old if v],
        [v[:200] for v in new if v],
        decided,
        why,
        found.score,
    )


def _slot_changes(workspace_id: int, batch: list[int]) -> list[SlotChange]:
    """The batch's memories that change what an older memory of their scope says of an entity
    both mention, oldest change first."""
    newer = {
        m.pk: m
        for m in Memory.objects.filter(workspace_id=workspace_id, pk__in=batch).defer(
            "embedding", "episode_embedding"
        )
        if attributes(m.text) or worth_reading(m.text)
    }
    if not newer:
        return []
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
                LIMIT 50
            ) AS o
            WHERE m.id = ANY(%(ids)s) AND m.workspace_id = %(workspace)s
            ORDER BY m.id, o.id
            """,
            {"ids": [Int8(i) for i in newer], "workspace": workspace_id},
        )
        rows = cursor.fetchall()
    older = (
        Memory.objects.filter(workspace_id=workspace_id)
        .defer("embedding", "episode_embedding")
        .in_bulk({o for _, o, _ in rows})
    )
    found: dict[tuple[int, int], SlotChange] = {}
    for new_id, old_id, entity_id in rows:
        if (new_id, old_id) in found:
            continue
        before, after = older[old_id], newer[new_id]
        change = _slot(before, after, entity_id) or _corrected(before, after, entity_id)
        if change is not None:
            found[(new_id, old_id)] = change
    recorded = set(
        SupersessionProposal.objects.filter(
            workspace_id=workspace_id, newer_id__in={n for n, _ in found}
        ).values_list("newer_id", "older_id")
    )
    return [change for key, change in sorted(found.items()) if key not in recorded]


def _settle(context: PhaseContext, change: SlotChange) -> str:
    """Apply a confident change (``applied``) or propose it (``proposed``); in a dry run only
    say which. A memory superseded meanwhile (by an earlier change of this run) is left."""
    kind = "applied" if change.confident else "proposed"
    if context.run.dry_run:
        return kind
    entity = Entity.objects.get(workspace_id=context.workspace_id, pk=change.entity_id)
    rule = (
        f"{change.attribute} of {entity.name}: {', '.join(change.old_values)} -> "
        f"{', '.join(change.new_values)}"
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
        attribute=change.attribute,
        old_values=change.old_values,
        new_values=change.new_values,
        rule=rule,
        confidence="high" if kind == "applied" else "low",
        status=(
            SupersessionProposal.Status.APPLIED
            if kind == "applied"
            else SupersessionProposal.Status.OPEN
        ),
    )
    return kind
