"""The gated checks on LoCoMo-shaped conversations: recall, temporal recall, the graph's
gain, links, threads and sagas, and the scorer on the conversations it was not fitted on."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from django.conf import settings
from django.test.utils import override_settings

from memories.embeddings import get_embedder
from memories.models import Memory
from memories.operations import memory_remember_bulk, memory_search
from memories.scorer import bundled_scorer, calibration
from memories.search.learned import shipped_model
from memories.selectors.reader import Reader
from memories.selectors.relations import hub_entities, joined_within_two_links
from readiness.checks.gated import read_data
from readiness.checks.sandbox import Result, _agent, _sandboxed
from readiness.locomo import episodic_items, read, turn_prints
from readiness.metrics import auc

#: An entity that this share of a conversation's memories mention is a hub (a speaker's name in
#: every turn): it joins nearly everything and so says nothing. The gated R check counts the
#: questions joined without hubs, and reports beside it the share with them and the share
#: without hubs and without ``follows``.
HUB_SHARE = 0.10


#: A conversation whose turns are at least this share of the scorer's fit set's turns is one
#: it was fitted on (a copy, cut or renamed); short common turns ("Thanks!") match far fewer.
FITTED_SHARE = 0.5


def fitted(conversation, model: str = "scorer") -> bool:
    """Whether a bundled model (``"scorer"``: the S scorer; ``"search"``: the learned ranking)
    was fitted on this conversation: named in its fit set, or saying what those say (a fitted
    conversation under another name, whole or in part)."""
    names, known = _fit_set(model)
    if conversation.sample_id in names:
        return True
    prints = turn_prints(conversation)
    return bool(prints) and sum(p in known for p in prints) >= FITTED_SHARE * len(prints)


@functools.cache
def _fit_set(model: str) -> tuple[frozenset[str], frozenset[str]]:
    """The conversations a bundled model was fitted on, and their turns' prints."""
    fit = calibration() if model == "scorer" else shipped_model().fitted_on
    return frozenset(fit.get("fit_on", ())), frozenset(fit.get("fit_on_turns", ()))


