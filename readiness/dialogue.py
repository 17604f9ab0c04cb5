"""Corrections in conversation, measured on dialogues in the shape of the Schema-Guided Dialogue
dataset (Rastogi et al., AAAI 2020; CC BY-SA 4.0): a folder of ``dialogues_*.json`` files (or
one such file), each a list of dialogues whose ``turns`` carry a ``speaker`` and an
``utterance``, and for a user's turn ``frames`` with the ``actions`` it takes (``act``,
``slot``, ``values``) in each ``service``.

Each user turn is a memory of one session, written after the turns before it. A pair (an
earlier user turn, a later one) is a **correction** when the later turn informs a slot of a
service that the earlier informed too, with values that share no word; it is **not** one when
the two inform no slot in common (different slots, or the same slot of another service); pairs
that restate a value are neither and are left out. The engine reads the later turn against the
earlier ones of its session as consolidation does (``memories.temporal.judgment.judge_session``)
and its verdict is counted: precision of what it would **apply**, recall of what it **catches**
(applied or proposed), and the precision of its proposals beside them.

A folder named ``test`` is refused: that split of the dataset is kept for checks outside the
project.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The split of the dataset never read here.
KEPT_APART = "test"


@dataclass(frozen=True)
class Pair:
    older: str
    newer: str
    positive: bool
    verdict: str


def files(path: Path) -> list[Path]:
    """The dialogue files of ``path`` (a folder or one file); a ``test`` split is refused."""
    if KEPT_APART in path.resolve().parts:
        raise ValueError(f"{path}: the {KEPT_APART!r} split is kept apart and never read here")
    found = sorted(path.glob("dialogues_*.json")) if path.is_dir() else [path]
    if not found:
        raise ValueError(f"{path}: no dialogues_*.json files")
    return found


def _words(values: list[str]) -> set[str]:
    return set(re.findall(r"\w+", " ".join(values).lower()))


def _informs(turn: dict[str, Any]) -> list[tuple[str, str, set[str]]]:
    return [
        (frame["service"], action["slot"], _words(action["values"]))
        for frame in turn["frames"]
        for action in frame["actions"]
        if action["act"] == "INFORM" and action["values"]
    ]


def dialogue_pairs(dialogue: dict[str, Any]) -> list[Pair]:
    """The labelled pairs of one dialogue's user turns, each with the engine's verdict."""
    from memories.temporal.judgment import judge_session

    users = [t for t in dialogue["turns"] if t["speaker"] == "USER"]
    informs = [_informs(t) for t in users]
    pairs = []
    for j, newer in enumerate(users):
        earlier = list(range(j - 1, -1, -1))
        if not informs[j] or not earlier:
            continue
        judged = judge_session(
            [users[i]["utterance"] for i in earlier], newer["utterance"], same_source=True
        )
        for i, judgment in zip(earlier, judged, strict=True):
            if not informs[i]:
                continue
            shared = [(a, b) for a in informs[i] for b in informs[j] if a[:2] == b[:2]]
            if any(not (a[2] & b[2]) for a, b in shared):
                positive = True
            elif not shared:
                positive = False
            else:
                continue  # a value restated: neither
            pairs.append(
                Pair(users[i]["utterance"], newer["utterance"], positive, judgment.verdict)
            )
    return pairs


def read(path: Path) -> list[Pair]:
    """Every labelled pair of the dialogues under ``path`` with the engine's verdict; a file
    not of the shape is an error naming it."""
    pairs: list[Pair] = []
    for file in files(path):
        try:
            dialogues = json.loads(file.read_text())
            for dialogue in dialogues:
                pairs += dialogue_pairs(dialogue)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{file.name}: not the Schema-Guided Dialogue shape ({exc})") from exc
    return pairs


def measure(pairs: list[Pair]) -> dict[str, Any]:
    """Precision of what would be applied, recall of what is caught (applied or proposed),
    precision of the proposals, recall of what is applied."""
    positives = sum(p.positive for p in pairs)
    applied = [p for p in pairs if p.verdict == "apply"]
    proposed = [p for p in pairs if p.verdict == "propose"]
    right_applied = sum(p.positive for p in applied)
    right_proposed = sum(p.positive for p in proposed)

    def share(part: int, whole: int) -> float:
        return part / whole if whole else float("nan")

    return {
        "pairs": len(pairs),
        "positives": positives,
        "applied": len(applied),
        "proposed": len(proposed),
        "applied_precision": share(right_applied, len(applied)),
        "applied_recall": share(right_applied, positives),
        "caught_recall": share(right_applied + right_proposed, positives),
        "proposed_precision": share(right_proposed, len(proposed)),
    }
