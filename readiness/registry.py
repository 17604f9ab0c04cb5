"""What the engine can do, per STARE dimension, declared beside the code that does it.

Each capability says how mature its implementation is (GA, beta, preview, declared by the
implementing module's ``READINESS``; or not built, when no module implements it), which
setting switches it and how it is deployed by default, which modules implement it (their hash
is the capability's code version), which settings it depends on (their hash is its
configuration version), and the checks that back it, with what each check blocks. The report
(``readiness.report``) adds the evidence: recorded check runs only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from memories.scorer import calibration, skipped_dimensions

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


def _always() -> str:
    return "customer-default"


def _episodes() -> str:
    return "customer-default" if settings.MM_EPISODE_WINDOW > 0 else "off"


def _links() -> str:
    """Links and their filters are always on; the offline model is what the switch turns off."""
    return "customer-default" if settings.MM_ENTITY_EXTRACTION else "customer-default (no NER)"


def _traversal() -> str:
    """Opt-in: off unless this install switched it on."""
    return "opt-in (opted in)" if settings.MM_TRAVERSAL else "opt-in"


def _divergence() -> str:
    """Off unless this install switched it on."""
    return "opt-in (opted in)" if settings.MM_DIVERGENCE else "off"


def _threads() -> str:
    """A pilot, off unless this install switched it on."""
    return "pilot (on)" if settings.MM_OPEN_THREADS else "pilot (off)"


def _saga() -> str:
    """A preview, off unless this install switched it on."""
    return "opt-in (opted in)" if settings.MM_SAGA else "off"


def _asymmetry() -> str:
    """The A score is given to every memory; ranking uses it only when this install says."""
    return "opt-in (opted in)" if settings.MM_ASYMMETRY_RANKING else "off"


#: What the A score must reach on LIAR-shaped statements to be used for ranking (the issue's
#: bar, set before any measurement: the speakers' records alone reach 0.655).
ASYMMETRY_AUC = 0.70
#: What Open Threads must separate on LoCoMo to be on by default: evidence pairs co-threaded
#: minus all pairs co-threaded (set before any measurement).
THREADS_SEPARATION = 0.30
#: What saga recall must gain on LoCoMo's multi-hop questions to be on by default.
SAGA_MULTIHOP_GAIN = 0.05


def _scorer(dim: str) -> Callable[[], str]:
    """customer-default when the calibration turns it on; ``opt-in (opted in)`` when only
    this install's MM_STARE_AUTO_SKIP_DIMS does; off otherwise."""

    def deployment() -> str:
        by_default = bool(calibration()["dimensions"].get(dim, {}).get("calibrated"))
        if dim in skipped_dimensions():
            return "off (this install)" if by_default else "opt-in"
        return "customer-default" if by_default else "opt-in (opted in)"

    return deployment


SEARCH_SETTINGS = (
    "MM_SEARCH_KEYWORD_WEIGHT",
    "MM_SEARCH_GATE_RATIO",
    "MM_SEARCH_GATE_K",
    "MM_SEARCH_CANDIDATES",
    "MM_SEARCH_EPISODE_WEIGHT",
    "MM_SEARCH_EPISODE_VECTOR_WEIGHT",
    "MM_SEARCH_NEIGHBOUR_WEIGHT",
    "MM_EPISODE_WINDOW",
    "MM_EMBEDDER",
    "MM_EMBEDDER_MODEL",
    "MM_EMBEDDER_URL",
    "MM_HNSW_EF_SEARCH",
    "MM_SEARCH_KEYWORD_SCAN_MAX",
)
#: What every check depends on besides a capability's own modules: how checks measure, and
#: the embedder.
CHECK_MODULES = (
    "readiness/checks.py",
    "readiness/locomo.py",
    "readiness/metrics.py",
    "memories/embeddings.py",
)
#: The search: its filters, the ranking statement, its words and statistics, its hits.
SEARCH_MODULES = (
    "memories/search/filters.py",
    "memories/search/ranking.py",
    "memories/search/words.py",
    "memories/search/statistics.py",
    "memories/search/hydration.py",
    "memories/validity.py",
)
#: The writes that store what search and compile read.
WRITE_MODULES = (
    "memories/services/remember.py",
    "memories/services/bulk.py",
    "memories/services/episodes.py",
    "memories/services/supersede.py",
    "memories/services/feedback.py",
)
LOCOMO_RECALL = 0.70
#: A majority of multi-hop questions: set before any run, not fitted to one.
MULTIHOP_JOINED = 0.50
#: A gain of one point of multi-hop recall@10, set before any run.
GRAPH_MULTIHOP_GAIN = 0.01

