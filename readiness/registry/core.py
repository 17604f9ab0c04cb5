"""S core and T core: significance in the ranking, and validity in search and compile."""

from __future__ import annotations

from django.conf import settings

from readiness.registry.common import CHECK_MODULES, SEARCH_MODULES, SEARCH_SETTINGS, WRITE_MODULES
from readiness.registry.declarations import Capability, Check, declared


def _always() -> str:
    return "customer-default"


def _learned() -> str:
    """On by default; an install may switch it off (the formula's relevance alone)."""
    return "customer-default" if settings.MM_SEARCH_LEARNED else "off (switched off)"


LOCOMO_RECALL = 0.70
#: One point of recall@10 on conversations the learned ranking was not fitted on: set before
#: any run on them.
LEARNED_GAIN = 0.01
#: A wrong supersession hides a true fact: nine in ten applied without a curator must be right.
CORRECTION_PRECISION = 0.90
#: Corrections in conversation: what is applied is right this often, and this share is caught.
DIALOGUE_PRECISION = 0.95
DIALOGUE_RECALL = 0.70


CORE: tuple[Capability, ...] = (
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
        dim="S",
        name="learned",
        implementation=declared("memories.search.learned", "S/learned"),
        summary="a learned ranking: the candidates re-ordered by a logistic model of their "
        "signals, session, length and phrases of time (MM_SEARCH_LEARNED); fitted on chats "
        "between people, it ranks below the formula on chats of a user with an assistant "
        "(LongMemEval, BENCHMARKS.md)",
        modules=(
            "memories/search/learned.py",
            "memories/search/gate.py",
            "memories/temporal/expressions.py",
            "memories/data/search_model.json",
            *SEARCH_MODULES,
            *CHECK_MODULES,
        ),
        settings=SEARCH_SETTINGS,
        switch="MM_SEARCH_LEARNED",
        deployment=_learned,
        checks=(
            Check(
                "s.learned.locomo_gain",
                "gated-eval",
                "LoCoMo recall@10 gained by the learned ranking over the formula, on the "
                "conversations of the --locomo file its model was not fitted on (the dev "
                "file's conversations kept apart from the fit)",
                LEARNED_GAIN,
                "S learned as gated-eval (its gain carries over to conversations it was not "
                "fitted on)",
                needs="locomo",
            ),
            Check(
                "s.learned.held_out_gain",
                "gated-eval",
                "recall@10 gained by the learned ranking over the formula, on conversations "
                "of another dataset in LoCoMo's shape, none of which its model was fitted on",
                LEARNED_GAIN,
                "S learned as gated-eval (its gain carries over to another dataset's "
                "conversations)",
                needs="held_out",
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
        dim="T",
        name="corrections",
        implementation=declared("memories.temporal.corrections", "T/corrections"),
        summary="a newer memory that corrects an older one of its scope about one subject "
        "(an explicit change, a changed value, a denial; in a conversation, a later turn) "
        "supersedes it in consolidation, or is proposed to a curator; a hedge, a plan, a "
        "condition, a question or the past never supersedes anything",
        modules=(
            "memories/temporal/corrections.py",
            "memories/temporal/judgment.py",
            "memories/temporal/stance.py",
            "memories/temporal/spoken.py",
            "memories/temporal/values.py",
            "memories/lexicon.py",
            "memories/data/correction_model.json",
            "memories/services/supersede.py",
            "consolidation/phases/supersede.py",
            "readiness/corrections.py",
            "readiness/dialogue.py",
            *CHECK_MODULES,
        ),
        deployment=lambda: "customer-default (consolidation)",
        checks=(
            Check(
                "t.corrections.heldout_precision",
                "gated-eval",
                "precision of the corrections consolidation applies without a curator on the "
                "held-out part of VitaminC-shaped claim pairs (Wikipedia revisions)",
                CORRECTION_PRECISION,
                "corrections applied without a curator beyond the same writer's",
                needs="corrections",
            ),
            Check(
                "t.corrections.dialogue_precision",
                "gated-eval",
                "precision of the corrections consolidation applies without a curator between "
                "user turns of one conversation (Schema-Guided-Dialogue-shaped dev dialogues)",
                DIALOGUE_PRECISION,
                "corrections applied without a curator in conversations",
                needs="dialogue",
            ),
            Check(
                "t.corrections.dialogue_recall",
                "gated-eval",
                "share of the corrections between user turns of one conversation that "
                "consolidation applies or proposes (Schema-Guided-Dialogue-shaped dialogues)",
                DIALOGUE_RECALL,
                "corrections in conversation caught for a curator",
                needs="dialogue",
            ),
        ),
    ),
)
