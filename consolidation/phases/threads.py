"""Open Threads: episodic memories placed in threads of their scope."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.numeric import Int8

from consolidation import threads as open_threads
from consolidation.models import (
    ThreadCorpus,
    WordFrequency,
)
from consolidation.phases.context import BATCH, EPISODIC, PhaseContext, newest_id, written_since
from memories.models import (
    Memory,
    Thread,
)
from memories.services.consolidated import thread_status_set, thread_store


def run(context: PhaseContext) -> dict[str, int]:
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
        Memory.objects.filter(workspace_id=context.workspace_id, pk__in=batch)
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
            WHERE m.workspace_id = %(workspace)s AND m.id = ANY(%(ids)s)
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
    corpus = ThreadCorpus.objects.filter(
        workspace_id=context.workspace_id, scope_id=scope_id
    ).first()
    total = (corpus.memories if corpus is not None else 0) + len(batch)
    if not context.run.dry_run:
        ThreadCorpus.objects.update_or_create(
            workspace_id=context.workspace_id, scope_id=scope_id, defaults={"memories": total}
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
        WordFrequency.objects.filter(
            workspace_id=context.workspace_id, scope_id=scope_id, word__in=needed
        ).values_list("word", "memories")
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
    and title (``memories.services.consolidated``); returns their ids."""
    stored = set()
    for state in touched:
        state.pk = thread_store(
            workspace_id=context.workspace_id,
            scope_id=scope_id,
            thread_pk=state.pk,
            label=state.label,
            size=state.size,
            centroid=state.centroid.astype(np.float32),
            words=state.kept_words(),
            first_seen=state.first_seen,
            last_seen=state.last_seen,
            title=open_threads.title(state.words, vocabulary)[:200],
            members=state.new_members,
        )
        state.new_members.clear()
        refresh_thread_status(context.workspace_id, state.pk)
        stored.add(state.pk)
    return stored


def refresh_thread_status(workspace_id: int, thread_pk: int) -> Thread:
    """A thread's sessions, cues and status from its latest ``STATUS_MEMBERS`` active members
    (stored by ``memories.services.consolidated.thread_status_set``)."""
    now = timezone.now()
    in_thread = Memory.objects.filter(workspace_id=workspace_id, thread_member__thread_id=thread_pk)
    members = list(
        in_thread.filter(status=Memory.Status.ACTIVE)
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
    return thread_status_set(workspace_id=workspace_id, thread_pk=thread_pk, cues=found)
