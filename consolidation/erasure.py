"""What consolidation does when memories are erased for good (``memories.signals.erasing``, in
the erasure's transaction, while their rows still exist): it takes their words out of what it
keeps. Their threads are made again from the members left (words, vector, title, cues, size,
times) or removed when none is left; the scope's word counts no longer count them; the compiled
files kept for agents that name them, by id, are dropped (``consolidation.snapshots``). After
the commit the worker vacuums its tables (``purge_erased``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from consolidation import threads as open_threads
from consolidation.models import PhaseWatermark, ThreadCorpus, WordFrequency
from consolidation.phases import refresh_thread_status
from consolidation.snapshots import snapshots_drop
from memories.models import Memory, Thread, ThreadMember
from memories.services.erase_copies import forget_log_entries
from memories.services.purge import WAIT_SECONDS, vacuum_tables

#: Consolidation's tables an erasure deletes from (memories' own are vacuumed by memories).
PURGED_TABLES = (
    "consolidation_compiledsnapshot",
    "consolidation_wordfrequency",
    "consolidation_supersessionproposal",
)


def forget_erased(sender: Any, *, workspace_id: int, memory_pks: list[int], **kwargs: Any) -> None:
    erased = list(
        Memory.objects.filter(pk__in=memory_pks).values(
            "pk", "mem_id", "scope_id", "text", "thread_member"
        )
    )
    _uncount_words(workspace_id, erased)
    threads = {row["thread_member"] for row in erased if row["thread_member"] is not None}
    thread_pks = set(
        ThreadMember.objects.filter(pk__in=threads).values_list("thread_id", flat=True)
    )
    ThreadMember.objects.filter(memory_id__in=memory_pks).delete()
    for thread_pk in thread_pks:
        _rebuild_thread(thread_pk)
    forget_log_entries(Thread, thread_pks)  # a line names the thread by its title then
    snapshots_drop(workspace_id=workspace_id, memory_pks=memory_pks)
    transaction.on_commit(lambda: _queue_purge(workspace_id))


def _uncount_words(workspace_id: int, erased: list[dict]) -> None:
    """The threads phase counted the words of the memories it read (up to its watermark)."""
    mark = PhaseWatermark.objects.filter(workspace_id=workspace_id, phase="threads").first()
    through = mark.through_id if mark is not None else 0
    by_scope: dict[int, Counter] = {}
    read: Counter = Counter()
    for row in erased:
        if row["pk"] > through:
            continue
        by_scope.setdefault(row["scope_id"], Counter()).update(open_threads.own_words(row["text"]))
        read[row["scope_id"]] += 1
    for scope_id, words in by_scope.items():
        ThreadCorpus.objects.filter(scope_id=scope_id).update(
            memories=F("memories") - read[scope_id]
        )
        table = WordFrequency._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {table} w SET memories = w.memories - t.n
                FROM unnest(%(words)s::text[], %(counts)s::int[]) AS t(word, n)
                WHERE w.scope_id = %(scope)s AND w.word = t.word
                """,
                {"scope": scope_id, "words": list(words), "counts": list(words.values())},
            )
        WordFrequency.objects.filter(scope_id=scope_id, memories__lte=0).delete()


def _rebuild_thread(thread_pk: int) -> None:
    thread = Thread.objects.get(pk=thread_pk)
    members = list(
        Memory.objects.filter(thread_member__thread_id=thread_pk).values_list(
            "text", "episode_text", "embedding", "created_at"
        )
    )
    if not members:
        thread.delete()
        return
    words: Counter = Counter()
    for text, episode_text, _, _ in members:
        words.update(open_threads.weighted_words(text, episode_text))
    kept = dict(
        sorted(words.items(), key=lambda item: (-item[1], item[0]))[
            : open_threads.THREAD_WORDS_KEPT
        ]
    )
    corpus = ThreadCorpus.objects.filter(scope_id=thread.scope_id).first()
    frequency = dict(
        WordFrequency.objects.filter(scope_id=thread.scope_id, word__in=list(kept)).values_list(
            "word", "memories"
        )
    )
    vocabulary = open_threads.Vocabulary(
        corpus.memories if corpus is not None else 0, frequency, settings.MM_THREAD_COMMON_SHARE
    )
    vectors = [np.asarray(vector) for _, _, vector, _ in members if vector is not None]
    Thread.objects.filter(pk=thread_pk).update(
        words={word: round(weight, 4) for word, weight in kept.items()},
        title=open_threads.title(kept, vocabulary)[:200],
        centroid=np.mean(vectors, axis=0).astype(np.float32) if vectors else None,
        size=len(members),
        first_seen=min(when for *_, when in members),
        last_seen=max(when for *_, when in members),
    )
    refresh_thread_status(thread.workspace_id, thread_pk)


def purge_storage(*, full: bool = False, wait: float = WAIT_SECONDS) -> dict[str, int]:
    """Consolidation's tables vacuumed (or rewritten), and the word counts' index rebuilt
    (its keys, words of erased texts, outlive a vacuum): ``memories.services.purge``'s rules.
    Not in a transaction."""
    older = vacuum_tables(PURGED_TABLES, full=full, wait=wait)
    if not full:
        with connection.cursor() as cursor:
            cursor.execute("REINDEX TABLE CONCURRENTLY consolidation_wordfrequency")
    return {"tables": len(PURGED_TABLES), "older_snapshots": older}


def purge_tables(sender: Any, *, full: bool, wait: float, **kwargs: Any) -> dict[str, int]:
    """``meaning-memory purge``: consolidation's tables too."""
    return purge_storage(full=full, wait=wait)


def _queue_purge(workspace_id: int) -> None:
    from django_q.tasks import async_task

    async_task("consolidation.tasks.purge_erased", workspace_id)
