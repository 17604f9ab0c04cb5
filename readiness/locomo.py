"""LoCoMo (Maharana et al., ACL 2024) as the engine reads it: conversations of dialogue turns
and the questions whose evidence is some of those turns. The data is not in this repository
(see ``shared/data/README.md``); benchmarks and the readiness checks read it from its path.

Evidence ids that are malformed (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``) are matched to
a turn by their numbers when exactly one turn has those numbers; the others are dropped and
counted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

DATE_FORMAT = "%I:%M %p on %d %B, %Y"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str
    session: int
    written_at: datetime


@dataclass
class Question:
    text: str
    category: int
    evidence: set[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    evidence_dropped: int = 0
    memory_ids: dict[int, str] = field(default_factory=dict)  # memory pk -> dia_id


def read(path: Path) -> list[Conversation]:
    conversations = []
    for item in json.loads(path.read_text()):
        dialogue = item["conversation"]
        turns = []
        sessions = sorted(
            int(match.group(1))
            for key in dialogue
            if (match := re.fullmatch(r"session_(\d+)", key))
        )
        for number in sessions:
            text = dialogue[f"session_{number}_date_time"]
            date = datetime.strptime(text, DATE_FORMAT).replace(tzinfo=UTC)
            for index, turn in enumerate(dialogue[f"session_{number}"]):
                turns.append(
                    Turn(
                        dia_id=turn["dia_id"],
                        speaker=turn["speaker"],
                        text=turn["text"],
                        caption=turn.get("blip_caption", ""),
                        session=number,
                        written_at=date + timedelta(seconds=index),
                    )
                )
        conversation = Conversation(item["sample_id"], turns, [])
        known = {turn.dia_id for turn in turns}
        by_numbers = defaultdict(list)
        for dia_id in known:
            by_numbers[_numbers(dia_id)].append(dia_id)
        for qa in item["qa"]:
            evidence = set()
            for raw in qa.get("evidence", []):
                for part in re.split(r"[;,]", raw):
                    part = part.strip()
                    matches = [part] if part in known else by_numbers.get(_numbers(part), [])
                    if len(matches) == 1:
                        evidence.add(matches[0])
                    elif part:
                        conversation.evidence_dropped += 1
            if evidence:
                conversation.questions.append(Question(qa["question"], qa["category"], evidence))
        conversations.append(conversation)
    return conversations


def first_sessions(conversation: Conversation, sessions: int) -> Conversation:
    """The conversation's first ``sessions`` sessions, with the questions whose evidence is all
    in them: a smaller conversation of the same shape (the benchmarks' smoke runs)."""
    turns = [turn for turn in conversation.turns if turn.session <= sessions]
    known = {turn.dia_id for turn in turns}
    questions = [q for q in conversation.questions if q.evidence <= known]
    return Conversation(conversation.sample_id, turns, questions, conversation.evidence_dropped)


def _numbers(dia_id: str) -> tuple[int, ...]:
    return tuple(int(number) for number in re.findall(r"\d+", dia_id))


def memory_text(turn: Turn, speaker_in_text: bool) -> str:
    text = f"{turn.speaker}: {turn.text}" if speaker_in_text else turn.text
    return text + (f" [shares a photo: {turn.caption}]" if turn.caption else "")


def episodic_items(conversation: Conversation) -> list[dict]:
    """The conversation's turns as bulk-write items: episodic memories with the speaker in the
    text, the session's date, the session and the turn's id (``metadata.dia_id``)."""
    return [
        {
            "text": memory_text(turn, True),
            "memory_type": "episodic",
            "created_at": turn.written_at,
            "session": f"session_{turn.session}",
            "metadata": {"dia_id": turn.dia_id},
        }
        for turn in conversation.turns
    ]


def turn_prints(conversation: Conversation) -> list[str]:
    """A short sha256 of each turn's speaker, text and photo caption: what a conversation says,
    whatever its ``sample_id``, its turns' ids or its file, so that a model's fit set is
    recognised wherever it turns up, whole or in part."""
    return [
        hashlib.sha256(f"{turn.speaker}\0{turn.text}\0{turn.caption}".encode()).hexdigest()[:16]
        for turn in conversation.turns
    ]
