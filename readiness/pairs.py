"""Statement pairs labelled as contradicting or not, in ProSeCCo's JSON-lines shape (Beyer et
al.; see ``shared/data/README.md``): each line an object with ``proposition_1``,
``proposition_2`` and ``label`` (``self-contradiction`` or another). The data is not in this
repository; the divergence benchmark and the readiness check read it from its path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memories.divergence.detectors import Assessment, assess, cosine
from memories.embeddings import get_embedder

POSITIVE = "self-contradiction"


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    contradicts: bool


@dataclass(frozen=True)
class Scored:
    pairs: list[Pair]
    similarities: np.ndarray
    assessments: list[Assessment]

    @property
    def labels(self) -> np.ndarray:
        return np.array([pair.contradicts for pair in self.pairs])

    @property
    def scores(self) -> np.ndarray:
        return np.array([assessment.score for assessment in self.assessments])


def read(path: Path, limit: int | None = None) -> list[Pair]:
    """The pairs of a file; a line without the shape's fields is an error naming it."""
    pairs = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        for key in ("proposition_1", "proposition_2", "label"):
            if not isinstance(item.get(key), str):
                raise ValueError(f"{path.name}:{number}: no {key} (ProSeCCo's shape is needed)")
        pairs.append(Pair(item["proposition_1"], item["proposition_2"], item["label"] == POSITIVE))
    return pairs[:limit]


def score(pairs: list[Pair]) -> Scored:
    """Each pair embedded by the engine's embedder and scored by the divergence detector
    (rules and geometry; no model)."""
    vectors = get_embedder().embed([text for p in pairs for text in (p.first, p.second)])
    similarities = np.array([cosine(vectors[2 * i], vectors[2 * i + 1]) for i in range(len(pairs))])
    assessments = [
        assess(pair.first, pair.second, similarity)
        for pair, similarity in zip(pairs, similarities, strict=True)
    ]
    return Scored(pairs=pairs, similarities=similarities, assessments=assessments)


def from_dialogues(path: Path) -> list[Pair]:
    """Two user turns of one dialogue as two writers' memories, their order left behind: the
    pairs and labels of ``readiness.dialogue`` (a slot of a service given another value, or
    not; a ``test`` split or a file of another shape is refused there)."""
    from readiness.dialogue import read as read_dialogues

    return [Pair(p.older, p.newer, p.positive) for p in read_dialogues(path)]


def from_claims(path: Path, held_out_only: bool = True) -> list[Pair]:
    """A claim and a revision's sentence as two writers' memories: the rows of
    ``readiness.corrections`` (its shape check, its texts, its held-out part), ``REFUTES`` a
    contradiction, ``SUPPORTS`` not one, ``NOT ENOUGH INFO`` left out."""
    from readiness.corrections import read as read_claims

    rows = read_claims(path)
    labels = [json.loads(line)["label"] for line in path.read_text().splitlines() if line.strip()]
    return [
        Pair(row["older"], row["newer"], row["positive"])
        for row, label in zip(rows, labels, strict=True)
        if label in ("REFUTES", "SUPPORTS") and (row["held_out"] or not held_out_only)
    ]
