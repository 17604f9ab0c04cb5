"""Retrieval on LoCoMo: the engine's search against the baselines a user would otherwise pick.

    python benchmarks/locomo.py --json benchmarks/out/locomo.json

Runs on its own embedded PostgreSQL (``--data-dir``, default ``benchmarks/out/locomo-db``),
never on ``DATABASE_URL`` or the developer's ``MM_DATA_DIR``. Each conversation of the file
(``--data``, LoCoMo's format; see ``../shared/data/README.md``) becomes its own workspace, each
dialogue turn one memory written through ``memory_remember`` at its session's date (the turns of
a session one second apart, in order), with the session as the memory's ``session``. The text
is ``"<speaker>: <turn>"`` and, for a turn that shares a photo, ``" [shares a photo: <caption>]"``
(``--speaker source`` keeps the speaker in ``source`` instead). Then every question with
evidence is asked, and the top 20 of each method are scored against its evidence turns:
recall@k (the share of the evidence turns in the top k), hit@k (any of them) and session-level
recall@k (the share of the evidence's sessions with an evidence turn in the top k), k = 5, 10, 20,
per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial) and overall.

Methods, all on the same memories:

* ``engine``: ``memory_search`` with the default settings, as a user gets them (the learned
  ranking on, with the shipped model, ``memories/data/search_model.json``: on the file it was
  fitted on, an in-sample figure);
* ``engine-formula``: the same with ``MM_SEARCH_LEARNED`` off: the formula's relevance alone;
* ``engine-relevance``: the same with significance and age out of the score (relevance only);
* ``engine-graph``: ``memory_search`` with ``expand: "graph"`` (graph-aware recall, opt-in);
* ``engine-learned-cv``: the learned ranking, each conversation's candidates ranked by a model
  fitted on the other conversations' (leave one conversation out): the figure that carries
  over; ``engine-learned-cv-all`` the same with every feature the module computes;
* ``bm25``: ``rank_bm25``'s BM25Okapi over the memory texts, lower-cased words without
  PostgreSQL's English stop words;
* ``cosine``: the engine's embedder alone, cosine of the stored memory vectors to the query's;
* ``rrf``: reciprocal-rank fusion (k = 60) of ``bm25`` and ``cosine``, the naive hybrid;
* the cross-session methods (``VARIANTS``, ``--variants``): the default recipe
  (``memories.search.recipe``) with one piece changed, each also cross-validated on its own
  candidates (``<method>-cv``), with the share of the evidence its candidates hold;
  ``engine+second-hop`` (``second_hop``) asks the engine again with the salient words of its
  first hits and fuses the two rankings.

Besides turn level, each method's sessions are scored as units (``session-unit R@k``: the
sessions in the order of their best turn in the method's top 20, and the share of the evidence's
sessions among the first k), the definition LongMemEval and peers' session-level figures use.
``--loads N`` writes the memories N times (the first may be ``--reuse``'d) and prints each
figure's mean and range over the loads: two loads of the same turns differ only in the vector
index's random levels and the rows' physical order.

Every search runs at a pinned instant (``--now pinned``, the default): each conversation's
last turn, so the age factor of the score is the same any day the benchmark runs
(``--now real``: the instant of the run, as before the pin). ``--fit-model PATH`` writes the
learned ranking's model fitted on every question of the file (``benchmarks/search_model.py``).

``--embedder e5-small`` measures a stronger offline embedder in the engine's place
(multilingual-e5-small at 4 bits, ``benchmarks/embedders.py``): the memories are written and the
questions embedded through it, in their own database (``benchmarks/out/locomo-e5-small-db``);
the table then shows what that embedder gives every method, and a line its cost: the wall and
CPU time to embed a question and a turn's text, on the engine embedder's thread count.

Evidence ids that are malformed (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``) are matched to
a turn by their numbers when exactly one turn has those numbers; the others (and ids of turns
that do not exist) are dropped and counted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    ROOT,
    add_data_options,
    add_smoke_option,
    check_data,
    describe,
    machine,
    setup_django,
    write_json,
)
from embedders import EMBEDDERS, asking, installed

from readiness.locomo import (
    CATEGORIES,
    Conversation,
    Question,
    first_sessions,
    memory_text,
    read,
    turn_prints,
)

KS = (5, 10, 20)
RRF_K = 60
#: The cross-session methods: the default recipe (``memories.search.recipe``) with one piece
#: changed. ``+neighbours``: the turns before and after the 5 strongest of each candidate list
#: join the candidates; ``+session-cap``: at most 2 turns of a session before the others;
#: ``+wide-pool``: lists of 100 candidates rather than 50.
VARIANTS = {
    "engine+neighbours": {
        "sources": ("vector", "keyword", "time_neighbours"),
        "time_neighbour_seeds": 5,
    },
    "engine+session-cap": {"session_cap": 2},
    "engine+wide-pool": {"candidates": 100},
}


def loaded(conversations: list[Conversation]) -> dict[str, Any]:
    """The agents of a previous run's memories if every conversation is there, embedded by the
    embedder of this run (``--reuse``)."""
    from memories.embeddings import current_model_name
    from memories.models import Agent, Memory

    agents = {}
    for conversation in conversations:
        agent = Agent.objects.filter(workspace__slug=f"locomo-{conversation.sample_id}").first()
        if agent is None:
            return {}
        rows = list(
            Memory.objects.filter(workspace=agent.workspace_id).values_list(
                "pk", "metadata", "embedding_model"
            )
        )
        conversation.memory_ids = {pk: metadata["dia_id"] for pk, metadata, _ in rows}
        if len(conversation.memory_ids) != len(conversation.turns):
            return {}
        if {model for _, _, model in rows} != {current_model_name()}:
            return {}
        agents[conversation.sample_id] = agent
    return agents


def load(conversations: list[Conversation], speaker_in_text: bool) -> dict[str, Any]:
    """Empty the memory tables, then write every turn through ``memory_remember``."""
    from django.db import connection

    from memories.operations import memory_remember
    from memories.services import agent_create

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")
    agents = {}
    for conversation in conversations:
        agent, _ = agent_create(workspace_slug=f"locomo-{conversation.sample_id}", name="reader")
        agents[conversation.sample_id] = agent
        for turn in conversation.turns:
            memory = memory_remember(
                agent=agent,
                text=memory_text(turn, speaker_in_text),
                created_at=turn.written_at,
                source=None if speaker_in_text else turn.speaker,
                session=f"session_{turn.session}",
                metadata={"dia_id": turn.dia_id},
            ).memory
            conversation.memory_ids[memory.pk] = turn.dia_id
        print(f"  {conversation.sample_id}: {len(conversation.turns)} turns", flush=True)
    return agents


class Baselines:
    """BM25, cosine and their rank fusion over one conversation's memories."""

    def __init__(self, conversation: Conversation, stop_words: set[str]) -> None:
        from rank_bm25 import BM25Okapi

        from memories.models import Memory

        rows = list(
            Memory.objects.filter(pk__in=conversation.memory_ids)
            .order_by("pk")
            .values_list("pk", "text", "embedding")
        )
        self.stop_words = stop_words
        self.speakers = {turn.speaker.lower() for turn in conversation.turns}
        self.dia_ids = [conversation.memory_ids[pk] for pk, _, _ in rows]
        self.bm25 = BM25Okapi([self.words(text) for _, text, _ in rows])
        vectors = np.array([vector for _, _, vector in rows], dtype=np.float32)
        self.vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def words(self, text: str) -> list[str]:
        return [word for word in re.findall(r"\w+", text.lower()) if word not in self.stop_words]

    def rankings(self, question: str, vector: np.ndarray) -> dict[str, list[str]]:
        orders = {
            "bm25": np.argsort(-self.bm25.get_scores(self.words(question)), kind="stable"),
            "cosine": np.argsort(
                -(self.vectors @ (vector / np.linalg.norm(vector))), kind="stable"
            ),
        }
        fused = np.zeros(len(self.dia_ids))
        for order in list(orders.values()):
            fused[order] += 1.0 / (RRF_K + 1 + np.arange(len(order)))
        orders["rrf"] = np.argsort(-fused, kind="stable")
        return {
            name: [self.dia_ids[index] for index in order[: max(KS)]]
            for name, order in orders.items()
        }


