"""LIAR (Wang, ACL 2017) as the engine reads it: political statements, each with its speaker,
subjects, context and PolitiFact's verdict. The data is not in this repository (see
``shared/data/README.md``); the asymmetry benchmark and the readiness check read it from its
path. Tab-separated, no header, read with ``csv.QUOTE_NONE``: id, label, statement, subjects
(comma-separated), speaker, job, state, party, five history counts (never read: they include
the statements measured), context.

How A is measured on it (``measure``): the training statements are written as memories of one
workspace (source and ``attributed_to`` the speaker, ``source_kind`` stated, the subjects and
the context as entities), each verdict is replayed through the engine's own feedback (true and
mostly-true: ``important``; false and pants-fire: ``demote``; half-true and barely-true: none,
the feedback being two-sided), the A scores are refreshed, then the statements measured are
written by the same path and their A scores, given on writing, are compared with their
verdicts: AUC of true/mostly-true against false/pants-fire.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

from memories.asymmetry.score import FEATURES, features, shrunk, workspace_prior
from memories.models import Agent, Memory
from memories.operations import memory_remember_bulk
from memories.selectors.reader import Reader
from memories.selectors.sources import ENTITY, WRITER, Records, source_records
from memories.services import memory_feedback
from memories.services.asymmetry import Claim, asymmetry_refresh, claims_of
from readiness.metrics import auc

RIGHT = {"true", "mostly-true"}
WRONG = {"false", "pants-fire"}
LABELS = RIGHT | WRONG | {"half-true", "barely-true"}
#: Words that hedge a claim: a statement without any is written confidently (a baseline).
HEDGES = re.compile(
    r"\b(?:may|might|could|perhaps|maybe|possibly|probably|likely|seems?|appears?|suggests?|"
    r"about|around|nearly|almost|roughly|approximately|estimated?|some|many|often|i think|"
    r"i believe)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Statement:
    id: str
    label: str
    text: str
    subjects: tuple[str, ...]
    speaker: str
    context: str

    @property
    def verdict(self) -> int:
        """1 right, -1 wrong, 0 mixed."""
        return 1 if self.label in RIGHT else -1 if self.label in WRONG else 0


def read(path: Path, limit: int | None = None) -> list[Statement]:
    """The statements of a file; a row without LIAR's columns is an error naming it."""
    statements = []
    with path.open(newline="", encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            if not row:
                continue
            if len(row) < 14 or row[1] not in LABELS:
                raise ValueError(f"{path.name}:{number}: not a LIAR row (14 columns and a label)")
            subjects = tuple(s.strip() for s in row[3].split(",") if s.strip())
            statements.append(
                Statement(row[0], row[1], row[2].strip(), subjects, row[4].strip(), row[13].strip())
            )
    return statements[:limit]


def as_memory(statement: Statement) -> dict:
    """A statement as a memory's remember arguments."""
    entities = [{"name": s[:200], "type": "topic"} for s in statement.subjects]
    if statement.context:
        entities.append({"name": statement.context[:200], "type": "custom:venue"})
    speaker = statement.speaker or "unknown"
    return {
        "text": statement.text or "(empty statement)",
        "source": speaker[:200],
        "attributed_to": speaker[:200],
        "source_kind": Memory.SourceKind.STATED,
        "perspective": "external",
        "entities": entities[: settings.MM_MAX_ENTITIES_PER_MEMORY],
        "metadata": {"liar_id": statement.id},
    }


def write(
    agent: Agent,
    statements: Sequence[Statement],
    progress: Callable[[int, int], None] | None = None,
) -> list[Memory]:
    """The statements as memories, in bulk writes (one memory per statement: a statement
    repeated by its speaker is stored once and returned for both)."""
    size = int(settings.MM_BULK_MAX_ITEMS)
    memories: list[Memory] = []
    if progress is not None:
        progress(0, len(statements))
    counted = 0
    for start in range(0, len(statements), size):
        batch = statements[start : start + size]
        results = memory_remember_bulk(agent=agent, items=[as_memory(s) for s in batch])
        memories += [r.memory for r in results]
        if len(memories) >= 2 * max(counted, size // 2):
            # Each write reads what the ones before it stored (the A scores' claims join the
            # memories to their entities): in this rolled-back transaction autovacuum never
            # counts them, and on a database that had no rows the planner took those joins
            # for a few rows and ran one for over 17 minutes. Counted as the rows double.
            _analyze()
            counted = len(memories)
        if progress is not None:
            progress(start + len(batch), len(statements))
    return memories


def _analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "ANALYZE memories_memory, memories_provenanceevent, memories_entity, memories_link"
        )


def replay(agent: Agent, statements: Sequence[Statement], memories: Sequence[Memory]) -> int:
    """Each verdict as the engine's feedback on its memory; returns how many were given."""
    given = 0
    for statement, memory in zip(statements, memories, strict=True):
        if statement.verdict == 0:
            continue
        action = "important" if statement.verdict > 0 else "demote"
        memory_feedback(
            agent=agent,
            mem_id=memory.mem_id,
            action=action,
            reason=f"PolitiFact rated statement {statement.id} {statement.label}",
        )
        given += 1
    return given


@dataclass
class Measured:
    auc: float
    baselines: dict[str, float]
    statements: int
    positives: int
    negatives: int
    scores: np.ndarray
    labels: np.ndarray


def baselines(train: Sequence[Statement], measured: Sequence[Statement]) -> dict[str, float]:
    """The baselines on the statements measured: confidence (no hedge word), the speaker's
    share of true verdicts in the training statements (add-one), and "holds a number"."""
    kept = [s for s in measured if s.verdict != 0]
    labels = np.array([s.verdict > 0 for s in kept])
    right, judged = Counter(), Counter()
    for s in train:
        if s.verdict != 0:
            judged[s.speaker] += 1
            right[s.speaker] += s.verdict > 0
    return {
        "confidence": auc(np.array([0.0 if HEDGES.search(s.text) else 1.0 for s in kept]), labels),
        "speaker_record": auc(
            np.array([(right[s.speaker] + 1) / (judged[s.speaker] + 2) for s in kept]), labels
        ),
        "has_number": auc(
            np.array([1.0 if re.search(r"\d", s.text) else 0.0 for s in kept]), labels
        ),
    }


def measure(
    agent: Agent,
    train: Sequence[Statement],
    measured: Sequence[Statement],
    *,
    fit: Callable[[Records, list[Claim], list[int]], None] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Measured:
    """Write the training statements, replay their verdicts, refresh the records and scores
    (``fit``: called then with the records, the training claims and their verdicts, to fit the
    model before the statements measured are written), write those, and take the AUC of their
    A scores."""

    def step(name: str) -> Callable[[int, int], None] | None:
        return None if progress is None else (lambda done, total: progress(name, done, total))

    stored = write(agent, train, step("train"))
    if progress is not None:
        progress("feedback", 0, len(train))
    replay(agent, train, stored)
    if progress is not None:
        progress("refresh", 0, len(train))
    # The rows just written are in this (rolled-back) transaction, where autovacuum never
    # sees them: without statistics of them the planner took the records' query for a few
    # rows and ran it for over half an hour on 10,269 statements. ANALYZE counts them.
    _analyze()
    asymmetry_refresh(workspace_id=agent.workspace_id, progress=step("refresh"))
    if fit is not None:
        records = source_records(Reader.of_engine(agent.workspace))
        claims = claims_of(agent.workspace_id, [m.pk for m in stored])
        by_pk = {m.pk: s.verdict for m, s in zip(stored, train, strict=True)}
        fit(records, claims, [by_pk[c.pk] for c in claims])
    found = write(agent, measured, step("measured"))
    scores = dict(Memory.objects.filter(pk__in=[m.pk for m in found]).values_list("pk", "a_score"))
    kept = [(s, m) for s, m in zip(measured, found, strict=True) if s.verdict != 0]
    labels = np.array([s.verdict > 0 for s, _ in kept])
    values = np.array([scores[m.pk] for _, m in kept], dtype=float)
    return Measured(
        auc=auc(values, labels),
        baselines=baselines(train, measured),
        statements=len(measured),
        positives=int(labels.sum()),
        negatives=int((~labels).sum()),
        scores=values,
        labels=labels,
    )


# --- Fitting the model (``benchmarks/asymmetry.py --fit``) ---------------------------------------


def left_out_features(
    records: Records, claims: Sequence[Claim], verdicts: Sequence[int]
) -> np.ndarray:
    """Each training claim's prior and features with its own verdict left out of every record
    it reads (its source's, its source's on its topics, its topics'), as a new statement would
    see them."""
    strength = records.strength
    rows = []
    for claim, verdict in zip(claims, verdicts, strict=True):
        r, w = (1, 0) if verdict > 0 else (0, 1) if verdict < 0 else (0, 0)
        prior = workspace_prior(records.right - r, records.wrong - w)
        key = (ENTITY, claim.attributed) if claim.attributed else (WRITER, claim.source)
        source = records.sources.get(key)
        own = shrunk(source.right - r, source.wrong - w, prior, strength) if source else None
        on_topics, topics = [], []
        for topic in claim.topics:
            if source is not None and topic in source.on_topics:
                pair = source.on_topics[topic]
                if pair.right - r + pair.wrong - w > 0:
                    on_topics.append(shrunk(pair.right - r, pair.wrong - w, own, strength))
            if topic in records.topics:
                t = records.topics[topic]
                topics.append(shrunk(t.right - r, t.wrong - w, prior, strength))
        x = features(prior=prior, source=own, on_topics=on_topics, topics=topics, text=claim.text)
        rows.append([prior, *x])
    return np.array(rows, dtype=float)


def fit_logistic(
    x: np.ndarray, y: np.ndarray, offset: np.ndarray, l2: float = 1.0
) -> tuple[float, np.ndarray]:
    """Bias and weights of a logistic regression with a fixed offset per row (the prior's
    logit), by Newton's method with a small L2 penalty on the weights."""
    design = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(design.shape[1])
    penalty = np.diag([0.0] + [l2] * x.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(offset + design @ beta)))
        gradient = design.T @ (y - p) - penalty @ beta
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-8:
            break
    return float(beta[0]), beta[1:]


def fitted_model(records: Records, claims: Sequence[Claim], verdicts: Sequence[int]) -> dict:
    """The model's parameters fitted on judged training claims (``data/asymmetry_model.json``)."""
    judged = [i for i, v in enumerate(verdicts) if v != 0]
    rows = left_out_features(records, [claims[i] for i in judged], [verdicts[i] for i in judged])
    y = np.array([verdicts[i] > 0 for i in judged], dtype=float)
    priors = rows[:, 0]
    offset = np.log(priors / (1 - priors))
    bias, weights = fit_logistic(rows[:, 1:], y, offset)
    return {
        "bias": round(bias, 6),
        "weights": {name: round(float(w), 6) for name, w in zip(FEATURES, weights, strict=True)},
        "fitted_on": {"claims": len(judged), "right": int(y.sum()), "strength": records.strength},
    }
