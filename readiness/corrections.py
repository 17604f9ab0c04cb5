"""Statement pairs where the newer may correct the older, in VitaminC's JSON-lines shape (Schuster
et al., NAACL 2021: claims checked against sentences of Wikipedia revisions): each line an object
with ``claim``, ``evidence``, ``label`` (``REFUTES``, ``SUPPORTS`` or ``NOT ENOUGH INFO``) and
``page``. The claim is the older statement, the evidence the newer; a pair is positive when the
evidence refutes the claim. The data is not in this repository: ``benchmarks/supersede.py`` and
the readiness check ``t.corrections.heldout_precision`` read it from its path.

The pairs are split by page: a page whose name's sha256 is 0 modulo ``PARTS`` is in the
**held-out** part, which nothing is fitted or tuned on; the rest is the **tuning** part, on which
``benchmarks/supersede.py --fit`` fits the detector's model and chooses its thresholds.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

POSITIVE = "REFUTES"
#: The held-out part: pages whose name's sha256 is 0 modulo ``PARTS``.
PARTS = 5


def held_out(page: str) -> bool:
    return int(hashlib.sha256(page.encode()).hexdigest(), 16) % PARTS == 0


def detokenised(text: str) -> str:
    """VitaminC's texts are tokenised ("$ 73 million ." and `` quotes ''): written back."""
    for before, after in ((" ,", ","), (" .", "."), ("`` ", '"'), (" ''", '"'), (" 's", "'s")):
        text = text.replace(before, after)
    return text.replace("$ ", "$").replace(" %", "%").replace("( ", "(").replace(" )", ")")


def read(path: Path) -> list[dict[str, Any]]:
    """The pairs of a file; a line without the shape's fields is an error naming it."""
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        for key in ("claim", "evidence", "label"):
            if not isinstance(row.get(key), str):
                raise ValueError(f"{path.name}:{number}: no {key} (VitaminC's shape is needed)")
        rows.append(
            {
                "older": detokenised(row["claim"]),
                "newer": detokenised(row["evidence"]),
                "positive": row["label"] == POSITIVE,
                "held_out": held_out(str(row.get("page", row.get("case_id", number)))),
            }
        )
    return rows


def assessed(rows: list[dict[str, Any]], with_cosine: bool) -> dict[str, np.ndarray]:
    """Each pair's label, part, model features, detector score, strongest rule (its rank in
    ``STRENGTH``) and, ``with_cosine``, the embedder's cosine similarity of the two texts."""
    from memories.temporal.corrections import STRENGTH, assess, features, findings
    from memories.temporal.judgment import judge

    found = [findings(r["older"], r["newer"]) for r in rows]
    order = {rule: rank for rank, rule in enumerate(reversed(list(STRENGTH)), 1)}
    columns = {
        "labels": np.array([r["positive"] for r in rows], dtype=bool),
        "held_out": np.array([r["held_out"] for r in rows], dtype=bool),
        "x": np.array([features(overlap, f) for overlap, f in found]),
        "detector": np.array([assess(r["older"], r["newer"]).score for r in rows]),
        "rules": np.array([order[f[0]["rule"]] if f else 0 for _, f in found], dtype=float),
        # What consolidation would do (``memories.temporal.judgment``): 2 apply, 1 propose.
        "judged": np.array(
            [
                {"apply": 2, "propose": 1}.get(
                    judge(r["older"], r["newer"], same_source=False).verdict, 0
                )
                for r in rows
            ],
            dtype=float,
        ),
    }
    if with_cosine:
        from memories.embeddings import get_embedder

        texts = [t for r in rows for t in (r["older"], r["newer"])]
        vectors = np.asarray(get_embedder().embed(texts))
        a, b = vectors[0::2], vectors[1::2]
        columns["cosine"] = np.sum(a * b, axis=1) / (
            np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-12
        )
    return columns


def at(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    """Precision and recall of the pairs scored at least ``threshold``."""
    flagged = scores >= threshold
    hits = int((flagged & labels).sum())
    return {
        "threshold": round(threshold, 4),
        "flagged": int(flagged.sum()),
        "precision": hits / int(flagged.sum()) if flagged.sum() else float("nan"),
        "recall": hits / int(labels.sum()) if labels.sum() else float("nan"),
    }


def measured(columns: dict[str, np.ndarray]) -> dict[str, Any]:
    """Each part's pairs, AUCs (detector, rules, cosine) and the two operating points."""
    from memories.temporal.corrections import model
    from readiness.metrics import auc

    chosen = model()
    parts = {}
    for name, mask in (("tuning", ~columns["held_out"]), ("held_out", columns["held_out"])):
        labels = columns["labels"][mask]
        if not mask.any():
            continue
        part: dict[str, Any] = {"pairs": int(mask.sum()), "positives": int(labels.sum())}
        for method in ("detector", "rules", "cosine"):
            if method in columns:
                part[f"{method}_auc"] = auc(columns[method][mask], labels)
        part["confident"] = at(columns["detector"][mask], labels, chosen.confident)
        part["propose"] = at(columns["detector"][mask], labels, chosen.propose)
        # What consolidation would apply, and catch (apply or propose).
        part["applied"] = at(columns["judged"][mask], labels, 2)
        part["caught"] = at(columns["judged"][mask], labels, 1)
        parts[name] = part
    return parts
