"""R: links and their filters, divergence between writers, and traversal of the graph."""

from __future__ import annotations

from django.conf import settings

from readiness.registry.common import (
    CHECK_MODULES,
    RELATION_READ_MODULES,
    RELATION_WRITE_MODULES,
    SEARCH_MODULES,
    SEARCH_SETTINGS,
    WRITE_MODULES,
)
from readiness.registry.declarations import Capability, Check, declared


def _links() -> str:
    """Links and their filters are always on; the offline model is what the switch turns off."""
    return "customer-default" if settings.MM_ENTITY_EXTRACTION else "customer-default (no NER)"


def _traversal() -> str:
    """Opt-in: off unless this install switched it on."""
    return "opt-in (opted in)" if settings.MM_TRAVERSAL else "opt-in"


def _divergence() -> str:
    """Off unless this install switched it on."""
    return "opt-in (opted in)" if settings.MM_DIVERGENCE else "off"


#: A majority of multi-hop questions: set before any run, not fitted to one.
MULTIHOP_JOINED = 0.50
#: A gain of one point of multi-hop recall@10, set before any run.
GRAPH_MULTIHOP_GAIN = 0.01
#: What the engine stores of labelled named entities against the plain model, over PER, ORG
#: and LOC: precision clearly above (two points), recall at most five points below.
NER_PRECISION_GAIN = 0.02
NER_RECALL_KEPT = -0.05


RELATIONAL: tuple[Capability, ...] = (
    Capability(
        dim="R",
        name="links",
        implementation=declared("memories.services.relations", "R/links"),
        summary="entities and typed links on every write; related_to, entity and min_r filters",
        modules=(
            *RELATION_WRITE_MODULES,
            *RELATION_READ_MODULES,
            "memories/search/relational.py",
            "memories/relational/extraction.py",
            "memories/relational/gazetteer.py",
            "memories/relational/spans.py",
            "memories/relational/people.py",
            "memories/relational/layout.py",
            "readiness/ner.py",
            *SEARCH_MODULES,
            *WRITE_MODULES,
            *CHECK_MODULES,
        ),
        settings=("MM_ENTITY_EXTRACTION", "MM_ENTITY_MATCH_SCORE", *SEARCH_SETTINGS),
        switch="MM_ENTITY_EXTRACTION",
        deployment=_links,
        checks=(
            Check(
                "r.links.filters",
                "synthetic",
                "share of trials where related_to, link_types, entity and min_r return what "
                "they document (and nothing a reader may not see)",
                1.0,
                "R links beyond synthetic evidence",
            ),
            Check(
                "r.links.ner_precision_gain",
                "gated-eval",
                "precision of the names the engine stores (PER, ORG, LOC) minus the plain "
                "model's, on CoNLL-2003-shaped sentences",
                NER_PRECISION_GAIN,
                "R links as gated-eval (entities worth linking)",
                needs="ner",
            ),
            Check(
                "r.links.ner_recall_kept",
                "gated-eval",
                "recall of the names the engine stores (PER, ORG, LOC) minus the plain model's, "
                "on CoNLL-2003-shaped sentences",
                NER_RECALL_KEPT,
                "R links as gated-eval (entities worth linking)",
                needs="ner",
            ),
        ),
    ),
    Capability(
        dim="R",
        name="divergence",
        implementation=declared("memories.services.divergence", "R/divergence"),
        summary="memories by different writers about the same thing that disagree: flagged "
        "with a contradicts link for a curator",
        modules=(
            "memories/divergence/detectors.py",
            "memories/divergence/slots.py",
            "memories/divergence/model.py",
            "memories/lexicon.py",
            "memories/services/divergence.py",
            "memories/services/decisions.py",
            "memories/selectors/divergences.py",
            "memories/selectors/neighbours.py",
            "memories/features.py",
            "readiness/pairs.py",
            "readiness/dialogue.py",
            "readiness/corrections.py",
            *CHECK_MODULES,
        ),
        settings=(
            "MM_DIVERGENCE",
            "MM_DIVERGENCE_THRESHOLD",
            "MM_DIVERGENCE_MIN_SIMILARITY",
            "MM_DIVERGENCE_NEIGHBOURS",
            "MM_DIVERGENCE_MODEL_URL",
            "MM_DIVERGENCE_MODEL",
            "MM_EMBEDDER",
            "MM_EMBEDDER_MODEL",
        ),
        switch="MM_DIVERGENCE",
        deployment=_divergence,
        checks=(
            Check(
                "r.divergence.flags",
                "synthetic",
                "share of trials where planted disagreements between writers are flagged, "
                "agreements and one writer's are not, and no reader sees a divergence with a "
                "memory it may not see",
                1.0,
                "R divergence beyond synthetic evidence",
            ),
            Check(
                "r.divergence.pairs_auc",
                "gated-eval",
                "AUC of the detector's score on labelled contradiction pairs (ProSeCCo's shape)",
                0.70,
                "divergence detection on by default",
                needs="pairs",
            ),
            Check(
                "r.divergence.dialogue_auc",
                "gated-eval",
                "AUC of the detector's score on two user turns of one dialogue as two writers' "
                "memories, a slot of a service given another value or not (the Schema-Guided "
                "Dialogue shape)",
                0.70,
                "divergence detection on by default",
                needs="dialogue",
            ),
            Check(
                "r.divergence.claims_auc",
                "gated-eval",
                "AUC of the detector's score on a claim and a revision's sentence as two "
                "writers' memories, refuted or supported (VitaminC's shape, its held-out part)",
                0.70,
                "divergence detection on by default",
                needs="corrections",
            ),
        ),
    ),
    Capability(
        dim="R",
        name="traversal",
        implementation=declared("memories.selectors.traversal", "R/traversal"),
        summary="following links from a memory or an entity, and the shortest path between "
        "two, as a reader may see them; search spread over the graph (expand: graph)",
        modules=(
            "memories/selectors/traversal.py",
            "memories/features.py",
            *RELATION_READ_MODULES,
            "memories/search/graph.py",
            "memories/search/gate.py",
            *SEARCH_MODULES,
            *CHECK_MODULES,
        ),
        settings=(
            "MM_TRAVERSAL",
            "MM_TRAVERSAL_TIMEOUT_MS",
            "MM_TRAVERSAL_MAX_ROWS",
            "MM_GRAPH_WEIGHT",
            "MM_GRAPH_SEEDS",
            "MM_GRAPH_RESTART",
            *SEARCH_SETTINGS,
        ),
        switch="MM_TRAVERSAL",
        deployment=_traversal,
        checks=(
            Check(
                "r.traversal.locomo_multihop_joined",
                "gated-eval",
                "share of LoCoMo multi-hop questions (category 1) whose evidence turns are "
                "joined pairwise within two links, hub entities (a speaker's name) aside",
                MULTIHOP_JOINED,
                "R traversal as gated-eval (the graph joins what questions join)",
                needs="locomo",
            ),
            Check(
                "r.traversal.paths",
                "synthetic",
                "share of trials where traverse and explain-path return the documented nodes "
                "and steps (and nothing reached through what a reader may not see)",
                1.0,
                "R traversal beyond synthetic evidence",
            ),
            Check(
                "r.traversal.locomo_graph_multihop",
                "gated-eval",
                "LoCoMo multi-hop recall@10 (category 1) gained by expand: graph over the "
                "plain search",
                GRAPH_MULTIHOP_GAIN,
                "expand: graph by default (which also needs no loss overall or over 0.01 in "
                "another category: benchmarks/locomo.py)",
                needs="locomo",
            ),
        ),
    ),
)
