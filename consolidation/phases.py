"""The phases of a consolidation run, each a function of the run's context that returns its
counts. Each reads the memories written since its watermark (all of them the first time), is
idempotent (run twice, the second finds nothing to do), and in a dry run writes nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from psycopg.types.numeric import Int8

from consolidation import duplicates, facts
from consolidation import threads as open_threads
from consolidation.models import (
    ConsolidationRun,
    PhaseWatermark,
    SupersessionProposal,
    ThreadCorpus,
    WordFrequency,
)
from consolidation.snapshots import snapshot_keep
from memories.compile import compiled_memory_file
from memories.divergence import attributes
from memories.embeddings import current_model_name, get_embedder
from memories.errors import ValidationFailed
from memories.models import (
    STARE_DIMENSIONS,
    Agent,
    Entity,
    Link,
    Memory,
    Thread,
    ThreadMember,
)
from memories.scorer import auto_scores, bundled_scorer, skipped_categories, skipped_dimensions
from memories.services import link_backfill, memory_merge
from memories.services.asymmetry import asymmetry_refresh
from memories.services.divergence import divergence_run
from memories.services.provenance import Action, record
from memories.services.remember import content_hash
from memories.services.supersede import supersede

#: Memories read a statement.
BATCH = 200

#: A memory's text as dedupe compares it: lower case, runs of white space as one space, no
#: white space or closing punctuation at either end.
NORMALIZED_TEXT_SQL = (
    "regexp_replace(regexp_replace(lower(btrim(text)), '[[:space:]]+', ' ', 'g'), "
    "'[[:space:].!?;,]+$', '')"
)


@dataclass
class PhaseContext:
    run: ConsolidationRun
    #: Phase name, done, total: after each step of a phase.
    progress: Callable[[str, int, int], None] | None = None

    @property
    def workspace_id(self) -> int:
        return self.run.workspace_id

    def watermark(self, phase: str) -> int:
        mark = PhaseWatermark.objects.filter(workspace_id=self.workspace_id, phase=phase).first()
        return mark.through_id if mark is not None else 0

    def advance(self, phase: str, through_id: int) -> None:
        """Move the phase's watermark (never back; not in a dry run)."""
        if self.run.dry_run or through_id <= self.watermark(phase):
            return
        PhaseWatermark.objects.update_or_create(
            workspace_id=self.workspace_id, phase=phase, defaults={"through_id": through_id}
        )

    def step(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)


#: The memories Open Threads and fact extraction read: episodic ones and events.
EPISODIC = Q(memory_type=Memory.MemoryType.EPISODIC) | Q(category=Memory.Category.EVENT)


def written_since(context: PhaseContext, through: int, high: int, *where: Q, **more: Any):
    """The workspace's active memories with ids in (``through``, ``high``], oldest first, and
    ``where`` / ``more`` besides."""
    return Memory.objects.filter(
        *where,
        workspace_id=context.workspace_id,
        status=Memory.Status.ACTIVE,
        id__gt=through,
        id__lte=high,
        **more,
    ).order_by("id")


def newest_id(workspace_id: int) -> int:
    found = Memory.objects.filter(workspace_id=workspace_id).order_by("-id").first()
    return found.pk if found is not None else 0


#: A memory whose merge a curator undid (``memory_restore``) is merged again by no rule.
NOT_RESTORED_SQL = """NOT EXISTS (
    SELECT 1 FROM memories_link undone
    WHERE undone.source_id = {table}.id AND undone.kind = 'same_as'
        AND undone.removed_at IS NOT NULL
)"""


def dedupe(context: PhaseContext) -> dict[str, int]:
    """Exact duplicates, then near-duplicates, among the active memories of each scope, for
    the memories written since the watermark (all of them the first time). Each merge keeps the
    more significant, then the older, and merges the other into it
    (``memories.services.merge``: kept as ``merged``, with a ``same_as`` link and provenance on
    both, undone by ``memory_restore``)."""
    through = context.watermark("dedupe")
    high = newest_id(context.workspace_id)
    counts = _exact(context, through, high)
    if settings.MM_DEDUPE_NEAR:
        counts.update(_near(context, through, high))
    context.advance("dedupe", high)
    return {**counts, "read_after_id": through}


