"""A consolidation run as plain data, for every adapter."""

from __future__ import annotations

from typing import Any

from consolidation.models import ConsolidationRun
from consolidation.saga import Saga
from memories.models import Thread
from memories.presenters import memory_to_dict
from memories.services import iso


def run_to_dict(run: ConsolidationRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "status": run.status,
        "trigger": run.trigger,
        "phases": run.phases,
        "dry_run": run.dry_run,
        "counts": run.counts,
        "timings": run.timings,
        "error": run.error,
        "created_at": iso(run.created_at),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
    }


def phase_lines(run: ConsolidationRun) -> list[tuple[str, str, float | None]]:
    """Each phase asked, in run order: its counts as words ("merged 1, groups 1"; the watermark
    it read after left out) and its seconds; a phase that did not run has no counts."""
    lines = []
    for phase in run.phases:
        counts = run.counts.get(phase, {})
        text = ", ".join(
            f"{name.replace('_', ' ')} {value}"
            for name, value in sorted(counts.items())
            if name != "read_after_id"
        )
        lines.append((phase, text, run.timings.get(phase)))
    return lines


def thread_to_dict(thread: Thread) -> dict[str, Any]:
    return {
        "thread_id": thread.thread_id,
        "title": thread.title,
        "status": thread.status,
        "label": thread.label,
        "size": thread.size,
        "sessions": thread.sessions,
        "first_seen": iso(thread.first_seen),
        "last_seen": iso(thread.last_seen),
        "cues": thread.cues,
    }


def saga_to_dict(saga: Saga) -> dict[str, Any]:
    threads = {thread.pk: thread.thread_id for thread in saga.threads}
    hits = set(saga.hits)
    return {
        "threads": [thread_to_dict(thread) for thread in saga.threads],
        "memories": [
            {
                **memory_to_dict(memory),
                "thread_id": threads.get(saga.thread_of.get(memory.pk)),
                "hit": memory.pk in hits,
            }
            for memory in saga.memories
        ],
        "summary": [{"mem_id": memory.mem_id, "sentence": text} for memory, text in saga.summary],
    }


def saga_text(saga: Saga) -> str:
    """The saga as an agent reads it: its threads, then the summary, each line with its mem_id."""
    lines = [
        f"{len(saga.memories)} memories from {len(saga.threads)} "
        f"{'thread' if len(saga.threads) == 1 else 'threads'}"
        + (
            ": " + "; ".join(f"{t.title} ({t.status})" for t in saga.threads)
            if saga.threads
            else ""
        )
    ]
    lines += [f"- {text} (mem_id: {memory.mem_id})" for memory, text in saga.summary]
    return "\n".join(lines)