def stop_words() -> set[str]:
    """PostgreSQL's English stop words (the list its ``english`` configuration drops)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT setting FROM pg_config WHERE name = 'SHAREDIR'")
        (share,) = cursor.fetchone()
    path = Path(share) / "tsearch_data" / "english.stop"
    return {line.strip() for line in path.read_text().splitlines() if line.strip()}


def session_of(dia_id: str) -> str:
    """The session a turn's id names (LoCoMo's ``D<session>:<turn>``)."""
    return dia_id.partition(":")[0]


class Scores:
    """recall@k, hit@k and session-level recall@k per method and category: a question's
    session-level recall@k is the share of its evidence's sessions of which at least one
    evidence turn is in the top k turns; its session-unit recall@k, the share of its evidence's
    sessions among the first k sessions of the ranking, each session placed by its best turn
    (sessions as the retrieval unit, as LongMemEval's and peers' session-level figures count;
    a session with no turn among the top 20 is not placed)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[tuple[int, dict[str, float]]]] = defaultdict(list)
        self.ms: dict[str, list[float]] = defaultdict(list)

    def add(
        self, method: str, question: Question, ranking: list[str], ms: float | None = None
    ) -> None:
        """``ranking`` scored against ``question``'s evidence; ``ms``, what the method took to
        rank (the query's embedding excluded)."""
        if ms is not None:
            self.ms[method].append(ms)
        figures = {}
        sessions = {session_of(turn) for turn in question.evidence}
        # Sessions as units: in the order of their best turn in the ranking.
        ranked_sessions = list(dict.fromkeys(session_of(turn) for turn in ranking))
        for k in KS:
            found = question.evidence & set(ranking[:k])
            figures[f"recall@{k}"] = len(found) / len(question.evidence)
            figures[f"hit@{k}"] = float(bool(found))
            figures[f"session_recall@{k}"] = len({session_of(t) for t in found}) / len(sessions)
            figures[f"session_unit_recall@{k}"] = len(sessions & set(ranked_sessions[:k])) / len(
                sessions
            )
        self.rows[method].append((question.category, figures))

    @staticmethod
    def mean(rows: list[tuple[int, dict[str, float]]]) -> dict[str, float]:
        names = rows[0][1] if rows else {}
        return {name: float(np.mean([f[name] for _, f in rows])) for name in names}

    def summary(self) -> dict[str, Any]:
        methods = {}
        for method, rows in self.rows.items():
            methods[method] = self.mean(rows) | {
                "questions": len(rows),
                "categories_1_4": self.mean([row for row in rows if row[0] != 5]),
                "p95_ms": float(np.percentile(self.ms[method], 95)) if self.ms[method] else None,
                "by_category": {
                    str(category): self.mean([row for row in rows if row[0] == category])
                    | {"questions": sum(1 for row in rows if row[0] == category)}
                    for category in sorted({row[0] for row in rows})
                },
            }
        return methods