def _exact(context: PhaseContext, through: int, high: int) -> dict[str, int]:
    """Active memories of one scope whose normalised texts are the same, whatever their
    source: each group touched by a memory written since the watermark keeps one survivor."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH keyed AS (
                SELECT id, scope_id, significance, created_at,
                    md5({NORMALIZED_TEXT_SQL}) AS key
                FROM memories_memory
                WHERE workspace_id = %(workspace)s AND status = 'active' AND id <= %(high)s
                    AND {NOT_RESTORED_SQL.format(table="memories_memory")}
            ),
            touched AS (SELECT DISTINCT scope_id, key FROM keyed WHERE id > %(through)s)
            SELECT array_agg(k.id ORDER BY k.significance DESC, k.created_at, k.id)
            FROM keyed k JOIN touched t ON t.scope_id = k.scope_id AND t.key = k.key
            GROUP BY k.scope_id, k.key
            HAVING count(*) > 1
            ORDER BY min(k.id)
            """,
            {"workspace": context.workspace_id, "through": through, "high": high},
        )
        groups = [ids for (ids,) in cursor.fetchall()]
    merged = 0
    for number, ids in enumerate(groups, 1):
        if not context.run.dry_run:
            memories = Memory.objects.in_bulk(ids)
            survivor = memories[ids[0]]
            for duplicate_id in ids[1:]:
                memory_merge(
                    survivor=survivor,
                    duplicate=memories[duplicate_id],
                    rule="exact duplicate",
                    evidence={"normalized": "lower case, white space, closing punctuation"},
                )
        merged += len(ids) - 1
        context.step("dedupe", number, len(groups))
    return {"groups": len(groups), "merged": merged}


def _near(context: PhaseContext, through: int, high: int) -> dict[str, int]:
    """Pairs of a new memory and one of its ``MM_DEDUPE_NEIGHBOURS`` nearest active memories of
    the same scope that ``consolidation.duplicates.judge`` calls near-duplicates, most similar
    first; a memory merged by an earlier pair is out of the later ones."""
    ids = list(
        written_since(context, through, high, embedding__isnull=False).values_list("id", flat=True)
    )
    pairs: dict[tuple[int, int], float] = {}
    for start in range(0, len(ids), BATCH):
        pairs.update(_neighbours(context.workspace_id, ids[start : start + BATCH]))
        context.step("dedupe (near)", min(start + BATCH, len(ids)), len(ids))
    members = {i for pair in pairs for i in pair}
    texts = dict(Memory.objects.filter(pk__in=members).values_list("pk", "text"))
    entities: dict[int, set[str]] = {pk: set() for pk in members}
    for source, name in Link.objects.filter(
        source_id__in=members, target_entity__isnull=False, removed_at__isnull=True
    ).values_list("source_id", "target_entity__name"):
        entities[source].add(name)
    refused: dict[str, int] = {}
    found = []
    for (low, high_id), similarity in pairs.items():
        verdict = duplicates.judge(
            texts[low],
            texts[high_id],
            similarity,
            min_similarity=settings.MM_DEDUPE_MIN_SIMILARITY,
            min_overlap=settings.MM_DEDUPE_MIN_OVERLAP,
            entities=(entities[low], entities[high_id]),
        )
        for guard in verdict.refused:
            refused[guard] = refused.get(guard, 0) + 1
        if verdict.duplicate:
            found.append((low, high_id, verdict))
    found.sort(key=lambda item: -item[2].similarity)
    gone: set[int] = set()
    merged = 0
    for low, high_id, verdict in found:
        if low in gone or high_id in gone:
            continue
        first, second = Memory.objects.in_bulk([low, high_id]).values()
        survivor, duplicate = sorted(
            (first, second), key=lambda m: (-m.significance, m.created_at, m.pk)
        )
        if not context.run.dry_run:
            memory_merge(
                survivor=survivor,
                duplicate=duplicate,
                rule="near duplicate",
                evidence=verdict.evidence(),
            )
        gone.add(duplicate.pk)
        merged += 1
    return {
        "near_examined": len(pairs),
        "near_merged": merged,
        **{f"near_refused_{guard}": count for guard, count in sorted(refused.items())},
    }