def locomo_checks(path: Path, conversations: int | None) -> dict[str, Result]:
    """Load LoCoMo conversations (bulk, with sessions and dates), search every question, and
    measure the scorer on every conversation it was not fitted on; all rolled back. A check
    the conversations give nothing to measure is left out, with why under ``_not_run``."""

    def run() -> dict[str, Result]:
        chosen = read_data(read, path, "LoCoMo-shaped")[:conversations]
        recalls: dict[int, list[float]] = {}
        graph_recalls: dict[int, list[float]] = {}  # the same searches with expand: graph
        # Each multi-hop question, joined: without the hub entities (the check's value); with
        # them; without them and without follows.
        joined: list[tuple[bool, bool, bool]] = []
        scored: dict[str, tuple[list[float], list[bool]]] = {d: ([], []) for d in "str"}
        # Per conversation: evidence pairs, those co-threaded, all pairs, those co-threaded.
        threaded: list[tuple[int, int, int, int]] = []
        sagas: list[tuple[float, float]] = []  # multi-hop: (saga recall@20, plain recall@20)
        measured: list[str] = []  # the conversations the scorer is measured on
        # Per question of a conversation the learned ranking was not fitted on: its category,
        # recall@10 with the learned ranking and without.
        learned: list[tuple[int, float, float]] = []
        learned_on: list[str] = []
        for conversation in chosen:
            agent, dia = _written(conversation)
            threaded.append(_cothreading(agent, conversation))
            by_dia = {dia_id: pk for pk, dia_id in dia.items()}
            hubs = hub_entities(agent.workspace_id, HUB_SHARE)
            for question in conversation.questions:
                if question.category == 1 and len(question.evidence) > 1:
                    turns = [by_dia[d] for d in question.evidence if d in by_dia]
                    joined.append(
                        (
                            joined_within_two_links(turns, without=hubs),
                            joined_within_two_links(turns),
                            joined_within_two_links(turns, follows=False, without=hubs),
                        )
                    )
                vector = get_embedder().embed([question.text])[0]
                if question.category == 1:
                    sagas.append(_saga_gain(agent, question, vector, dia))
                for expand, found in ((None, recalls), ("graph", graph_recalls)):
                    hits = memory_search(
                        Reader.of_agent(agent),
                        **({"expand": expand} if expand else {}),
                        query=question.text,
                        query_vector=vector,
                        limit=10,
                    )
                    got = {dia[h.memory.pk] for h in hits}
                    recall = len(got & question.evidence) / len(question.evidence)
                    found.setdefault(question.category, []).append(recall)
            if not fitted(conversation, "search"):
                learned.extend(_learned_gain(agent, conversation, dia))
                learned_on.append(conversation.sample_id)
            if not fitted(conversation):
                _score(agent, conversation, scored, bundled_scorer())
                measured.append(conversation.sample_id)
        results: dict[str, Result] = {}
        every = [r for rs in recalls.values() for r in rs]
        if every:
            results["s.core.locomo_recall"] = (
                float(np.mean(every)),
                {
                    "questions": len(every),
                    # With the learned ranking on, the conversations its model was fitted on
                    # give an in-sample figure (s.learned.locomo_gain leaves them out).
                    "learned_ranking": bool(settings.MM_SEARCH_LEARNED),
                    "learned_fitted_on": sum(fitted(c, "search") for c in chosen),
                },
            )
        if recalls.get(2):
            results["t.core.locomo_temporal_recall"] = (
                float(np.mean(recalls[2])),
                {"questions": len(recalls[2])},
            )
        if recalls.get(1):
            gains = {
                category: float(np.mean(graph_recalls[category]) - np.mean(plain))
                for category, plain in recalls.items()
            }
            overall = [r for rs in graph_recalls.values() for r in rs]
            results["r.traversal.locomo_graph_multihop"] = (
                gains[1],
                {
                    "questions": len(recalls[1]),
                    "multihop_recall_plain": round(float(np.mean(recalls[1])), 4),
                    "multihop_recall_graph": round(float(np.mean(graph_recalls[1])), 4),
                    "overall_gain": round(float(np.mean(overall) - np.mean(every)), 4),
                    "gain_by_category": {str(c): round(g, 4) for c, g in sorted(gains.items())},
                },
            )
        if learned:
            value, detail = _learned_result(learned)
            results["s.learned.locomo_gain"] = (value, {**detail, "measured_on": learned_on})
        if joined:
            results["r.traversal.locomo_multihop_joined"] = (
                sum(value for value, _, _ in joined) / len(joined),
                {
                    "questions": len(joined),
                    "with_hubs": round(sum(every for _, every, _ in joined) / len(joined), 4),
                    "without_follows": round(sum(bare for _, _, bare in joined) / len(joined), 4),
                    "hub_share": HUB_SHARE,
                },
            )
        pairs, together, every_pair, every_together = (
            sum(t[i] for t in threaded) for i in range(4)
        )
        if pairs and every_pair:
            recall, false = together / pairs, every_together / every_pair
            results["e.threads.locomo_cothreading"] = (
                recall - false,
                {
                    "evidence_pairs": pairs,
                    "pair_recall": round(recall, 4),
                    "false_grouping": round(false, 4),
                },
            )
        if sagas:
            saga_recall_mean = float(np.mean([saga for saga, _ in sagas]))
            plain_recall_mean = float(np.mean([plain for _, plain in sagas]))
            results["e.saga.locomo_multihop_gain"] = (
                saga_recall_mean - plain_recall_mean,
                {
                    "questions": len(sagas),
                    "saga_recall@20": round(saga_recall_mean, 4),
                    "plain_recall@20": round(plain_recall_mean, 4),
                },
            )
        skipped = [c.sample_id for c in chosen if c.sample_id not in measured]
        for dim, (scores, labels) in scored.items():
            if scores and any(labels) and not all(labels):
                results[f"{dim}.scorer.locomo_auc"] = (
                    auc(np.array(scores), np.array(labels)),
                    {
                        "memories": len(scores),
                        "positives": int(sum(labels)),
                        "measured_on": measured,
                        "fitted_on_skipped": skipped,
                    },
                )
        results["_conversations"] = (len(chosen), {})
        results["_not_run"] = (None, _locomo_not_run(results, measured, skipped, scored))
        return results

    return _sandboxed(run)


