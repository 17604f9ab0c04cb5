"""The bundled scorer's S, T and R scores on bulk writes."""

from __future__ import annotations

from collections.abc import Callable

from memories.scorer import calibration, skipped_dimensions
from readiness.registry.common import CHECK_MODULES
from readiness.registry.declarations import Capability, Check, declared


def _scorer(dim: str) -> Callable[[], str]:
    """customer-default when the calibration turns it on; ``opt-in (opted in)`` when only
    this install's MM_STARE_AUTO_SKIP_DIMS does; off otherwise."""

    def deployment() -> str:
        by_default = bool(calibration()["dimensions"].get(dim, {}).get("calibrated"))
        if dim in skipped_dimensions():
            return "off (this install)" if by_default else "opt-in"
        return "customer-default" if by_default else "opt-in (opted in)"

    return deployment


SCORERS: tuple[Capability, ...] = (
    *(
        Capability(
            dim=dim.upper(),
            name="scorer",
            implementation=declared("memories.scorer", f"{dim.upper()}/scorer"),
            summary=f"the bundled scorer fills {dim.upper()} scores on bulk writes",
            modules=(
                "memories/scorer.py",
                "memories/data/scorer_model.json",
                "memories/data/scorer_calibration.json",
                *CHECK_MODULES,
            ),
            settings=(
                "MM_STARE_AUTO_SKIP_DIMS",
                "MM_STARE_AUTO_SKIP_CATEGORIES",
                "MM_EMBEDDER",
                "MM_EMBEDDER_MODEL",
            ),
            switch="MM_STARE_AUTO_SKIP_DIMS",
            deployment=_scorer(dim),
            checks=(
                Check(
                    f"{dim}.scorer.locomo_auc",
                    "gated-eval",
                    f"AUC of the {dim.upper()} score on LoCoMo-shaped conversations it was not "
                    "fitted on",
                    0.70,
                    f"filling {dim.upper()} scores by default",
                    needs="locomo",
                ),
            ),
        )
        for dim in "str"
    ),
)
