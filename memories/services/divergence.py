"""Divergence detection (built, off: ``MM_DIVERGENCE``): pairs of active memories by different
writers, about the same thing, that disagree; and a curator's resolution or dismissal of one.

A run reads the workspace's active, currently valid memories written since the previous run
(all of them with ``full``), in id order and in batches. Each is compared with its
``MM_DIVERGENCE_NEIGHBOURS`` nearest active memories (the HNSW index): a pair is examined when
the two have different ``source`` (different agents or sources), a cosine similarity of at
least ``MM_DIVERGENCE_MIN_SIMILARITY``, and share an entity or a link (they are about the same
thing); a pair already recorded, whatever its status, is not examined again. The detectors of
``memories.divergence.detectors`` score it (and the model, when ``MM_DIVERGENCE_MODEL_URL`` is
set); a
score of at least ``MM_DIVERGENCE_THRESHOLD`` makes, in one transaction, a ``contradicts``
link from the newer memory to the older, a ``Divergence`` record (open) with the evidence, and
a ``diverge`` event in both memories' histories. Nothing is deleted and no significance
changes. The run then records how far it read (``DivergenceScan``), so the next starts after
it; ``dry_run`` writes nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memories.divergence import model as divergence_model
from memories.divergence.detectors import Assessment, assess
from memories.embeddings import current_model_name
from memories.errors import Errors
from memories.features import require_divergence
from memories.models import Divergence, DivergenceScan, Link, Memory, Workspace
from memories.selectors.neighbours import SHARE_AN_ENTITY_SQL, nearest_pairs
from memories.selectors.permissions import require_role
from memories.services.decisions import deciding, decision_reason
from memories.services.provenance import Action, record
from memories.temporal.validity import valid_at_q, valid_at_sql

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"R/divergence": "beta"}
#: Memories read a statement.
BATCH = 200


@dataclass
class FoundPair:
    first: Memory
    second: Memory
    assessment: Assessment


@dataclass
class DivergenceRunResult:
    memories: int = 0  # read this run
    pairs: int = 0  # examined
    flagged: list[FoundPair] = field(default_factory=list)
    seconds: float = 0.0
    through_id: int = 0
    dry_run: bool = False

    @property
    def pairs_per_second(self) -> float:
        return self.pairs / self.seconds if self.seconds > 0 else 0.0


def divergence_run(
    *,
    workspace: Workspace,
    full: bool = False,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> DivergenceRunResult:
    """One run over ``workspace`` (module docstring); ``progress(done, total)`` after each
    batch."""
    require_divergence()
    started = time.perf_counter()
    # A dry run writes nothing, not even where it has read to.
    scan = DivergenceScan.objects.filter(workspace=workspace).first()
    if scan is None:
        scan = DivergenceScan(workspace=workspace)
        if not dry_run:
            scan.save()
    now = timezone.now()
    ids = list(
        Memory.objects.filter(
            valid_at_q(now),
            workspace=workspace,
            status=Memory.Status.ACTIVE,
            embedding_model=current_model_name(),
            id__gt=0 if full else scan.through_id,
        )
        .order_by("id")
        .values_list("id", flat=True)
    )
    result = DivergenceRunResult(memories=len(ids), dry_run=dry_run)
    seen: set[tuple[int, int]] = set()
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        pairs = [pair for pair in _candidates(workspace.pk, batch, now) if pair[:2] not in seen]
        seen.update(pair[:2] for pair in pairs)
        pairs = _not_recorded(workspace.pk, pairs)
        result.pairs += len(pairs)
        memories = (
            Memory.objects.filter(workspace=workspace)
            .defer("embedding", "episode_embedding")
            .in_bulk({i for pair in pairs for i in pair[:2]})
        )
        for low, high, similarity in pairs:
            first, second = memories[low], memories[high]
            model = None
            if divergence_model.configured():
                answer = divergence_model.ask(first.text, second.text)
                model = answer.probability
            assessment = assess(first.text, second.text, similarity, model=model)
            if model is not None:
                assessment.rules.append({"rule": "model", "reason": answer.reason})
            if assessment.score >= settings.MM_DIVERGENCE_THRESHOLD:
                found = FoundPair(first=first, second=second, assessment=assessment)
                if not dry_run:
                    _flag(workspace, found)
                result.flagged.append(found)
        result.through_id = batch[-1]
        if not dry_run:
            DivergenceScan.objects.filter(pk=scan.pk).update(
                through_id=max(scan.through_id, batch[-1]), finished_at=timezone.now()
            )
        if progress is not None:
            progress(min(start + BATCH, len(ids)), len(ids))
    result.seconds = time.perf_counter() - started
    return result


def _candidates(workspace_id: int, batch: list[int], now: Any) -> list[tuple[int, int, float]]:
    """The pairs of the batch's memories with their neighbours that are worth examining:
    (lower id, higher id, similarity)."""
    rows = nearest_pairs(
        workspace_id,
        batch,
        neighbours=settings.MM_DIVERGENCE_NEIGHBOURS,
        min_similarity=settings.MM_DIVERGENCE_MIN_SIMILARITY,
        neighbour_where=valid_at_sql("now", "n"),
        pair_where=f"""o.source IS DISTINCT FROM m.source
            AND (
                {SHARE_AN_ENTITY_SQL}
                OR EXISTS (
                    SELECT 1 FROM memories_link c
                    WHERE c.workspace_id = %(workspace)s AND c.removed_at IS NULL AND (
                        (c.source_id = m.id AND c.target_memory_id = o.id)
                        OR (c.source_id = o.id AND c.target_memory_id = m.id)
                    )
                )
            )""",
        params={"now": now},
    )
    pairs = {}
    for a, b, similarity in rows:
        pairs[(min(a, b), max(a, b))] = float(similarity)
    return [(low, high, similarity) for (low, high), similarity in sorted(pairs.items())]


def _not_recorded(
    workspace_id: int, pairs: list[tuple[int, int, float]]
) -> list[tuple[int, int, float]]:
    if not pairs:
        return []
    firsts = {low for low, _, _ in pairs}
    recorded = set(
        Divergence.objects.filter(workspace_id=workspace_id, first_id__in=firsts).values_list(
            "first_id", "second_id"
        )
    )
    return [pair for pair in pairs if pair[:2] not in recorded]


def _flag(workspace: Workspace, found: FoundPair) -> None:
    """The link, the record and the events of one flagged pair, all or none: a pair another run
    recorded meanwhile (the unique constraints refuse it) is left as that run made it."""
    with contextlib.suppress(IntegrityError):
        _record_flag(workspace, found)


def _record_flag(workspace: Workspace, found: FoundPair) -> None:
    first, second, assessment = found.first, found.second, found.assessment
    evidence = assessment.evidence()
    with transaction.atomic():
        link = Link.objects.filter(
            source=second, target_memory=first, kind="contradicts", removed_at__isnull=True
        ).first()
        if link is None:
            link = Link.objects.create(
                workspace=workspace,
                source=second,
                target_memory=first,
                kind="contradicts",
                weight=min(max(assessment.score, 0.0), 1.0),
                origin=Link.Origin.DIVERGENCE,
                evidence={"score": round(assessment.score, 6), **evidence},
            )
        divergence = Divergence.objects.create(
            workspace=workspace,
            first=first,
            second=second,
            link=link,
            score=assessment.score,
            detector=assessment.detector,
            evidence=evidence,
        )
        for memory, other in ((first, second), (second, first)):
            record(
                memory,
                Action.DIVERGE,
                new={
                    "divergence_id": divergence.divergence_id,
                    "with": other.mem_id,
                    "score": round(assessment.score, 6),
                    "detector": assessment.detector,
                },
            )


def _closed_already(divergence: Divergence) -> tuple[str, str]:
    return "status", f"this divergence is already {divergence.status}."


def divergence_close(
    *, divergence: Divergence, user: Any, status: str, reason: str, right: str | None = None
) -> Divergence:
    """A curator resolves (``resolved``: the disagreement was real and is settled) or dismisses
    (``dismissed``: it was no disagreement; its ``contradicts`` link is removed, its row kept)
    an open divergence, with a reason kept on it and in both memories' histories. Resolving, the
    curator may say which memory was right (``right``: its mem_id): each memory's event then
    says ``outcome`` right or wrong, which its source's record counts
    (``memories.asymmetry.score``)."""
    require_role(user, divergence.workspace_id, "close divergences")
    errors = Errors()
    closing = {Divergence.Status.RESOLVED.value, Divergence.Status.DISMISSED.value}
    if status not in closing:
        errors.add("status", f"must be one of: {', '.join(sorted(closing))}.")
    reason, problem = decision_reason(reason, "say why.")
    errors.check("reason", problem)
    pair = {divergence.first.mem_id, divergence.second.mem_id}
    if right and status != Divergence.Status.RESOLVED:
        errors.add("right", "only a resolved divergence has a memory that was right.")
    elif right and right not in pair:
        errors.add(
            "right", f"must be one of this divergence's memories: {', '.join(sorted(pair))}."
        )
    errors.raise_if_any()
    with deciding(divergence, decided=_closed_already) as divergence:
        divergence.decide(status=status, reason=reason, user=user)
        if status == Divergence.Status.DISMISSED and divergence.link_id is not None:
            Link.objects.filter(pk=divergence.link_id, removed_at__isnull=True).update(
                removed_at=divergence.closed_at
            )
        action = Action.RESOLVE if status == Divergence.Status.RESOLVED else Action.DISMISS
        first, second = divergence.first, divergence.second
        for memory, other in ((first, second), (second, first)):
            outcome = {"outcome": "right" if memory.mem_id == right else "wrong"} if right else {}
            record(
                memory,
                action,
                user=user,
                new={"divergence_id": divergence.divergence_id, "with": other.mem_id, **outcome},
                reason=reason,
            )
    return divergence
