"""The A scores (``memories.asymmetry.score``): filled when memories are written, from the sources'
records as the last refresh kept them (``SourceRecord``), and refreshed for a whole workspace
by ``asymmetry_refresh`` (the consolidation phase ``asymmetry``, ``meaning-memory
consolidate``), which counts the records again from the memories' histories.

A score the writer gave (origin ``writer``) is never replaced. A claim none of whose records
(its source's, its source's on one of its topics, one of its topics') has
``MM_ASYMMETRY_MIN_VERDICTS`` judged memories gets no A score: the model would answer its prior,
and an empty score says "nothing is known" where a number would pretend. The A score is
derived, like the Eligible column: its inputs (feedback, supersession, divergences) are in the
provenance, and a refresh that changes it writes no event per memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memories.asymmetry.score import a_score, features, model
from memories.models import Link, Memory, ProvenanceEvent, SourceRecord, Workspace
from memories.selectors.reader import Reader
from memories.selectors.sources import ENTITY, TOPIC, WRITER, Record, Records, source_records
from memories.services.provenance import Action, provenance_event, record_many

BATCH = 1_000
#: The scores the engine may (re)compute: empty ones and its own.
OWN = Q(a_origin="") | Q(a_origin=Memory.ScoreOrigin.ASYMMETRY)


@dataclass(frozen=True)
class Claim:
    """What the A score of one memory reads."""

    pk: int
    text: str
    source: str
    attributed: str | None  # the entity_id its claim is attributed to (merged: the target)
    source_kind: str
    topics: tuple[str, ...]  # the entity_ids it mentions (merged: the targets)


def claim_score(records: Records, claim: Claim) -> float | None:
    """The A score of a claim under ``records``; None when no record it reads has
    ``MM_ASYMMETRY_MIN_VERDICTS`` judged memories (module docstring)."""
    key = (ENTITY, claim.attributed) if claim.attributed else (WRITER, claim.source)
    source = records.sources.get(key)
    on_topic_records = [
        source.on_topics[t] for t in claim.topics if source and t in source.on_topics
    ]
    topic_records = [records.topics[t] for t in claim.topics if t in records.topics]
    minimum = settings.MM_ASYMMETRY_MIN_VERDICTS
    if not any(
        record.judged >= minimum
        for record in [*([source] if source else []), *on_topic_records, *topic_records]
    ):
        return None
    on_topics = [record.estimate for record in on_topic_records]
    topics = [record.estimate for record in topic_records]
    x = features(
        prior=records.prior,
        source=source.estimate if source else None,
        on_topics=on_topics,
        topics=topics,
        text=claim.text,
    )
    reliability = model().reliability(x, records.prior)
    return a_score(reliability, claim.source_kind, claim.attributed is not None)


def claims_of(workspace_id: int, pks: Sequence[int]) -> list[Claim]:
    """The claims of a workspace's memories (by primary key), in that order of keys."""
    rows = (
        Memory.objects.filter(workspace_id=workspace_id, pk__in=pks)
        .order_by("pk")
        .values_list(
            "pk",
            "text",
            "source",
            "attributed_to__entity_id",
            "attributed_to__merged_into__entity_id",
            "source_kind",
        )
    )
    mentions: dict[int, set[str]] = {}
    links = Link.objects.filter(
        workspace_id=workspace_id,
        source_id__in=pks,
        kind="mentions",
        removed_at__isnull=True,
        target_entity__isnull=False,
    ).values_list("source_id", "target_entity__entity_id", "target_entity__merged_into__entity_id")
    for memory, entity, merged in links:
        mentions.setdefault(memory, set()).add(merged or entity)
    return [
        Claim(pk, text, source, merged or entity, kind, tuple(sorted(mentions.get(pk, ()))))
        for pk, text, source, entity, merged, kind in rows
    ]


def _snapshot(workspace_id: int, claims: Sequence[Claim]) -> Records:
    """The records the claims read, as the last refresh kept them."""
    keys = {(ENTITY, c.attributed) if c.attributed else (WRITER, c.source) for c in claims}
    topics = {t for c in claims for t in c.topics}
    wanted = Q(kind=SourceRecord.Kind.PRIOR) | Q(kind=TOPIC, key__in=topics, topic="")
    for kind in (WRITER, ENTITY):
        names = [key for k, key in keys if k == kind]
        if names:
            wanted |= Q(kind=kind, key__in=names, topic__in=["", *topics])
    rows = SourceRecord.objects.filter(wanted, workspace_id=workspace_id)
    prior = 0.5
    right = wrong = 0
    sources: dict[tuple[str, str], Record] = {}
    by_topic: dict[str, Record] = {}
    on_topic: list[SourceRecord] = []
    for row in rows:
        record = Record(
            row.kind, row.key, row.key, row.memories, int(row.right), int(row.wrong), row.estimate
        )
        if row.kind == SourceRecord.Kind.PRIOR:
            prior, right, wrong = row.estimate, int(row.right), int(row.wrong)
        elif row.kind == TOPIC:
            by_topic[row.key] = record
        elif row.topic:
            on_topic.append(row)
        else:
            sources[(row.kind, row.key)] = record
    for row in on_topic:
        if (source := sources.get((row.kind, row.key))) is not None:
            source.on_topics[row.topic] = Record(
                TOPIC,
                row.topic,
                row.topic,
                row.memories,
                int(row.right),
                int(row.wrong),
                row.estimate,
            )
    return Records(prior, 0.0, right, wrong, sources, by_topic)