def _neighbours(workspace_id: int, batch: list[int]) -> dict[tuple[int, int], float]:
    """(lower id, higher id) -> cosine similarity, for each of the batch's memories and its
    nearest active memories of the same scope at or above the similarity threshold."""
    # The workspace is a constant in the text: a large workspace's partial HNSW index serves
    # the scan only if its predicate is proved from one (``memories.indexing``).
    sql = f"""
        SELECT m.id, o.id, o.similarity
        FROM memories_memory m
        CROSS JOIN LATERAL (
            SELECT n.id, 1 - (n.embedding <=> m.embedding) AS similarity
            FROM memories_memory n
            WHERE n.workspace_id = {int(workspace_id)} AND n.status = 'active'
                AND n.embedding IS NOT NULL AND n.embedding_model = m.embedding_model
                AND n.scope_id = m.scope_id AND n.id <> m.id
                AND {NOT_RESTORED_SQL.format(table="n")}
            ORDER BY n.embedding <=> m.embedding
            LIMIT {int(settings.MM_DEDUPE_NEIGHBOURS)}
        ) AS o
        WHERE m.id = ANY(%(batch)s) AND o.similarity >= %(min_similarity)s
            AND {NOT_RESTORED_SQL.format(table="m")}
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "batch": [Int8(i) for i in batch],
                "min_similarity": float(settings.MM_DEDUPE_MIN_SIMILARITY),
            },
        )
        return {(min(a, b), max(a, b)): float(s) for a, b, s in cursor.fetchall()}


def link(context: PhaseContext) -> dict[str, int]:
    """Entities and links for memories that have none yet (``memories.services.link_backfill``,
    when ``MM_ENTITY_EXTRACTION`` is on), then ``relates_to`` links from each memory written
    since the watermark to its nearest active memories of the same scope (at most
    ``MM_RELATES_NEIGHBOURS``) whose cosine similarity is at least ``MM_RELATES_MIN_SIMILARITY``
    and that are in its session or share an entity with it; never between two memories already
    linked either way, nor where a curator removed such a link."""
    counts = {"extracted": 0, "entity_links": 0}
    if settings.MM_ENTITY_EXTRACTION:
        pending = Memory.objects.filter(
            workspace_id=context.workspace_id, relations_version__isnull=True
        )
        if context.run.dry_run:
            counts["extracted"] = pending.count()
        else:
            done = link_backfill(
                workspace=context.run.workspace,
                progress=lambda p: context.step("link", p.memories, p.memories + p.remaining),
            )
            counts = {"extracted": done.memories, "entity_links": done.links}
    through = context.watermark("link")
    high = newest_id(context.workspace_id)
    ids = list(
        written_since(context, through, high, embedding__isnull=False).values_list("id", flat=True)
    )
    made = 0
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        pairs = _related(context.workspace_id, batch)
        if not context.run.dry_run:
            with transaction.atomic():
                Link.objects.bulk_create(
                    [
                        Link(
                            workspace_id=context.workspace_id,
                            source_id=newer,
                            target_memory_id=older,
                            kind="relates_to",
                            weight=min(max(similarity, 0.0), 1.0),
                            origin=Link.Origin.CONSOLIDATION,
                            evidence={"similarity": round(similarity, 6), "why": why},
                        )
                        for (newer, older), (similarity, why) in pairs.items()
                    ],
                    ignore_conflicts=True,
                )
                context.advance("link", batch[-1])
        made += len(pairs)
        context.step("link", min(start + BATCH, len(ids)), len(ids))
    context.advance("link", high)
    return {**counts, "memories": len(ids), "relates_to": made, "read_after_id": through}


def _related(workspace_id: int, batch: list[int]) -> dict[tuple[int, int], tuple[float, str]]:
    """(newer id, older id) -> (similarity, "session" or "entities") for the batch's memories
    and their neighbours that ``link`` relates."""
    sql = f"""
        SELECT m.id, o.id, o.similarity,
            CASE WHEN m.session <> '' AND o.session = m.session THEN 'session' ELSE 'entities' END
        FROM memories_memory m
        CROSS JOIN LATERAL (
            SELECT n.id, n.session, 1 - (n.embedding <=> m.embedding) AS similarity
            FROM memories_memory n
            WHERE n.workspace_id = {int(workspace_id)} AND n.status = 'active'
                AND n.embedding IS NOT NULL AND n.embedding_model = m.embedding_model
                AND n.scope_id = m.scope_id AND n.id <> m.id
            ORDER BY n.embedding <=> m.embedding
            LIMIT {int(settings.MM_RELATES_NEIGHBOURS)}
        ) AS o
        WHERE m.id = ANY(%(batch)s) AND o.similarity >= %(min_similarity)s
            AND (
                (m.session <> '' AND o.session = m.session)
                OR EXISTS (
                    SELECT 1 FROM memories_link a
                    JOIN memories_link b ON b.target_entity_id = a.target_entity_id
                    WHERE a.source_id = m.id AND b.source_id = o.id
                        AND a.removed_at IS NULL AND b.removed_at IS NULL
                )
            )
            AND NOT EXISTS (
                SELECT 1 FROM memories_link c
                WHERE (c.source_id = m.id AND c.target_memory_id = o.id)
                    OR (c.source_id = o.id AND c.target_memory_id = m.id)
            )
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "batch": [Int8(i) for i in batch],
                "min_similarity": float(settings.MM_RELATES_MIN_SIMILARITY),
            },
        )
        rows = cursor.fetchall()
    return {(max(a, b), min(a, b)): (float(similarity), why) for a, b, similarity, why in rows}