def category_names(path: Path) -> dict[int, str]:
    """LoCoMo's category names, or those the file gives (``category_names`` of a conversation:
    ``benchmarks/longmemeval.py`` writes LongMemEval's question types)."""
    names = dict(CATEGORIES)
    for item in json.loads(path.read_text(encoding="utf-8")):
        names.update({int(k): v for k, v in item.get("category_names", {}).items()})
    return names


def table(methods: dict[str, Any], names: dict[int, str] = CATEGORIES) -> str:
    categories = sorted({c for m in methods.values() for c in m["by_category"]}, key=int)
    header = ["method", "R@5", "R@10", "R@20", "hit@10", "session R@10", "session-unit R@5"]
    header += ["session-unit R@10", "R@10 (1–4)"]
    header += [f"R@10 {c} {names.get(int(c), c)}" for c in categories] + ["p95 ms"]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for name, m in methods.items():
        cells = [f"`{name}`"] + [f"{m[key]:.3f}" for key in ("recall@5", "recall@10")]
        cells += [f"{m['recall@20']:.3f}", f"{m['hit@10']:.3f}", f"{m['session_recall@10']:.3f}"]
        cells += [f"{m['session_unit_recall@5']:.3f}", f"{m['session_unit_recall@10']:.3f}"]
        cells += [f"{m['categories_1_4']['recall@10']:.3f}"]
        cells += [f"{m['by_category'][c]['recall@10']:.3f}" for c in categories]
        cells += [f"{m['p95_ms']:.1f}" if m.get("p95_ms") is not None else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: The figures the spread over several loads shows, besides each category's recall@10.
SPREAD = {
    "R@5": ("recall@5",),
    "R@10": ("recall@10",),
    "R@20": ("recall@20",),
    "hit@10": ("hit@10",),
    "session R@10": ("session_recall@10",),
    "session-unit R@5": ("session_unit_recall@5",),
    "session-unit R@10": ("session_unit_recall@10",),
    "R@10 (1–4)": ("categories_1_4", "recall@10"),
}


def spread_columns(run: dict[str, Any], names: dict[int, str]) -> dict[str, tuple[str, ...]]:
    """``SPREAD`` and each category's recall@10 (as the table heads it)."""
    categories = sorted({c for m in run.values() for c in m["by_category"]}, key=int)
    return SPREAD | {
        f"R@10 {c} {names.get(int(c), c)}": ("by_category", c, "recall@10") for c in categories
    }


def spread_figures(
    runs: list[dict[str, Any]], names: dict[int, str] = CATEGORIES
) -> dict[str, dict[str, list[float]]]:
    """Each method's figures (``spread_columns``), one per load."""
    figures: dict[str, dict[str, list[float]]] = {}
    for name in runs[0]:
        figures[name] = {}
        for column, path in spread_columns(runs[0], names).items():
            values = []
            for run in runs:
                value = run.get(name, {})
                for key in path:
                    value = value.get(key, {}) if isinstance(value, dict) else {}
                if isinstance(value, float):
                    values.append(value)
            if len(values) == len(runs):
                figures[name][column] = values
    return figures


def spread_table(figures: dict[str, dict[str, list[float]]]) -> str:
    """One row a method, each cell the mean and (min–max) over the loads."""
    columns = list(dict.fromkeys(c for by_column in figures.values() for c in by_column))
    lines = ["| method | " + " | ".join(columns) + " |", "|---" + "|---:" * len(columns) + "|"]
    for name, by_column in figures.items():
        cells = [
            f"{np.mean(v):.3f} ({min(v):.3f}–{max(v):.3f})" if (v := by_column.get(c)) else "—"
            for c in columns
        ]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdict(methods: dict[str, Any], method: str, base: str) -> str:
    """Whether ``method`` earns the default over ``base`` (issue rule): higher recall@10
    overall and on multi-hop (category 1), and no other category lower by more than 0.01."""
    new, plain = methods[method], methods[base]
    overall = new["recall@10"] - plain["recall@10"]
    by = {
        c: new["by_category"][c]["recall@10"] - plain["by_category"][c]["recall@10"]
        for c in plain["by_category"]
    }
    worst = min((value, c) for c, value in by.items() if c != "1") if len(by) > 1 else (0.0, "-")
    earns = overall > 0 and by.get("1", 0.0) > 0 and worst[0] >= -0.01
    return (
        f"{method} against {base}, recall@10: overall {overall:+.3f}, multi-hop "
        f"{by.get('1', 0.0):+.3f}, worst other category {worst[0]:+.3f} ({worst[1]}): "
        + ("earns its place by the rule." if earns else "does not earn its place by the rule.")
    )


def dia_ids(hits: list[Any]) -> list[str]:
    return [hit.memory.metadata["dia_id"] for hit in hits]


def stacked(rows: list[tuple[Question, list[Any], np.ndarray, float]]) -> tuple[Any, Any]:
    """The features and labels of every candidate of ``rows``."""
    from memories.search.learned import FEATURES, features

    values = [features(hits, question.text) for question, hits, _, _ in rows]
    labels = [labels for _, _, labels, _ in rows]
    if not values:
        return np.zeros((0, len(FEATURES))), np.zeros(0)
    return np.vstack(values), np.concatenate(labels).astype(np.float64)


def cross_validate(
    candidates: dict[str, list],
    stacks: dict[str, tuple[Any, Any]],
    scores: Scores,
    method: str,
    names: tuple[str, ...],
) -> None:
    """``method``: each conversation ranked by a model of the features ``names`` fitted on the
    other conversations (leave one conversation out); ``stacks``, each conversation's
    features and labels (``stacked``)."""
    from search_model import fit

    from memories.search.learned import reranked, shipped_model

    for name, rows in candidates.items():
        if len(candidates) < 2:  # nothing to fit on (smoke mode): the shipped model stands in
            model = shipped_model()
        else:
            others = [stack for other, stack in stacks.items() if other != name]
            model = fit(
                np.vstack([values for values, _ in others]),
                np.concatenate([labels for _, labels in others]),
                names,
            )
        for question, hits, _, every_ms in rows:
            # What it takes: the statement returning every candidate, and the re-ordering.
            started = time.perf_counter()
            ranking = reranked(hits, query=question.text, limit=max(KS), model=model)
            took = every_ms + (time.perf_counter() - started) * 1000
            scores.add(method, question, dia_ids(ranking), took)


#: The second hop: the salient words of the first hop's best hits (``HOP_SEEDS``), the
#: ``HOP_WORDS`` rarest in the conversation that neither the question nor a speaker's name
#: holds, added to the question; the two rankings fused by reciprocal rank, the second's
#: weighed ``HOP_WEIGHT``.
HOP_SEEDS, HOP_WORDS, HOP_WEIGHT = 3, 3, 0.5


def second_hop(
    reader: Any,
    question: Question,
    asked: dict[str, Any],
    first: list[Any],
    baselines: Baselines,
    embedder: Any,
) -> list[str]:
    """The ``engine+second-hop`` method: the engine asked again with the salient words of its
    first hits, fused with its first ranking (no LLM: the words are counted, not generated)."""
    from memories.operations import memory_search

    held = set(baselines.words(question.text)) | baselines.speakers
    salient: Counter = Counter()
    for hit in first[:HOP_SEEDS]:
        body = hit.memory.text.partition(": ")[2] or hit.memory.text  # speaker in source
        for word in set(baselines.words(body)) - held:
            salient[word] += baselines.bm25.idf.get(word, 0.0)
    words = [word for word, _ in salient.most_common(HOP_WORDS)]
    if not words:
        return dia_ids(first)
    query = f"{question.text} {' '.join(words)}"
    with asking(embedder):
        vector = embedder.embed([query])[0]
    again = memory_search(reader, **{**asked, "query": query, "query_vector": vector})
    fused: dict[str, float] = defaultdict(float)
    for weight, ranking in ((1.0, dia_ids(first)), (HOP_WEIGHT, dia_ids(again))):
        for position, dia_id in enumerate(ranking):
            fused[dia_id] += weight / (RRF_K + position)
    return sorted(fused, key=lambda dia_id: -fused[dia_id])[: max(KS)]


def ask(
    name: str,
    question: Question,
    reader: Any,
    asked: dict[str, Any],
    recipe: Any,
    scores: Scores,
    pool: dict[str, list] | None,
) -> None:
    """One question asked by a cross-session method (``VARIANTS``), and its candidates kept in
    ``pool`` (by conversation) when the recipe reads other candidates than the default's (a
    pool is given only then)."""
    from memories.operations import memory_search

    started = time.perf_counter()
    hits = memory_search(reader, **asked, recipe=recipe)
    scores.add(name, question, dia_ids(hits), (time.perf_counter() - started) * 1000)
    if pool is None:
        return
    started = time.perf_counter()
    every = memory_search(reader, **asked, recipe=recipe, every_candidate=True)
    took = (time.perf_counter() - started) * 1000
    labels = np.array([h.memory.metadata["dia_id"] in question.evidence for h in every])
    pool[reader.workspace.slug].append((question, every, labels, took))


def coverage(candidates: dict[str, list]) -> dict[str, float]:
    """How many candidates a question has, and the share of its evidence turns among them (the
    most any re-ordering of them can find), overall and for multi-hop questions."""
    rows = [row for kept in candidates.values() for row in kept]
    shares = [(q.category, labels.sum() / len(q.evidence)) for q, _, labels, _ in rows]
    multihop = [share for category, share in shares if category == 1]
    return {
        "per_question": float(np.mean([len(hits) for _, hits, _, _ in rows])) if rows else 0.0,
        "evidence_share": float(np.mean([share for _, share in shares])) if shares else 0.0,
        "multihop_evidence_share": float(np.mean(multihop)) if multihop else 0.0,
    }


def turn_cost(embedder: Any, conversations: list[Conversation], count: int = 200) -> dict:
    """Wall and CPU time (every thread of the process) to embed one turn's text, as a write
    does, over the first ``count`` turns of the file, one at a time."""
    texts = [memory_text(t, True) for c in conversations for t in c.turns][:count]
    embedder.embed(texts[:1])
    started, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        embedder.embed([text])
    return {
        "turns": len(texts),
        "ms": (time.perf_counter() - started) * 1000 / len(texts),
        "cpu_ms": (time.process_time() - cpu) * 1000 / len(texts),
    }


def fit_model(
    candidates: dict[str, list],
    stacks: dict[str, tuple[Any, Any]],
    conversations: list[Conversation],
    args: argparse.Namespace,
) -> None:
    """The model fitted on every question of the file but those of its last
    ``--fit-hold-out`` conversations (kept apart, so the readiness check measures the shipped
    model on them), written to ``--fit-model``."""
    from search_model import fit, write

    kept_apart = {c.sample_id for c in conversations[len(conversations) - args.fit_hold_out :]}
    if args.fit_hold_out == 0:
        kept_apart = set()
    fit_on = [c for c in conversations if c.sample_id not in kept_apart]
    names = [name for name in candidates if name not in kept_apart]
    if not names:
        raise SystemExit("--fit-hold-out keeps every conversation apart: nothing to fit on")
    rows = [row for name in names for row in candidates[name]]
    values = np.vstack([stacks[name][0] for name in names])
    labels = np.concatenate([stacks[name][1] for name in names])
    model = fit(values, labels, args.learned_features)
    fitted_on = {
        "dataset": args.data.name,
        "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
        "conversations": len(names),
        "kept_apart": sorted(kept_apart),
        "questions": len(rows),
        "candidates": len(labels),
        "evidence_candidates": int(labels.sum()),
        "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
        # What readiness checks to measure the model only on conversations it was not fitted on.
        "fit_on": sorted(names),
        "fit_on_turns": sorted({p for c in fit_on for p in turn_prints(c)}),
    }
    write(model, args.fit_model, fitted_on)
    print(f"model {model.version} written to {args.fit_model}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_options(parser, "locomo-db")
    parser.add_argument(
        "--speaker", choices=("text", "source"), default="text", help="where the speaker goes"
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="search the memories a previous run loaded (with the same --data and --speaker)",
    )
    parser.add_argument(
        "--now",
        choices=("pinned", "real"),
        default="pinned",
        help="search at each conversation's last turn (pinned) or at the instant of the run",
    )
    parser.add_argument(
        "--fit-model", type=Path, help="write the learned ranking's model fitted on the file"
    )
    parser.add_argument(
        "--learned-features",
        type=lambda text: tuple(name.strip() for name in text.split(",") if name.strip()),
        help="the features of the learned ranking to cross-validate and fit, comma-separated "
        "(default: the shipped model's); engine-learned-cv-all shows every feature",
    )
    parser.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default="engine",
        help="the engine's own embedder, or one measured in its place (benchmarks/embedders.py; "
        "its memories in benchmarks/out/locomo-<embedder>-db unless --data-dir is given)",
    )
    parser.add_argument(
        "--variants",
        type=lambda text: tuple(name.strip() for name in text.split(",") if name.strip()),
        default=tuple(VARIANTS),
        help=f"the cross-session methods to ask, comma-separated, of {', '.join(VARIANTS)} "
        "(default: all; '' none)",
    )
    parser.add_argument(
        "--no-second-hop",
        dest="second_hop",
        action="store_false",
        help="leave out the engine+second-hop method (two searches a question)",
    )
    parser.add_argument(
        "--fit-hold-out",
        type=int,
        default=0,
        help="with --fit-model: fit on every conversation but the file's last N, which the "
        "readiness check then measures the shipped model on",
    )
    parser.add_argument(
        "--loads",
        type=int,
        default=1,
        help="load the memories this many times (the first may be --reuse'd) and print the "
        "spread of each figure over the loads",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.loads < 1:
        parser.error("--loads: at least 1")
    if args.fit_hold_out < 0:
        parser.error("--fit-hold-out: not negative")
    if unknown := set(args.variants) - set(VARIANTS):
        parser.error(f"--variants: unknown {sorted(unknown)}; known: {tuple(VARIANTS)}")
    check_data(parser, args)
    if args.embedder != "engine" and args.data_dir == parser.get_default("data_dir"):
        args.data_dir = ROOT / "benchmarks" / "out" / f"locomo-{args.embedder}-db"
    conversations = read(args.data)
    if args.smoke:  # one conversation's first 5 sessions, 20 of their questions
        conversations = [first_sessions(conversations[0], 5)]
        conversations[0].questions = conversations[0].questions[:20]
        args.data_dir, args.reuse = ROOT / "benchmarks/out/smoke-locomo", False
        args.loads = 2  # the spread over loads runs too

    setup_django(args.data_dir)
    from memories.search.learned import FEATURES, shipped_model

    args.learned_features = args.learned_features or shipped_model().names
    if unknown := set(args.learned_features) - set(FEATURES):
        parser.error(f"--learned-features: unknown {sorted(unknown)}; known: {FEATURES}")
    args.learned_features = tuple(f for f in FEATURES if f in args.learned_features)
    with installed(args.embedder) as embedder:
        measure(args, conversations, embedder)


def asked(
    args: argparse.Namespace,
    conversations: list[Conversation],
    embedder: Any,
    agents: dict[str, Any],
    seconds: dict[str, float],
) -> dict[str, Any]:
    """Every question of every method asked on the memories ``agents`` hold: the scores, the
    candidates and the timings (``seconds`` adds each method's)."""
    from django.test.utils import override_settings

    from memories.operations import memory_search
    from memories.search.learned import FEATURES
    from memories.search.recipe import Recipe
    from memories.selectors.reader import Reader

    words = stop_words()
    scores = Scores()
    search_ms, embed_ms, embed_cpu_ms, graph_ms, formula_ms = [], [], [], [], []
    for method in ("engine", "engine-formula", "engine-relevance", "engine-graph", "baselines"):
        seconds[method] = 0.0
    candidates: dict[str, list[tuple[Question, list[Any], np.ndarray, float]]] = defaultdict(list)
    default = Recipe.default()
    variants = {name: default.but(**VARIANTS[name]) for name in args.variants}
    # The methods that read other candidates than the default's keep them (their own -cv).
    pools: dict[str, dict[str, list]] = {
        name: defaultdict(list)
        for name, recipe in variants.items()
        if (recipe.sources, recipe.candidates) != (default.sources, default.candidates)
    }
    for conversation in conversations:
        agent = agents[conversation.sample_id]
        reader = Reader.of_agent(agent)
        now = max(t.written_at for t in conversation.turns) if args.now == "pinned" else None
        started = time.perf_counter()
        baselines = Baselines(conversation, words)
        seconds["baselines"] += time.perf_counter() - started
        for question in conversation.questions:
            asked = {"query": question.text, "limit": 20, "now": now}
            started, cpu = time.perf_counter(), time.process_time()
            with asking(embedder):
                asked["query_vector"] = vector = embedder.embed([question.text])[0]
            embed_ms.append((time.perf_counter() - started) * 1000)
            embed_cpu_ms.append((time.process_time() - cpu) * 1000)
            started = time.perf_counter()
            hits = memory_search(reader, **asked)
            search_ms.append((time.perf_counter() - started) * 1000)
            seconds["engine"] += search_ms[-1] / 1000
            scores.add("engine", question, dia_ids(hits), search_ms[-1])
            if args.second_hop:
                started = time.perf_counter()
                ranking = second_hop(reader, question, asked, hits, baselines, embedder)
                took = search_ms[-1] + (time.perf_counter() - started) * 1000
                scores.add("engine+second-hop", question, ranking, took)
            started = time.perf_counter()
            with override_settings(MM_SEARCH_LEARNED=False):
                hits = memory_search(reader, **asked)
            formula_ms.append((time.perf_counter() - started) * 1000)
            seconds["engine-formula"] += formula_ms[-1] / 1000
            scores.add("engine-formula", question, dia_ids(hits), formula_ms[-1])
            started = time.perf_counter()
            with override_settings(MM_S1_HALF_LIFE_DAYS=float("inf")):
                hits = memory_search(reader, **asked)
            took = time.perf_counter() - started
            seconds["engine-relevance"] += took
            scores.add("engine-relevance", question, dia_ids(hits), took * 1000)
            started = time.perf_counter()
            hits = memory_search(reader, **asked, expand="graph")
            graph_ms.append((time.perf_counter() - started) * 1000)
            seconds["engine-graph"] += graph_ms[-1] / 1000
            scores.add("engine-graph", question, dia_ids(hits), graph_ms[-1])
            started = time.perf_counter()
            every = memory_search(reader, **asked, every_candidate=True)
            every_ms = (time.perf_counter() - started) * 1000
            labels = np.array([h.memory.metadata["dia_id"] in question.evidence for h in every])
            candidates[conversation.sample_id].append((question, every, labels, every_ms))
            for name, recipe in variants.items():
                ask(name, question, reader, asked, recipe, scores, pools.get(name))
            started = time.perf_counter()
            for name, ranking in baselines.rankings(question.text, vector).items():
                scores.add(name, question, ranking)
            seconds["baselines"] += time.perf_counter() - started
    stacks = {name: stacked(rows) for name, rows in candidates.items()}
    cross_validate(candidates, stacks, scores, "engine-learned-cv", args.learned_features)
    pool_figures = {"engine": coverage(candidates)}
    for name, pool in pools.items():
        if pool:  # its own candidates: the model fitted on them, and what they hold
            own = {key: stacked(rows) for key, rows in pool.items()}
            cross_validate(pool, own, scores, f"{name}-cv", args.learned_features)
            pool_figures[name] = coverage(pool)
    if args.learned_features != FEATURES:
        cross_validate(candidates, stacks, scores, "engine-learned-cv-all", FEATURES)
    if args.fit_model:
        fit_model(candidates, stacks, conversations, args)
    return {
        "scores": scores,
        "pool_figures": pool_figures,
        "search_ms": search_ms,
        "embed_ms": embed_ms,
        "embed_cpu_ms": embed_cpu_ms,
        "graph_ms": graph_ms,
        "formula_ms": formula_ms,
    }


def analyzed() -> None:
    """The words too common to select keyword candidates come from the table's statistics:
    read from every row, not from whichever rows an automatic ANALYZE during the load saw."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")


def measure(args: argparse.Namespace, conversations: list[Conversation], embedder: Any) -> None:
    """Load (or reuse) the memories, ask every question of every method (again after each
    further load, ``--loads``), print the tables."""

    seconds: dict[str, float] = {}
    started = time.perf_counter()
    agents = loaded(conversations) if args.reuse else {}
    if agents:
        print("reusing the memories already loaded", flush=True)
    else:
        agents = load(conversations, speaker_in_text=args.speaker == "text")
    seconds["load"] = time.perf_counter() - started
    analyzed()
    run = asked(args, conversations, embedder, agents, seconds)
    scores, pool_figures = run["scores"], run["pool_figures"]
    search_ms, embed_ms, embed_cpu_ms = run["search_ms"], run["embed_ms"], run["embed_cpu_ms"]
    graph_ms, formula_ms = run["graph_ms"], run["formula_ms"]
    # Each further load: every memory written again from nothing, every question asked again.
    spread = [scores.summary()]
    for number in range(2, args.loads + 1):
        print(f"load {number} of {args.loads}", flush=True)
        agents = load(conversations, speaker_in_text=args.speaker == "text")
        analyzed()
        again = argparse.Namespace(**{**vars(args), "fit_model": None})
        spread.append(asked(again, conversations, embedder, agents, {})["scores"].summary())
    written = turn_cost(embedder, conversations)

    methods = scores.summary()
    questions = methods["engine"]["questions"]
    dropped = sum(c.evidence_dropped for c in conversations)
    latency = {
        "search_p50_ms": float(np.percentile(search_ms, 50)),
        "search_p95_ms": float(np.percentile(search_ms, 95)),
        "with_embedding_p50_ms": float(np.percentile(np.add(search_ms, embed_ms), 50)),
        "with_embedding_p95_ms": float(np.percentile(np.add(search_ms, embed_ms), 95)),
        "graph_p50_ms": float(np.percentile(graph_ms, 50)),
        "graph_p95_ms": float(np.percentile(graph_ms, 95)),
        "formula_p50_ms": float(np.percentile(formula_ms, 50)),
        "formula_p95_ms": float(np.percentile(formula_ms, 95)),
        "formula_with_embedding_p95_ms": float(np.percentile(np.add(formula_ms, embed_ms), 95)),
        "query_embedding_p50_ms": float(np.percentile(embed_ms, 50)),
        "query_embedding_cpu_ms": float(np.mean(embed_cpu_ms)),
        "turn_embedding_ms": written["ms"],
        "turn_embedding_cpu_ms": written["cpu_ms"],
    }
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    info = machine()
    print(f"\n`{command}`\n")
    print(describe(info))
    print(
        f"Data: {args.data.name}, {len(conversations)} conversations, "
        f"{sum(len(c.turns) for c in conversations):,} turns, {questions:,} questions with "
        f"evidence; {dropped} evidence ids dropped (malformed or naming no turn). "
        f"Speaker in the {args.speaker}.\n"
    )
    print(table(methods, category_names(args.data)))
    if len(spread) > 1:
        print(f"\nOver {len(spread)} loads (the first is the table above): mean (min–max).\n")
        print(spread_table(spread_figures(spread, category_names(args.data))))
    print(
        f"\nEngine search p50 {latency['search_p50_ms']:.1f} ms, p95 "
        f"{latency['search_p95_ms']:.1f} ms (query embedded beforehand); with the query's "
        f"embedding p50 {latency['with_embedding_p50_ms']:.1f} ms, p95 "
        f"{latency['with_embedding_p95_ms']:.1f} ms. With expand: graph p50 "
        f"{latency['graph_p50_ms']:.1f} ms, p95 {latency['graph_p95_ms']:.1f} ms. "
        f"The formula alone (engine-formula) p50 "
        f"{latency['formula_p50_ms']:.1f} ms, p95 {latency['formula_p95_ms']:.1f} ms (with the "
        f"query's embedding p95 {latency['formula_with_embedding_p95_ms']:.1f} ms). "
        f"Load {seconds['load']:.1f} s. Searched at "
        + ("each conversation's last turn." if args.now == "pinned" else "the instant of the run.")
    )
    for name, figures in pool_figures.items():
        print(
            f"Candidates of {name} (every one the statement reads): "
            f"{figures['per_question']:.1f} a question on average, holding "
            f"{figures['evidence_share']:.3f} of the evidence turns "
            f"({figures['multihop_evidence_share']:.3f} of the multi-hop questions')."
        )
    from django.conf import settings

    print(
        f"Embedder {embedder.model_name} on {settings.MM_EMBEDDER_THREADS} thread(s): a question "
        f"p50 {latency['query_embedding_p50_ms']:.1f} ms, CPU "
        f"{latency['query_embedding_cpu_ms']:.1f} ms on average; a turn's text (as a write "
        f"embeds it) {written['ms']:.1f} ms, CPU {written['cpu_ms']:.1f} ms (mean of "
        f"{written['turns']}, one at a time)."
        + (
            ""
            if args.embedder == "engine"
            else " The `engine` row ranks with the shipped model, fitted on the engine's own "
            "embedder's figures; engine-learned-cv is fitted on this embedder's."
        )
    )
    print(verdict(methods, "engine-graph", "engine"))
    print(verdict(methods, "engine-learned-cv", "engine-formula"))
    if args.json:
        payload = {
            "dataset": args.data.name,
            "dataset_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "questions": questions,
            "evidence_dropped": dropped,
            "speaker": args.speaker,
            "now": args.now,
            "embedder": embedder.model_name,
            "methods": methods,
            "seconds": seconds,
            "latency": latency,
            "candidates": pool_figures["engine"],
            "candidates_by_method": pool_figures,
            "variants": {name: VARIANTS[name] for name in args.variants},
            "loads": spread_figures(spread, category_names(args.data)),
            "command": command,
            "machine": info,
        }
        write_json(args.json, payload)


if __name__ == "__main__":
    main()