def asymmetry_fill(memories: Sequence[Memory]) -> None:
    """Give newly written memories (saved, with their mentions stored) their A score from the
    kept records, inside the write's transaction; a score the writer gave stays."""
    pending = [m for m in memories if m.a_score is None]
    if not pending:
        return
    claims = claims_of(pending[0].workspace_id, [m.pk for m in pending])
    records = _snapshot(pending[0].workspace_id, claims)
    scores = {claim.pk: claim_score(records, claim) for claim in claims}
    scores = {pk: score for pk, score in scores.items() if score is not None}
    for memory in pending:
        if memory.pk in scores:
            memory.a_score = scores[memory.pk]
            memory.a_origin = Memory.ScoreOrigin.ASYMMETRY
    _update(pending[0].workspace_id, scores)


def _update(workspace_id: int, scores: dict[int, float | None]) -> None:
    """Store the engine's A scores (None: no score, and no origin)."""
    if not scores:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Memory._meta.db_table} m SET a_score = v.score, "
            "a_origin = CASE WHEN v.score IS NULL THEN '' ELSE %s END "
            "FROM unnest(%s::bigint[], %s::float8[]) AS v(id, score) "
            "WHERE m.workspace_id = %s AND m.id = v.id",
            [Memory.ScoreOrigin.ASYMMETRY, list(scores), list(scores.values()), workspace_id],
        )


def _rescored(
    workspace_id: int, current: dict[int, float | None], changed: dict[int, float | None]
) -> list[ProvenanceEvent]:
    """Each A score a refresh changed (given, recomputed or cleared), as an event in its
    memory's history: every automatic change leaves a trace."""
    events = []
    for pk, score in changed.items():
        event = provenance_event(
            None,
            Action.RESCORE,
            workspace_id=workspace_id,
            old={"a_score": current.get(pk)},
            new={"a_score": score},
            reason="consolidation: the A score counted again from the sources' records"
            + ("" if score is not None else " (no record it reads is judged enough: cleared)"),
        )
        event.memory_id = pk
        events.append(event)
    return events


@dataclass(frozen=True)
class RefreshResult:
    sources: int
    memories: int
    rescored: int


def _snapshot_rows(workspace_id: int, records: Records) -> list[SourceRecord]:
    now = timezone.now()

    def row(record: Record, kind: str, key: str, topic: str = "") -> SourceRecord:
        return SourceRecord(
            workspace_id=workspace_id,
            kind=kind,
            key=key[:200],
            topic=topic,
            memories=record.memories,
            right=record.right,
            wrong=record.wrong,
            estimate=record.estimate,
            computed_at=now,
        )

    rows = [
        SourceRecord(
            workspace_id=workspace_id,
            kind=SourceRecord.Kind.PRIOR,
            key="",
            memories=records.right + records.wrong,
            right=records.right,
            wrong=records.wrong,
            estimate=records.prior,
            computed_at=now,
        )
    ]
    for (kind, key), record in records.sources.items():
        rows.append(row(record, kind, key))
        rows += [row(on, kind, key, topic) for topic, on in record.on_topics.items()]
    rows += [row(record, TOPIC, key) for key, record in records.topics.items()]
    return rows


def asymmetry_refresh(
    *,
    workspace_id: int,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RefreshResult:
    """Count every source's record again, keep it (``SourceRecord``), and recompute the A
    score of every memory whose score is the engine's (``dry_run``: count what would change,
    write nothing)."""
    records = source_records(Reader.of_engine(Workspace.objects.get(pk=workspace_id)))
    if not dry_run:
        with transaction.atomic():
            SourceRecord.objects.filter(workspace_id=workspace_id).delete()
            SourceRecord.objects.bulk_create(
                _snapshot_rows(workspace_id, records), batch_size=1_000
            )
    pks = list(
        Memory.objects.filter(OWN, workspace_id=workspace_id)
        .exclude(status__in=[Memory.Status.FORGOTTEN, Memory.Status.MERGED])
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    rescored = 0
    for start in range(0, len(pks), BATCH):
        batch = pks[start : start + BATCH]
        current = dict(
            Memory.objects.filter(workspace_id=workspace_id, pk__in=batch).values_list(
                "pk", "a_score"
            )
        )
        scores = {c.pk: claim_score(records, c) for c in claims_of(workspace_id, batch)}
        changed = {pk: a for pk, a in scores.items() if current.get(pk) != a}
        rescored += len(changed)
        if not dry_run:
            with transaction.atomic():
                _update(workspace_id, changed)
                record_many(_rescored(workspace_id, current, changed))
        if progress is not None:
            progress(min(start + BATCH, len(pks)), len(pks))
    return RefreshResult(len(records.sources), len(pks), rescored)