def supersede_phase(context: PhaseContext) -> dict[str, int]:
    """A memory written since the watermark that gives another value for a slot an older active
    memory of its scope fills (an entity both mention, a single-valued attribute of
    ``memories.divergence.ATTRIBUTES``: a renewal or due month, a plan, an owner) supersedes it
    when the rule is confident (``HIGH_CONFIDENCE``: the same writer, one value on each side),
    and is proposed to a curator otherwise (``SupersessionProposal``)."""
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


#: What makes the supersede rule confident enough to apply without a curator.
HIGH_CONFIDENCE = "the same writer restated the slot with one value on each side"


@dataclass
class SlotChange:
    older: Memory
    newer: Memory
    entity_id: int
    attribute: str
    old_values: list[str]
    new_values: list[str]

    @property
    def confident(self) -> bool:
        return (
            self.older.source == self.newer.source
            and len(self.old_values) == 1
            and len(self.new_values) == 1
        )


def _slot_changes(workspace_id: int, batch: list[int]) -> list[SlotChange]:
    """The batch's memories that change a slot of an older memory of their scope, oldest
    change first."""
    newer = {
        m.pk: m
        for m in Memory.objects.filter(pk__in=batch).defer("embedding", "episode_embedding")
        if attributes(m.text)
    }
    if not newer:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT m.id, o.id, a.target_entity_id
            FROM memories_memory m
            JOIN memories_link a ON a.source_id = m.id AND a.target_entity_id IS NOT NULL
                AND a.removed_at IS NULL
            CROSS JOIN LATERAL (
                SELECT o.id FROM memories_link b
                JOIN memories_memory o ON o.id = b.source_id
                WHERE b.target_entity_id = a.target_entity_id AND b.removed_at IS NULL
                    AND o.workspace_id = m.workspace_id AND o.scope_id = m.scope_id
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
    older = Memory.objects.defer("embedding", "episode_embedding").in_bulk({o for _, o, _ in rows})
    found: dict[tuple[int, int], SlotChange] = {}
    for new_id, old_id, entity_id in rows:
        before, after = attributes(older[old_id].text), attributes(newer[new_id].text)
        for slot in sorted(before.keys() & after.keys()):
            if before[slot].isdisjoint(after[slot]) and (new_id, old_id) not in found:
                found[(new_id, old_id)] = SlotChange(
                    older=older[old_id],
                    newer=newer[new_id],
                    entity_id=entity_id,
                    attribute=slot,
                    old_values=sorted(before[slot]),
                    new_values=sorted(after[slot]),
                )
    recorded = set(
        SupersessionProposal.objects.filter(newer_id__in={n for n, _ in found}).values_list(
            "newer_id", "older_id"
        )
    )
    return [change for key, change in sorted(found.items()) if key not in recorded]


def _settle(context: PhaseContext, change: SlotChange) -> str:
    """Apply a confident change (``applied``) or propose it (``proposed``); in a dry run only
    say which. A memory superseded meanwhile (by an earlier change of this run) is left."""
    kind = "applied" if change.confident else "proposed"
    if context.run.dry_run:
        return kind
    entity = Entity.objects.get(pk=change.entity_id)
    rule = (
        f"{change.attribute} of {entity.name}: {', '.join(change.old_values)} -> "
        f"{', '.join(change.new_values)}"
    )
    if kind == "applied":
        try:
            with transaction.atomic():
                supersede(
                    old=change.older,
                    new=change.newer,
                    reason=f"consolidation rule ({HIGH_CONFIDENCE}): {rule}",
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


def threads(context: PhaseContext) -> dict[str, int]:
    """Open Threads (``consolidation.threads``): the episodic memories written since the
    watermark placed in threads of their scope, a batch at a time; each batch (its members,
    threads, word counts and the watermark) is stored in one transaction, so a run stopped
    anywhere goes on after its last whole batch."""
    through = context.watermark("threads")
    high = newest_id(context.workspace_id)
    rows = list(
        written_since(
            context, through, high, EPISODIC, embedding__isnull=False, thread_member__isnull=True
        ).values_list("id", flat=True)
    )
    counts = {"memories": len(rows), "joined": 0, "started": 0, "unthreaded": 0, "threads": 0}
    touched_all: set[int] = set()
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        with transaction.atomic():
            done = _thread_batch(context, batch)
            context.advance("threads", batch[-1])
        for key in ("joined", "started", "unthreaded"):
            counts[key] += done[key]
        touched_all |= done["touched"]
        context.step("threads", min(start + BATCH, len(rows)), len(rows))
    context.advance("threads", high)
    counts["threads"] = len(touched_all)
    return {**counts, "read_after_id": through}


def _thread_batch(context: PhaseContext, batch: list[int]) -> dict[str, Any]:
    """Place one batch's memories (module docstring of ``consolidation.threads``)."""
    memories = list(
        Memory.objects.filter(pk__in=batch)
        .order_by("id")
        .only("id", "scope_id", "text", "episode_text", "embedding", "thread", "created_at")
    )
    weights = {m.pk: open_threads.weighted_words(m.text, m.episode_text) for m in memories}
    by_scope: dict[int, list[Memory]] = {}
    for memory in memories:
        by_scope.setdefault(memory.scope_id, []).append(memory)
    done: dict[str, Any] = {"joined": 0, "started": 0, "unthreaded": 0, "touched": set()}
    for scope_id, members in by_scope.items():
        candidates = _thread_candidates(context.workspace_id, scope_id, [m.pk for m in members])
        states = _load_states({pk for pks in candidates.values() for pk in pks})
        labels = {m.thread for m in members if m.thread}
        for thread in Thread.objects.filter(scope_id=scope_id, label__in=labels):
            states.setdefault(thread.pk, _state_of(thread))
        by_label = {state.label: state for state in states.values() if state.label}
        vocabulary = _vocabulary(
            context,
            scope_id,
            [weights[m.pk] for m in members],
            {w for state in states.values() for w in state.words},
        )
        fresh: list[open_threads.ThreadState] = []
        for memory in members:
            vector = np.asarray(memory.embedding, dtype=np.float64)
            vector /= max(float(np.linalg.norm(vector)), 1e-12)
            chosen, evidence = None, {"by": "new"}
            if memory.thread:
                chosen, evidence = by_label.get(memory.thread), {"by": "label"}
            else:
                memory_words = vocabulary.vector(weights[memory.pk])
                if not memory_words:
                    done["unthreaded"] += 1
                    continue
                pool = [states[pk] for pk in candidates.get(memory.pk, []) if pk in states]
                pool += [state for state in fresh if state not in pool]
                best = max(
                    (
                        (
                            *open_threads.score(
                                vector,
                                memory_words,
                                state,
                                vocabulary,
                                settings.MM_THREAD_WORD_WEIGHT,
                            ),
                            index,
                        )
                        for index, state in enumerate(pool)
                        if not state.label  # a named thread takes its name's memories only
                    ),
                    default=None,
                )
                if best is not None and best[0] >= settings.MM_THREAD_MIN_SCORE:
                    chosen = pool[best[3]]
                    evidence = {
                        "by": "similarity",
                        "score": round(best[0], 4),
                        "similarity": round(best[1], 4),
                        "words": round(best[2], 4),
                    }
            if chosen is None:
                chosen = open_threads.ThreadState(
                    pk=None,
                    scope_id=scope_id,
                    label=memory.thread,
                    size=0,
                    centroid=np.zeros_like(vector),
                    words={},
                    first_seen=memory.created_at,
                    last_seen=memory.created_at,
                )
                fresh.append(chosen)
                if memory.thread:
                    by_label[memory.thread] = chosen
                done["started"] += 1
            else:
                done["joined"] += 1
            chosen.add(memory.pk, vector, weights[memory.pk], memory.created_at, evidence)
        touched = [state for state in [*states.values(), *fresh] if state.touched]
        if not context.run.dry_run:
            done["touched"] |= _store_threads(context, scope_id, touched, vocabulary)
        else:
            done["touched"] |= {state.pk or id(state) for state in touched}
    return done


def _thread_candidates(workspace_id: int, scope_id: int, ids: list[int]) -> dict[int, list[int]]:
    """Each memory's ``MM_THREAD_CANDIDATES`` nearest threads of its scope by centroid."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT m.id, array_agg(t.id)
            FROM memories_memory m
            CROSS JOIN LATERAL (
                SELECT t.id FROM {Thread._meta.db_table} t
                WHERE t.workspace_id = %(workspace)s AND t.scope_id = %(scope)s
                    AND t.centroid IS NOT NULL AND t.label = ''
                ORDER BY t.centroid <=> m.embedding
                LIMIT {int(settings.MM_THREAD_CANDIDATES)}
            ) AS t
            WHERE m.id = ANY(%(ids)s)
            GROUP BY m.id
            """,
            {"workspace": workspace_id, "scope": scope_id, "ids": [Int8(i) for i in ids]},
        )
        return dict(cursor.fetchall())


def _state_of(thread: Thread) -> open_threads.ThreadState:
    return open_threads.ThreadState(
        pk=thread.pk,
        scope_id=thread.scope_id,
        label=thread.label,
        size=thread.size,
        centroid=np.asarray(thread.centroid, dtype=np.float64),
        words=dict(thread.words),
        first_seen=thread.first_seen,
        last_seen=thread.last_seen,
    )


def _load_states(pks: set[int]) -> dict[int, open_threads.ThreadState]:
    return {thread.pk: _state_of(thread) for thread in Thread.objects.filter(pk__in=pks)}


def _vocabulary(
    context: PhaseContext, scope_id: int, batch: list[dict[str, float]], thread_words: set[str]
) -> open_threads.Vocabulary:
    """Count the batch's own words into the scope's frequencies (in a dry run, only in memory)
    and read the frequencies the batch and its candidate threads need."""
    own = Counter(word for weights in batch for word, weight in weights.items() if weight >= 1)
    corpus = ThreadCorpus.objects.filter(scope_id=scope_id).first()
    total = (corpus.memories if corpus is not None else 0) + len(batch)
    if not context.run.dry_run:
        ThreadCorpus.objects.update_or_create(
            scope_id=scope_id,
            defaults={"workspace_id": context.workspace_id, "memories": total},
        )
        table = WordFrequency._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                INSERT INTO {table} (workspace_id, scope_id, word, memories)
                SELECT %(workspace)s, %(scope)s, word, n
                FROM unnest(%(words)s::text[], %(counts)s::int[]) AS t(word, n)
                ON CONFLICT (scope_id, word, workspace_id)
                DO UPDATE SET memories = {table}.memories + EXCLUDED.memories
                """,
                {
                    "workspace": context.workspace_id,
                    "scope": scope_id,
                    "words": list(own),
                    "counts": list(own.values()),
                },
            )
    needed = {word for weights in batch for word in weights} | thread_words
    frequency = dict(
        WordFrequency.objects.filter(scope_id=scope_id, word__in=needed).values_list(
            "word", "memories"
        )
    )
    if context.run.dry_run:
        for word, n in own.items():
            frequency[word] = frequency.get(word, 0) + n
    return open_threads.Vocabulary(total, frequency, settings.MM_THREAD_COMMON_SHARE)


def _store_threads(
    context: PhaseContext,
    scope_id: int,
    touched: list[open_threads.ThreadState],
    vocabulary: open_threads.Vocabulary,
) -> set[int]:
    """Write the touched threads, their new members, then each one's sessions, cues, status
    and title; returns their ids."""
    stored = set()
    for state in touched:
        values = {
            "size": state.size,
            "centroid": state.centroid.astype(np.float32),
            "words": state.kept_words(),
            "first_seen": state.first_seen,
            "last_seen": state.last_seen,
            "title": open_threads.title(state.words, vocabulary)[:200],
        }
        if state.pk is None:
            thread = Thread.objects.create(
                workspace_id=context.workspace_id, scope_id=scope_id, label=state.label, **values
            )
            state.pk = thread.pk
        else:
            Thread.objects.filter(pk=state.pk).update(**values, updated_at=timezone.now())
        ThreadMember.objects.bulk_create(
            [
                ThreadMember(
                    workspace_id=context.workspace_id,
                    thread_id=state.pk,
                    memory_id=memory_id,
                    evidence=evidence,
                )
                for memory_id, evidence in state.new_members
            ]
        )
        state.new_members.clear()
        refresh_thread_status(state.pk)
        stored.add(state.pk)
    return stored


def refresh_thread_status(thread_pk: int) -> Thread:
    """A thread's sessions, cues and status from its latest ``STATUS_MEMBERS`` active members."""
    now = timezone.now()
    members = list(
        Memory.objects.filter(thread_member__thread_id=thread_pk, status=Memory.Status.ACTIVE)
        .order_by("-created_at", "-id")
        .values_list("mem_id", "text", "created_at", "valid_from", "observed_at", "session")[
            : open_threads.STATUS_MEMBERS
        ]
    )
    members.reverse()
    found = open_threads.cues(
        [
            open_threads.Member(
                mem_id, text, written, max(filter(None, (start, seen)), default=None)
            )
            for mem_id, text, written, start, seen, _ in members
        ],
        now,
    )
    sessions = Memory.objects.filter(thread_member__thread_id=thread_pk).exclude(session="")
    Thread.objects.filter(pk=thread_pk).update(
        cues=found,
        status=Thread.Status.OPEN if found else Thread.Status.RESOLVED,
        sessions=sessions.values("session").distinct().count(),
    )
    return Thread.objects.get(pk=thread_pk)


def extract(context: PhaseContext) -> dict[str, int]:
    """Standalone facts a model finds in the episodic memories written since the watermark
    (``consolidation.facts``; only when ``MM_EXTRACTION_URL`` is set), a chunk of memories at a
    time, each chunk's facts, links and watermark in one transaction: a model that fails or
    times out fails the phase with its error and leaves the chunks before it stored."""
    through = context.watermark("extract")
    high = newest_id(context.workspace_id)
    rows = list(
        written_since(context, through, high, EPISODIC)
        .exclude(source=EXTRACTION_SOURCE)
        .defer("embedding", "episode_embedding")
    )
    counts = {"memories": len(rows), "facts": 0, "existing": 0, "refused": 0}
    for start in range(0, len(rows), facts.BATCH):
        chunk = rows[start : start + facts.BATCH]
        by_scope: dict[int, list[Memory]] = {}
        for memory in chunk:
            by_scope.setdefault(memory.scope_id, []).append(memory)
        found: list[tuple[facts.Fact, list[Memory]]] = []
        for members in by_scope.values():
            answer = facts.ask([(m.mem_id, m.text) for m in members])
            counts["refused"] += answer.refused
            by_id = {m.mem_id: m for m in members}
            found += [(fact, [by_id[i] for i in fact.sources]) for fact in answer.facts]
        with transaction.atomic():
            for fact, sources in found:
                if context.run.dry_run or _store_fact(context, fact, sources):
                    counts["facts"] += 1
                else:
                    counts["existing"] += 1
            context.advance("extract", chunk[-1].pk)
        context.step("extract", min(start + facts.BATCH, len(rows)), len(rows))
    context.advance("extract", high)
    return {**counts, "read_after_id": through}


#: The source of a memory a model extracted.
EXTRACTION_SOURCE = "extraction"


def _store_fact(context: PhaseContext, fact: facts.Fact, sources: list[Memory]) -> bool:
    """The fact as a memory with its ``derived_from`` links; False when its scope already has
    it (a chunk done again after a stop)."""
    scope_id = sources[0].scope_id
    digest = content_hash(scope_id=scope_id, source=EXTRACTION_SOURCE, text=fact.text)
    if Memory.objects.filter(scope_id=scope_id, content_hash=digest).exists():
        return False
    vector = get_embedder().embed([fact.text])[0]
    memory = Memory.objects.create(
        workspace_id=context.workspace_id,
        scope_id=scope_id,
        text=fact.text,
        category=Memory.Category.FACT,
        memory_type=Memory.MemoryType.SEMANTIC,
        source=EXTRACTION_SOURCE,
        created_at=max(m.created_at for m in sources),
        embedding=vector,
        embedding_model=current_model_name(),
        content_hash=digest,
        metadata={
            "extracted_from": [m.mem_id for m in sources],
            "model": settings.MM_EXTRACTION_MODEL,
        },
        **{f"{d}_score": v for d, v in fact.scores.items()},
        **{f"{d}_origin": Memory.ScoreOrigin.EXTRACTION for d in fact.scores},
    )
    Link.objects.bulk_create(
        [
            Link(
                workspace_id=context.workspace_id,
                source=memory,
                target_memory=source,
                kind="derived_from",
                origin=Link.Origin.CONSOLIDATION,
                evidence={"model": settings.MM_EXTRACTION_MODEL},
            )
            for source in sources
        ]
    )
    record(
        memory,
        Action.REMEMBER,
        new={"text": fact.text, "extracted_from": [m.mem_id for m in sources]},
        reason=f"consolidation: extracted by {settings.MM_EXTRACTION_MODEL}",
    )
    return True


def divergence(context: PhaseContext) -> dict[str, int]:
    """Divergence detection over the memories written since its last run
    (``memories.services.divergence``; only when ``MM_DIVERGENCE`` is on)."""
    result = divergence_run(
        workspace=context.run.workspace,
        dry_run=context.run.dry_run,
        progress=lambda done, total: context.step("divergence", done, total),
    )
    return {"memories": result.memories, "pairs": result.pairs, "flagged": len(result.flagged)}


def rescore(context: PhaseContext) -> dict[str, int]:
    """The bundled scorer's dimensions filled where they are empty (a memory written while the
    scorer was skipped, or before it existed), for memories embedded by the model the scorer
    was fitted on; a score the writer gave is never touched (origin ``scorer``)."""
    dims = [d for d in STARE_DIMENSIONS if d not in skipped_dimensions()]
    model = bundled_scorer().embedding_model
    if not dims or current_model_name() != model:
        return {"memories": 0, "scored": 0}
    empty = Q()
    for dim in dims:
        empty |= Q(**{f"{dim}_score__isnull": True})
    ids = list(
        Memory.objects.filter(
            empty,
            workspace_id=context.workspace_id,
            status=Memory.Status.ACTIVE,
            embedding_model=model,
        )
        .exclude(category__in=skipped_categories())
        .order_by("id")
        .values_list("id", flat=True)
    )
    scored = 0
    for start in range(0, len(ids), BATCH):
        memories = list(Memory.objects.filter(pk__in=ids[start : start + BATCH]).order_by("id"))
        given = [{d for d in dims if getattr(m, f"{d}_score") is not None} for m in memories]
        scores = auto_scores(
            [m.text for m in memories],
            np.array([m.embedding for m in memories], dtype=np.float32),
            [m.category for m in memories],
            given,
        )
        if not context.run.dry_run:
            with transaction.atomic():
                for memory, found in zip(memories, scores, strict=True):
                    if not found:
                        continue
                    for dim, value in found.items():
                        setattr(memory, f"{dim}_score", value)
                        setattr(memory, f"{dim}_origin", Memory.ScoreOrigin.SCORER)
                    memory.save(
                        update_fields=[
                            *(f"{d}_score" for d in found),
                            *(f"{d}_origin" for d in found),
                        ]
                    )
                    record(
                        memory,
                        Action.RESCORE,
                        old=dict.fromkeys((f"{d}_score" for d in found), None),
                        new={f"{d}_score": v for d, v in found.items()},
                        reason="consolidation: the bundled scorer filled empty dimensions",
                    )
        scored += sum(1 for found in scores if found)
        context.step("rescore", min(start + BATCH, len(ids)), len(ids))
    return {"memories": len(ids), "scored": scored}


def asymmetry(context: PhaseContext) -> dict[str, int]:
    """Sources' records counted again from the memories' histories and kept, and the engine's
    A scores recomputed from them (``memories.services.asymmetry``)."""
    result = asymmetry_refresh(
        workspace_id=context.workspace_id,
        dry_run=context.run.dry_run,
        progress=lambda done, total: context.step("asymmetry", done, total),
    )
    return {"sources": result.sources, "memories": result.memories, "rescored": result.rescored}


def compile_files(context: PhaseContext) -> dict[str, int]:
    """Each agent's compiled memory file (default options) compiled and kept
    (``consolidation.snapshots``), for agents that load it at start; one that quotes a memory
    erased meanwhile is not kept."""
    agents = list(Agent.objects.filter(workspace_id=context.workspace_id).order_by("id"))
    tokens = 0
    for number, agent in enumerate(agents, 1):
        compiled = compiled_memory_file(workspace=context.run.workspace, agent=agent)
        tokens += compiled.tokens
        if not context.run.dry_run:
            snapshot_keep(agent=agent, compiled=compiled, run=context.run)
        context.step("compile", number, len(agents))
    return {"agents": len(agents), "tokens": tokens}


#: The phases, in the order a run takes them.
PHASES: dict[str, Callable[[PhaseContext], dict[str, int]]] = {
    "dedupe": dedupe,
    "link": link,
    "supersede": supersede_phase,
    "threads": threads,
    "extract": extract,
    "divergence": divergence,
    "rescore": rescore,
    "asymmetry": asymmetry,
    "compile": compile_files,
}
