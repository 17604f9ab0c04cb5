"""REALTALK's chats in LoCoMo's shape: conversations no model of the engine was fitted on.

    python benchmarks/realtalk.py DIR OUT.json
    meaning-memory stare-eval --held-out-conversations OUT.json

REALTALK (Lee et al. 2025, "REALTALK: A 21-Day Real-World Dataset for Long-Term Conversation";
fetch ``danny911kr/REALTALK``) holds ten chats of two people over about three weeks, each
``data/Chat_<N>_<names>.json``: ``name`` (``speaker_1``, ``speaker_2``), ``session_<k>`` (turns:
``speaker``, ``dia_id``, ``clean_text``, ``date_time``), ``session_<k>_date_time``
(``"29.12.2023, 22:42:04"``) and ``qa`` (``question``, ``answer``, ``evidence``, ``category``,
numbered as LoCoMo's: 1 multi-hop, 2 temporal, 3 open-domain). Only those ten files are read
(the repository's ``data/locomo/`` is a copy of LoCoMo, which the engine's models were fitted
on). The repository carries no licence: its conversions are for measuring, never shipped.

What changes on the way (the data's own quirks, nothing tuned to a result):

* sessions are numbered in order, and each turn's id is ``D<session>:<position>`` (REALTALK's
  ids do not follow its sessions and have gaps); the original id and time stay on the turn;
* a session's date is written as LoCoMo writes it (``"10:42 pm on 29 December, 2023"``);
* the speakers' labels that differ from the names the questions use are renamed (``RENAME``);
* each question's evidence ids are read however they were typed (``"D17;39"``, ``"D12:3-D12:5"``,
  a trailing dot) and mapped to the new ids; those that name no turn (nearly all a photo sent
  without words) are listed under ``evidence_unresolved``.

Printed: each chat's counts (questions, with evidence, evidence ids, unresolved, by category,
sessions, turns) and their total.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

#: Per chat number: speaker labels renamed to the names its questions use.
RENAME = {1: {"Emi": "Kate", "elise": "Elise"}, 2: {"elise": "Elise"}}
_ID = re.compile(r"D\s*(\d+)\s*[:;]\s*(\d+)(?:\s*-\s*D?\s*(\d+)\s*:\s*(\d+))?")
_SESSION = re.compile(r"session_(\d+)")
_CHAT = re.compile(r"Chat_(\d+)_")


def locomo_date(text: str) -> str:
    """``"29.12.2023, 22:42:04"`` → ``"10:42 pm on 29 December, 2023"``."""
    # A wall-clock time as the chat shows it, rewritten, never compared: no time zone.
    when = datetime.strptime(text, "%d.%m.%Y, %H:%M:%S")  # noqa: DTZ007
    hour = int(when.strftime("%I"))
    return f"{hour}:{when:%M} {when:%p}".lower() + f" on {when.day} {when:%B}, {when.year}"


def evidence_ids(raw: str) -> list[str]:
    """The turn ids one evidence string names, however typed: ``"D17;39"`` → ``["D17:39"]``,
    ``"D12:3-D12:5"`` → the three of the range."""
    found = []
    for session, first, other, last in _ID.findall(raw):
        if other and other == session:
            found += [f"D{session}:{n}" for n in range(int(first), int(last) + 1)]
        else:
            found.append(f"D{session}:{int(first)}")
            if other:
                found.append(f"D{other}:{int(last)}")
    return found


def convert(path: Path, number: int) -> tuple[dict, Counter]:
    """One chat file as a LoCoMo conversation, with its counts."""
    chat = json.loads(path.read_text(encoding="utf-8"))
    renamed = RENAME.get(number, {})
    sessions = sorted(int(m.group(1)) for key in chat if (m := _SESSION.fullmatch(key)))
    conversation = {
        "speaker_a": renamed.get(chat["name"]["speaker_1"], chat["name"]["speaker_1"]),
        "speaker_b": renamed.get(chat["name"]["speaker_2"], chat["name"]["speaker_2"]),
    }
    new_ids: dict[str, str] = {}
    for index, session in enumerate(sessions, 1):
        turns = []
        for position, turn in enumerate(chat[f"session_{session}"], 1):
            new_ids[turn["dia_id"]] = f"D{index}:{position}"
            turns.append(
                {
                    "speaker": renamed.get(turn["speaker"], turn["speaker"]),
                    "dia_id": f"D{index}:{position}",
                    "text": turn["clean_text"],
                    "orig_dia_id": turn["dia_id"],
                    "orig_date_time": turn["date_time"],
                    **{k: turn[k] for k in ("img_url", "blip_caption") if turn.get(k)},
                }
            )
        conversation[f"session_{index}_date_time"] = locomo_date(
            chat[f"session_{session}_date_time"]
        )
        conversation[f"session_{index}"] = turns
    questions, counts = [], Counter()
    for question in chat["qa"]:
        evidence, unresolved = [], []
        for raw in question["evidence"]:
            ids = evidence_ids(raw)
            if not ids:
                unresolved.append(raw)
            for old in ids:
                if old not in new_ids:
                    unresolved.append(old)
                elif new_ids[old] not in evidence:
                    evidence.append(new_ids[old])
        counts.update(
            questions=1,
            with_evidence=bool(evidence),
            evidence_ids=len(evidence),
            unresolved=len(unresolved),
            **{f"category_{question['category']}": 1},
        )
        questions.append(
            {
                "question": question["question"],
                "answer": question["answer"],
                "evidence": evidence,
                "category": question["category"],
                "evidence_raw": question["evidence"],
                "evidence_unresolved": unresolved,
            }
        )
    counts.update(sessions=len(sessions), turns=len(new_ids))
    item = {
        "sample_id": f"realtalk-{number}",
        "source_file": path.name,
        "conversation": conversation,
        "qa": questions,
    }
    return item, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the folder of REALTALK's Chat_*.json files")
    parser.add_argument("out", type=Path, help="the LoCoMo-shaped JSON file to write")
    args = parser.parse_args()
    files = sorted(
        (p for p in args.source.glob("Chat_*.json") if _CHAT.search(p.name)),
        key=lambda p: int(_CHAT.search(p.name).group(1)),
    )
    if not files:
        parser.error(f"source: no Chat_<N>_*.json file in {str(args.source)!r}")
    items, total = [], Counter()
    for path in files:
        item, counts = convert(path, int(_CHAT.search(path.name).group(1)))
        items.append(item)
        total.update(counts)
        print(f"{item['sample_id']:<12} {path.name:<36} {dict(sorted(counts.items()))}")
    args.out.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{'total':<12} {'':<36} {dict(sorted(total.items()))}")


if __name__ == "__main__":
    main()
