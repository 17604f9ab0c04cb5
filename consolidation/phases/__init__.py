"""The phases of a consolidation run, one module a phase, each with a ``run`` function of the
run's context that returns its counts. Each reads the memories written since its watermark (all
of them the first time), is idempotent (run twice, the second finds nothing to do), and in a
dry run writes nothing."""

from __future__ import annotations

from collections.abc import Callable

from consolidation.phases import (
    asymmetry,
    compiled,
    dedupe,
    divergence,
    extract,
    link,
    rescore,
    supersede,
    threads,
)
from consolidation.phases.context import PhaseContext
from consolidation.phases.threads import refresh_thread_status

#: The phases, in the order a run takes them.
PHASES: dict[str, Callable[[PhaseContext], dict[str, int]]] = {
    "dedupe": dedupe.run,
    "link": link.run,
    "supersede": supersede.run,
    "threads": threads.run,
    "extract": extract.run,
    "divergence": divergence.run,
    "rescore": rescore.run,
    "asymmetry": asymmetry.run,
    "compile": compiled.run,
}

__all__ = ["PHASES", "PhaseContext", "refresh_thread_status"]