CAPABILITIES: tuple[Capability, ...] = (
    Capability(
        dim="S",
        name="core",
        implementation=declared("memories.search", "S/core"),
        summary="significance ranks relevant memories and decides the compiled file",
        modules=(
            *SEARCH_MODULES,
            "memories/compile/selection.py",
            *WRITE_MODULES,
            *CHECK_MODULES,
        ),
        settings=(*SEARCH_SETTINGS, "MM_S1_HALF_LIFE_DAYS", "MM_DECAY_PRESET"),
        deployment=_always,
        checks=(
            Check(
                "s.core.significance_orders",
                "synthetic",
                "share of trials where the more significant of two equally relevant memories "
                "ranks first",
                1.0,
                "S core beyond synthetic evidence",
            ),
            Check(
                "s.core.locomo_recall",
                "gated-eval",
                "LoCoMo recall@10, categories 1-5",
                LOCOMO_RECALL,
                "S core as gated-eval (the ranking's relevance on outside data)",
                needs="locomo",
            ),
        ),
    ),
    Capability(
        dim="T",
        name="core",
        implementation=declared("memories.search", "T/core"),
        summary="validity windows, as_of, supersession; expired memories never compiled",
        modules=(
            *SEARCH_MODULES,
            *WRITE_MODULES,
            "memories/compile/selection.py",
            *CHECK_MODULES,
        ),
        settings=SEARCH_SETTINGS,
        deployment=_always,
        checks=(
            Check(
                "t.core.as_of",
                "synthetic",
                "share of as_of searches that find the memory valid then and not its successor",
                1.0,
                "T core beyond synthetic evidence",
            ),
            Check(
                "t.core.locomo_temporal_recall",
                "gated-eval",
                "LoCoMo recall@10, temporal questions (category 2)",
                LOCOMO_RECALL,
                "T core as gated-eval",
                needs="locomo",
            ),
        ),
    ),
    Capability(
        dim="A",
        name="encoding",
        implementation=declared("memories.asymmetry", "A/encoding"),
        summary="whose perspective a memory serves, who made its claim and how; sources' "
        "records from feedback, supersession and divergences; the A score (off for ranking)",
        modules=(
            "memories/asymmetry.py",
            "memories/attribution.py",
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
    Capability(
        dim="R",
        name="links",
        implementation=declared("memories.services.relations", "R/links"),
        summary="entities and typed links on every write; related_to, entity and min_r filters",
        modules=(
            "memories/services/relations.py",
            "memories/selectors/relations.py",
            "memories/search/relational.py",
            "memories/extraction.py",
            "memories/gazetteer.py",
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
                "r.links.locomo_multihop_joined",
                "gated-eval",
                "share of LoCoMo multi-hop questions (category 1) whose evidence turns are "
                "joined pairwise within two links, hub entities (a speaker's name) aside",
                MULTIHOP_JOINED,
                "R links as gated-eval (the graph joins what questions join)",
                needs="locomo",
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
            "memories/divergence.py",
            "memories/divergence_model.py",
            "memories/services/divergence.py",
            "memories/selectors/divergences.py",
            "readiness/pairs.py",
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
            "memories/selectors/relations.py",
            "memories/search/graph.py",
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


def capability(key: str) -> Capability:
    return next(c for c in CAPABILITIES if c.key == key)


def all_checks() -> list[tuple[Capability, Check]]:
    return [(c, check) for c in CAPABILITIES for check in c.checks]
