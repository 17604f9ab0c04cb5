"""What the engine can do, per STARE dimension, declared beside the code that does it.

Each capability says how mature its implementation is (GA, beta, preview, declared by the
implementing module's ``READINESS``; or not built, when no module implements it), which
setting switches it and how it is deployed by default, which modules implement it (their hash
is the capability's code version), which settings it depends on (their hash is its
configuration version), and the checks that back it, with what each check blocks. The report
(``readiness.report``) adds the evidence: recorded check runs only.

``declarations`` holds the shapes, ``common`` what many capabilities share; ``core``,
``asymmetry``, ``relational``, ``episodic`` and ``scorer`` declare the capabilities by STARE
dimension, gathered here in the report's order.
"""

from __future__ import annotations

from readiness.registry.asymmetry import ASYMMETRY
from readiness.registry.core import CORE
from readiness.registry.declarations import DIMENSIONS, NOT_BUILT, Capability, Check, declared
from readiness.registry.episodic import EPISODIC
from readiness.registry.relational import RELATIONAL
from readiness.registry.scorer import SCORERS

__all__ = [
    "CAPABILITIES",
    "DIMENSIONS",
    "NOT_BUILT",
    "Capability",
    "Check",
    "all_checks",
    "capability",
    "declared",
]

CAPABILITIES: tuple[Capability, ...] = (*CORE, *ASYMMETRY, *RELATIONAL, *EPISODIC, *SCORERS)


def capability(key: str) -> Capability:
    return next(c for c in CAPABILITIES if c.key == key)


def all_checks() -> list[tuple[Capability, Check]]:
    return [(c, check) for c in CAPABILITIES for check in c.checks]
