"""A encoding: who a memory serves and who made its claim, and the A score."""

from __future__ import annotations

from django.conf import settings

from readiness.registry.common import CHECK_MODULES, WRITE_MODULES
from readiness.registry.declarations import Capability, Check, declared


def _asymmetry() -> str:
    """The A score is given to every memory; ranking uses it only when this install says."""
    return "opt-in (opted in)" if settings.MM_ASYMMETRY_RANKING else "off"


#: What the A score must reach on LIAR-shaped statements to be used for ranking (the issue's
#: bar, set before any measurement: the speakers' records alone reach 0.655).
ASYMMETRY_AUC = 0.70


ASYMMETRY: tuple[Capability, ...] = (
    Capability(
        dim="A",
        name="encoding",
        implementation=declared("memories.asymmetry.score", "A/encoding"),
        summary="whose perspective a memory serves, who made its claim and how; sources' "
        "records from feedback, supersession and divergences; the A score (off for ranking)",
        modules=(
            "memories/asymmetry/score.py",
            "memories/asymmetry/cues.py",
            "memories/data/asymmetry_model.json",
            "memories/services/asymmetry.py",
            "memories/selectors/sources.py",
            "readiness/liar.py",
            *WRITE_MODULES,
            *CHECK_MODULES,
        ),
        settings=("MM_SOURCE_PRIOR_STRENGTH", "MM_EMBEDDER", "MM_EMBEDDER_MODEL"),
        switch="MM_ASYMMETRY_RANKING",
        deployment=_asymmetry,
        checks=(
            Check(
                "a.encoding.attribution",
                "synthetic",
                "share of trials where attribution cues, the perspective and source filters, "
                "and sources' records after feedback (and the A scores that follow) behave as "
                "documented, counting only what a reader may see",
                1.0,
                "A encoding beyond synthetic evidence",
            ),
            Check(
                "a.encoding.liar_auc",
                "gated-eval",
                "AUC of the A score, true/mostly-true against false/pants-fire, on LIAR-shaped "
                "statements the model was not fitted on (speakers' records from the training "
                "statements' verdicts, replayed as feedback)",
                ASYMMETRY_AUC,
                "A in ranking (MM_ASYMMETRY_RANKING refuses to start until it passes)",
                needs="liar",
            ),
        ),
    ),
)
