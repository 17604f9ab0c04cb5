"""What the registry declares: a ``Capability`` with its ``Check``s, the STARE dimensions,
and the implementation level its module declares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

NOT_BUILT = "not built"
#: The STARE dimensions by letter, as the report names them.
DIMENSIONS = {
    "S": "Significance",
    "T": "Temporal",
    "A": "Asymmetry",
    "R": "Relational",
    "E": "Episodic",
}


def declared(module: str, key: str) -> str:
    """The implementation level the implementing module declares for ``key`` (its
    ``READINESS``), so the level lives beside the code."""
    from importlib import import_module

    return import_module(module).READINESS[key]


@dataclass(frozen=True)
class Check:
    id: str
    kind: str  # "synthetic" or "gated-eval"
    metric: str
    threshold: float
    blocks: str  # what a failure (or no run) holds back
    needs: str = ""  # the outside data a gated check reads: "locomo", "pairs"


@dataclass(frozen=True)
class Capability:
    dim: str
    name: str
    implementation: str  # GA, beta, preview, or NOT_BUILT
    summary: str
    modules: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    switch: str = ""  # the setting that switches it, when one does
    deployment: Callable[[], str] = field(default=lambda: "off")
    checks: tuple[Check, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.dim}/{self.name}"

    @property
    def dimension(self) -> str:
        """``S (Significance)``."""
        return f"{self.dim} ({DIMENSIONS[self.dim]})"
