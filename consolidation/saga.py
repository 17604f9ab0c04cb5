"""Saga recall (preview, ``MM_SAGA``, off): a whole story across sessions, on request.

With a query: the engine's search (the ``MM_SAGA_HITS`` best hits) and the threads those hits
belong to (``consolidation.threads``; at most ``MM_SAGA_THREADS``, the best hit's first). With
a thread id: that thread. The saga's memories are the hits and the active members of those
threads the reader can see; past ``limit``, the hits are kept first and then the members
nearest the query (or, for a thread, its centroid); they are returned in the order they were
written. The summary is extractive and made with no model: the ``MM_SAGA_SUMMARY`` sentences of
those memories that carry the most of their threads' words (a thread's words weighted as its
members use them), in time order, each with the memory it comes from.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from consolidation.threads import own_words
from memories.embeddings import get_embedder
from memories.errors import Forbidden, NotFound
from memories.models import Memory, Thread, ThreadMember
from memories.operations import memory_search
from memories.selectors.reader import Reader
from memories.temporal.validity import valid_at_q

#: How mature saga recall is, read by the readiness registry.
READINESS = {"E/saga": "preview"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def require_saga() -> None:
    if not settings.MM_SAGA:
        raise Forbidden(
            "saga recall is switched off on this engine (MM_SAGA, preview); an operator turns "
            "it on."
        )


@dataclass
class Saga:
    threads: list[Thread]
    memories: list[Memory]
    thread_of: dict[int, int]  # memory pk -> thread pk, for the members
    hits: list[int] = field(default_factory=list)  # the search's hits, best first
    summary: list[tuple[Memory, str]] = field(default_factory=list)


def saga_recall(
    reader: Reader,
    *,
    query: str | None = None,
    thread_id: str | None = None,
    limit: int = 20,
    query_vector: np.ndarray | None = None,
) -> Saga:
    """The saga of ``query`` or of the thread ``thread_id`` as ``reader`` sees it (module
    docstring); another workspace's or scope's thread is NotFound, as a missing one."""
    require_saga()
    hits: list[Memory] = []
    if thread_id is not None:
        thread = reader.sees(Thread.objects.filter(thread_id=thread_id)).first()
        if thread is None:
            raise NotFound(f"no thread {thread_id!r}")
        threads = [thread]
        anchor = (
            np.asarray(thread.centroid, dtype=np.float64) if thread.centroid is not None else None
        )
    else:
        if query_vector is None:  # embedded once, for the search and for ranking members
            query_vector = get_embedder().embed([query])[0]
        found = memory_search(
            reader,
            query=query,
            limit=settings.MM_SAGA_HITS,
            query_vector=query_vector,
        )
        hits = [hit.memory for hit in found]
        order = {memory.pk: rank for rank, memory in enumerate(hits)}
        owners = sorted(
            ThreadMember.objects.filter(memory_id__in=order).values_list("memory_id", "thread_id"),
            key=lambda row: order[row[0]],
        )
        chosen = list(dict.fromkeys(thread for _, thread in owners))[: settings.MM_SAGA_THREADS]
        by_pk = Thread.objects.in_bulk(chosen)
        threads = [by_pk[pk] for pk in chosen]
        anchor = query_vector
    members = list(
        reader.sees(
            Memory.objects.filter(
                valid_at_q(timezone.now()),
                thread_member__thread__in=threads,
                status=Memory.Status.ACTIVE,
            )
        ).select_related("thread_member")
    )
    thread_of = {m.pk: m.thread_member.thread_id for m in members}
    pool = {m.pk: m for m in hits}
    for member in members:
        pool.setdefault(member.pk, member)
    kept = list(pool.values())
    if len(kept) > limit:
        first = hits[:limit]
        rest = [m for m in kept if m.pk not in {h.pk for h in first}]
        rest.sort(key=lambda m: (-_cosine(m.embedding, anchor), m.created_at, m.pk))
        kept = first + rest[: limit - len(first)]
    kept.sort(key=lambda m: (m.created_at, m.pk))
    saga = Saga(threads=threads, memories=kept, thread_of=thread_of, hits=[m.pk for m in hits])
    saga.summary = summary(kept, threads)
    return saga


def _cosine(vector: Any, anchor: np.ndarray | None) -> float:
    if vector is None or anchor is None:
        return 0.0
    a = np.asarray(vector, dtype=np.float64)
    norms = float(np.linalg.norm(a) * np.linalg.norm(anchor))
    return float(np.dot(a, anchor) / norms) if norms else 0.0


def summary(memories: list[Memory], threads: list[Thread]) -> list[tuple[Memory, str]]:
    """The sentences of ``memories`` that carry the most of the threads' words (module
    docstring), in time order."""
    weights: dict[str, float] = {}
    for thread in threads:
        total = sum(thread.words.values()) or 1.0
        for word, weight in thread.words.items():
            weights[word] = weights.get(word, 0.0) + weight / total
    scored = []
    for position, memory in enumerate(memories):
        for index, sentence in enumerate(s for s in _SENTENCE.split(memory.text.strip()) if s):
            found = own_words(sentence)
            if not found:
                continue
            value = sum(weights.get(word, 0.0) for word in found) / math.sqrt(len(found))
            scored.append((value, position, index, memory, sentence.strip()))
    best = sorted(scored, key=lambda item: (-item[0], item[1], item[2]))[: settings.MM_SAGA_SUMMARY]
    return [(memory, sentence) for _, _, _, memory, sentence in sorted(best, key=lambda i: i[1:3])]