def learned_checks(path: Path, conversations: int | None = None) -> dict[str, Result]:
    """Only the learned ranking's gain (``s.learned.held_out_gain``), on the conversations of
    ``path`` its model was not fitted on: conversations kept apart from the ones every other
    check reads (another dataset in LoCoMo's shape); all rolled back."""

    def run() -> dict[str, Result]:
        chosen = read_data(read, path, "LoCoMo-shaped")[:conversations]
        held_out = [c for c in chosen if not fitted(c, "search")]
        rows: list[tuple[int, float, float]] = []
        for conversation in held_out:
            agent, dia = _written(conversation)
            rows.extend(_learned_gain(agent, conversation, dia))
        results: dict[str, Result] = {"_conversations": (len(held_out), {})}
        if rows:
            value, detail = _learned_result(rows)
            results["s.learned.held_out_gain"] = (
                value,
                {**detail, "measured_on": [c.sample_id for c in held_out]},
            )
        else:
            why = _locomo_not_run({}, [], [], {d: ([], []) for d in "str"})
            results["_not_run"] = (None, {"s.learned.held_out_gain": why["s.learned.locomo_gain"]})
        return results

    return _sandboxed(run)


def _written(conversation) -> tuple[object, dict[int, str]]:
    """A new agent with the conversation's turns written as its memories (bulk, with sessions
    and dates), and each memory's turn id by primary key."""
    agent = _agent()
    items = episodic_items(conversation)
    for first in range(0, len(items), 1000):
        memory_remember_bulk(agent=agent, items=items[first : first + 1000])
    dia = dict(
        Memory.objects.filter(workspace=agent.workspace).values_list("pk", "metadata__dia_id")
    )
    return agent, dia


def _locomo_not_run(
    results: dict[str, Result],
    measured: list[str],
    skipped: list[str],
    scored: dict[str, tuple[list[float], list[bool]]],
) -> dict[str, str]:
    """Why each LoCoMo check missing from ``results`` could not run on these conversations."""
    reasons = {
        "s.core.locomo_recall": "no question names evidence turns that exist",
        "t.core.locomo_temporal_recall": "no temporal question (category 2) with evidence",
        "r.traversal.locomo_graph_multihop": "no multi-hop question (category 1) with evidence",
        "r.traversal.locomo_multihop_joined": "no multi-hop question (category 1) with evidence "
        "in two or more turns",
        "e.threads.locomo_cothreading": "no multi-hop question's evidence turns are told in "
        "different sessions",
        "e.saga.locomo_multihop_gain": "no multi-hop question (category 1) with evidence",
        "s.learned.locomo_gain": "the learned ranking's model was fitted on every conversation "
        "given (memories/data/search_model.json names them)",
    }
    labels = {"s": "of any question", "t": "of a temporal question", "r": "of a multi-hop question"}
    for dim in "str":
        if not measured:
            reasons[f"{dim}.scorer.locomo_auc"] = (
                "the bundled scorer was fitted on every conversation given "
                f"({', '.join(skipped)}); it is measured only on others"
            )
        else:
            positives = sum(scored[dim][1])
            reasons[f"{dim}.scorer.locomo_auc"] = (
                f"an AUC needs turns that are evidence {labels[dim]} and turns that are not; "
                f"the conversations it was not fitted on ({', '.join(measured)}) have "
                f"{positives} of {len(scored[dim][1])}"
            )
    return {check_id: why for check_id, why in reasons.items() if check_id not in results}


