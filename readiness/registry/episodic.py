"""E: a memory's episode, Open Threads and saga recall."""

from __future__ import annotations

from django.conf import settings

from readiness.registry.common import CHECK_MODULES, SEARCH_MODULES, SEARCH_SETTINGS, WRITE_MODULES
from readiness.registry.declarations import Capability, Check, declared


def _episodes() -> str:
    return "customer-default" if settings.MM_EPISODE_WINDOW > 0 else "off"


def _threads() -> str:
    """A pilot, off unless this install switched it on."""
    return "pilot (on)" if settings.MM_OPEN_THREADS else "pilot (off)"


def _saga() -> str:
    """A preview, off unless this install switched it on."""
    return "opt-in (opted in)" if settings.MM_SAGA else "off"


#: What Open Threads must separate on LoCoMo to be on by default: evidence pairs co-threaded
#: minus all pairs co-threaded (set before any measurement).
THREADS_SEPARATION = 0.30
#: What saga recall must gain on LoCoMo's multi-hop questions to be on by default.
SAGA_MULTIHOP_GAIN = 0.05


EPISODIC: tuple[Capability, ...] = (
    Capability(
        dim="E",
        name="anchor",
        implementation=declared("memories.services.episodes", "E/anchor"),
        summary="a memory is indexed with its episode (the turns before it in its session)",
        modules=(*WRITE_MODULES, *SEARCH_MODULES, *CHECK_MODULES),
        settings=(*SEARCH_SETTINGS,),
        switch="MM_EPISODE_WINDOW",
        deployment=_episodes,
        checks=(
            Check(
                "e.anchor.reply_found",
                "synthetic",
                "share of replies found by the words of what they reply to",
                1.0,
                "E anchor beyond synthetic evidence",
            ),
        ),
    ),
    Capability(
        dim="E",
        name="threads",
        implementation=declared("consolidation.threads", "E/threads"),
        summary="Open Threads: episodic memories grouped across sessions by consolidation, "
        "open while a plan, a wait or a question has no answer; listed in the compiled file",
        modules=(
            "consolidation/threads.py",
            "consolidation/phases/context.py",
            "consolidation/phases/threads.py",
            "consolidation/services.py",
            "memories/compile/file.py",
            "memories/compile/groups.py",
            "memories/compile/render.py",
            *WRITE_MODULES,
            *CHECK_MODULES,
        ),
        settings=(
            "MM_OPEN_THREADS",
            "MM_THREAD_MIN_SCORE",
            "MM_THREAD_WORD_WEIGHT",
            "MM_THREAD_COMMON_SHARE",
            "MM_THREAD_CANDIDATES",
            "MM_OPEN_THREADS_MAX",
            "MM_OPEN_THREADS_BUDGET_SHARE",
            "MM_EMBEDDER",
            "MM_EMBEDDER_MODEL",
        ),
        switch="MM_OPEN_THREADS",
        deployment=_threads,
        checks=(
            Check(
                "e.threads.grouping",
                "synthetic",
                "share of trials where planted stories told across sessions are grouped into "
                "their own threads, open or resolved as their cues say, and a reader's "
                "compiled file lists only the open threads of scopes it sees",
                1.0,
                "E threads beyond synthetic evidence",
            ),
            Check(
                "e.threads.locomo_cothreading",
                "gated-eval",
                "LoCoMo: share of multi-hop evidence pairs told in different sessions put in "
                "one thread, minus the share of all such pairs of turns put in one thread",
                THREADS_SEPARATION,
                "Open Threads on by default",
                needs="locomo",
            ),
        ),
    ),
    Capability(
        dim="E",
        name="saga",
        implementation=declared("consolidation.saga", "E/saga"),
        summary="saga recall: the threads of a query's best hits, their memories in time "
        "order and an extractive summary",
        modules=(
            "consolidation/saga.py",
            "consolidation/threads.py",
            "consolidation/phases/context.py",
            "consolidation/phases/threads.py",
            *SEARCH_MODULES,
            *CHECK_MODULES,
        ),
        settings=(
            "MM_SAGA",
            "MM_SAGA_HITS",
            "MM_SAGA_THREADS",
            "MM_SAGA_SUMMARY",
            "MM_THREAD_MIN_SCORE",
            "MM_THREAD_WORD_WEIGHT",
            *SEARCH_SETTINGS,
        ),
        switch="MM_SAGA",
        deployment=_saga,
        checks=(
            Check(
                "e.saga.story",
                "synthetic",
                "share of trials where a query recalls its whole planted story in time order, "
                "with a summary made of the story's own sentences, and nothing a reader may "
                "not see",
                1.0,
                "E saga beyond synthetic evidence",
            ),
            Check(
                "e.saga.locomo_multihop_gain",
                "gated-eval",
                "LoCoMo multi-hop evidence recall of saga recall's 20 memories minus the plain "
                "search's top 20",
                SAGA_MULTIHOP_GAIN,
                "saga recall on by default",
                needs="locomo",
            ),
        ),
    ),
)
