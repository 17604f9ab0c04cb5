"""LongMemEval's questions in LoCoMo's shape, so that ``benchmarks/locomo.py`` measures the engine
on the yardstick peers publish besides LoCoMo.

    python benchmarks/longmemeval.py longmemeval_oracle.json OUT.json [--questions N]
    python benchmarks/locomo.py --data OUT.json --json benchmarks/out/longmemeval.json

LongMemEval (Wu et al. 2024, "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
Memory"; MIT) gives each question its own haystack: chat sessions between a user and an
assistant (``haystack_sessions``, each a list of turns with ``role``, ``content`` and, in the
sessions that hold the answer, ``has_answer``), their dates (``haystack_dates``, ``"2023/05/21
(Sun) 19:50"``) and ids, the question, its type and the sessions that answer it
(``answer_session_ids``). The ``oracle`` file's haystack is those sessions alone; the ``s``
file's is about fifty sessions with them among the rest.

Each question becomes one conversation (``sample_id`` ``lme-<question_id>``): its sessions in
the order of their dates, each turn ``D<session>:<position>`` spoken by ``User`` or
``Assistant``, and the question with its evidence, the turns marked ``has_answer``. A question
whose answer no turn is marked as holding (the abstention questions, ``_abs``, and a few
others) has no evidence and is left out by the reader, as LoCoMo's are; each is counted.

LoCoMo numbers its question categories; the types map onto them by what they ask
(``CATEGORY_OF``), and each conversation carries ``category_names`` so that the benchmark's
table heads its columns with LongMemEval's names. ``--questions N`` keeps the first ``N``
questions by id (a smaller run of the ``s`` file, whose haystacks are large).

Some assistant turns are longer than a memory's text may be by default (``MM_MAX_TEXT_CHARS``,
10,000 characters): the converter prints the longest (``longest_turn_chars``), and the
benchmark runs with ``MM_MAX_TEXT_CHARS`` at least that, as an operator storing such chats
would set it. The embedder reads the start of a long text; full-text search reads all of it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

#: LongMemEval's question types as LoCoMo's category numbers, and the names the table shows.
CATEGORY_OF = {
    "multi-session": 1,
    "temporal-reasoning": 2,
    "knowledge-update": 3,
    "single-session-user": 4,
    "single-session-assistant": 5,
    "single-session-preference": 6,
}
CATEGORY_NAMES = {str(number): name for name, number in CATEGORY_OF.items()}
SPEAKERS = {"user": "User", "assistant": "Assistant"}


def _when(text: str) -> datetime:
    # A wall-clock time as the data writes it, rewritten and ordered, never compared with
    # another clock: no time zone.
    return datetime.strptime(_WEEKDAY.sub(" ", text).strip(), "%Y/%m/%d %H:%M")  # noqa: DTZ007


_WEEKDAY = re.compile(r"\s*\(\w+\)\s*")


def locomo_date(text: str) -> str:
    """``"2023/05/21 (Sun) 19:50"`` → ``"7:50 pm on 21 May, 2023"``."""
    when = _when(text)
    hour = int(when.strftime("%I"))
    return f"{hour}:{when:%M} {when:%p}".lower() + f" on {when.day} {when:%B}, {when.year}"


def convert(question: dict) -> tuple[dict, Counter]:
    """One LongMemEval question as a LoCoMo conversation, with its counts."""
    sessions = sorted(
        zip(question["haystack_dates"], question["haystack_session_ids"],
            question["haystack_sessions"], strict=True),
        key=lambda session: _when(session[0]),
    )  # fmt: skip
    conversation = {"speaker_a": "User", "speaker_b": "Assistant"}
    evidence, counts = [], Counter()
    for index, (date, session_id, turns) in enumerate(sessions, 1):
        conversation[f"session_{index}_date_time"] = locomo_date(date)
        conversation[f"session_{index}"] = [
            {
                "speaker": SPEAKERS.get(turn["role"], turn["role"].title()),
                "dia_id": f"D{index}:{position}",
                "text": turn["content"],
                "orig_session_id": session_id,
            }
            for position, turn in enumerate(turns, 1)
        ]
        evidence += [
            f"D{index}:{position}"
            for position, turn in enumerate(turns, 1)
            if turn.get("has_answer") is True
        ]
        counts.update(turns=len(turns))
        longest = max((len(turn["content"]) for turn in turns), default=0)
        counts["longest_turn_chars"] = max(counts["longest_turn_chars"], longest)
    kind = question["question_type"]
    counts.update(
        questions=1,
        sessions=len(sessions),
        evidence_turns=len(evidence),
        without_evidence=not evidence,
        **{f"type_{kind}": 1},
    )
    item = {
        "sample_id": f"lme-{question['question_id']}",
        "category_names": CATEGORY_NAMES,
        "conversation": conversation,
        "qa": [
            {
                "question": question["question"],
                "answer": question["answer"],
                "evidence": evidence,
                "category": CATEGORY_OF[kind],
                "question_type": kind,
                "question_date": question.get("question_date", ""),
                "answer_session_ids": question.get("answer_session_ids", []),
            }
        ],
    }
    return item, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a LongMemEval file (a JSON list of questions)")
    parser.add_argument("out", type=Path, help="the LoCoMo-shaped JSON file to write")
    parser.add_argument("--questions", type=int, help="only the first N questions by id")
    args = parser.parse_args()
    questions = sorted(json.loads(args.source.read_text(encoding="utf-8")),
                       key=lambda q: q["question_id"])  # fmt: skip
    if args.questions is not None:
        if args.questions < 1:
            parser.error("--questions must be positive")
        questions = questions[: args.questions]
    items, total = [], Counter()
    for question in questions:
        item, counts = convert(question)
        items.append(item)
        longest = max(total["longest_turn_chars"], counts.pop("longest_turn_chars"))
        total.update(counts)
        total["longest_turn_chars"] = longest
    args.out.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    for key, value in sorted(total.items()):
        print(f"{key:<36} {value:>8,}")


if __name__ == "__main__":
    main()