def _cothreading(agent, conversation) -> tuple[int, int, int, int]:
    """The threads phase over the conversation's workspace: (multi-hop evidence pairs in
    different sessions, those in one thread, all pairs of turns in different sessions, those
    in one thread)."""
    from consolidation.services import consolidation_execute, consolidation_start
    from memories.models import ThreadMember

    with override_settings(MM_OPEN_THREADS=True):
        run = consolidation_execute(
            consolidation_start(workspace=agent.workspace, trigger="command", phases=["threads"])
        )
    if run.status != "done":
        raise RuntimeError(f"the threads phase failed: {run.error}")
    thread_of = dict(
        ThreadMember.objects.filter(workspace=agent.workspace).values_list(
            "memory__metadata__dia_id", "thread_id"
        )
    )
    session = {turn.dia_id: turn.session for turn in conversation.turns}
    pairs = together = 0
    for question in conversation.questions:
        if question.category != 1:
            continue
        evidence = sorted(d for d in question.evidence if d in session)
        for index, first in enumerate(evidence):
            for second in evidence[index + 1 :]:
                if session[first] != session[second]:
                    pairs += 1
                    together += first in thread_of and thread_of.get(first) == thread_of.get(second)
    per_session: dict[int, int] = {}
    for number in session.values():
        per_session[number] = per_session.get(number, 0) + 1
    turns = len(session)
    every = (turns * turns - sum(n * n for n in per_session.values())) // 2
    members: dict[int, dict[int, int]] = {}
    for dia_id, thread in thread_of.items():
        by_session = members.setdefault(thread, {})
        by_session[session[dia_id]] = by_session.get(session[dia_id], 0) + 1
    every_together = sum(
        (sum(c.values()) ** 2 - sum(n * n for n in c.values())) // 2 for c in members.values()
    )
    return pairs, together, every, every_together


def _saga_gain(agent, question, vector, dia) -> tuple[float, float]:
    """(saga recall, plain recall) of the question's evidence in 20 memories."""
    from consolidation.saga import saga_recall

    with override_settings(MM_SAGA=True):
        saga = saga_recall(
            Reader.of_agent(agent), query=question.text, limit=20, query_vector=vector
        )
    plain = memory_search(
        Reader.of_agent(agent), query=question.text, query_vector=vector, limit=20
    )
    found = [{dia[m.pk] for m in saga.memories}, {dia[h.memory.pk] for h in plain}]
    return tuple(len(f & question.evidence) / len(question.evidence) for f in found)


def _score(agent, conversation, scored, scorer) -> None:
    rows = list(
        Memory.objects.filter(workspace=agent.workspace)
        .order_by("pk")
        .values_list("text", "embedding", "metadata__dia_id")
    )
    evidence = {category: set() for category in (None, 1, 2)}
    for question in conversation.questions:
        evidence[None] |= question.evidence
        if question.category in (1, 2):
            evidence[question.category] |= question.evidence
    predicted = scorer.predict([t for t, _, _ in rows], np.array([v for _, v, _ in rows]))
    for dim, category in (("s", None), ("t", 2), ("r", 1)):
        scored[dim][0].extend(predicted[dim].tolist())
        scored[dim][1].extend(dia in evidence[category] for _, _, dia in rows)


def _learned_gain(agent, conversation, dia: dict[int, str]) -> list[tuple[int, float, float]]:
    """Each question's category and recall@10 with the learned ranking and without."""
    rows = []
    for question in conversation.questions:
        vector = get_embedder().embed([question.text])[0]
        recalls = []
        for learned in (True, False):
            with override_settings(MM_SEARCH_LEARNED=learned):
                hits = memory_search(
                    Reader.of_agent(agent), query=question.text, query_vector=vector, limit=10
                )
            got = {dia[h.memory.pk] for h in hits}
            recalls.append(len(got & question.evidence) / len(question.evidence))
        rows.append((question.category, *recalls))
    return rows


def _learned_result(rows: list[tuple[int, float, float]]) -> Result:
    """The learned ranking's gain of recall@10 overall, with the gain in each category."""
    by: dict[int, list[tuple[float, float]]] = {}
    for category, with_it, without in rows:
        by.setdefault(category, []).append((with_it, without))
    gains = {c: float(np.mean([a - b for a, b in pairs])) for c, pairs in sorted(by.items())}
    return (
        float(np.mean([a - b for _, a, b in rows])),
        {
            "questions": len(rows),
            "recall_learned": round(float(np.mean([a for _, a, _ in rows])), 4),
            "recall_formula": round(float(np.mean([b for _, _, b in rows])), 4),
            "gain_by_category": {str(c): round(g, 4) for c, g in gains.items()},
            "model": shipped_model().version,
        },
    )
