"""LongMemEval's questions in LoCoMo's shape (``benchmarks/longmemeval.py``), on questions of our
own making: each question a conversation of its sessions in date order, its evidence the turns
marked as holding the answer, a question with none left out by the reader, and the table
headed with LongMemEval's question types."""

import importlib.util
import json
import re
import subprocess
import sys

from django.conf import settings

from readiness.locomo import read

BENCHMARKS = settings.BASE_DIR / "benchmarks"


def module(name: str):
    sys.path.insert(0, str(BENCHMARKS))  # the benchmarks import their ``common``
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return loaded
    finally:
        sys.path.remove(str(BENCHMARKS))


def question(question_id="q1", kind="multi-session", marked=True):
    later = [
        {"role": "user", "content": "I moved to Lyon in  May 🎉", "has_answer": marked},
        {"role": "assistant", "content": "Congratulations on the move!", "has_answer": False},
    ]
    earlier = [
        {"role": "user", "content": "My sister lives in Lyon.", "has_answer": marked},
        {"role": "assistant", "content": "Nice."},
    ]
    return {
        "question_id": question_id,
        "question_type": kind,
        "question": "Where did I move, and who lives there?",
        "answer": "Lyon, your sister",
        "question_date": "2023/06/01 (Thu) 10:00",
        # Out of date order, as a haystack may be.
        "haystack_dates": ["2023/05/30 (Tue) 21:05", "2023/05/02 (Tue) 08:15"],
        "haystack_session_ids": ["answer_b", "answer_a"],
        "haystack_sessions": [later, earlier],
        "answer_session_ids": ["answer_a", "answer_b"],
    }


def test_a_question_becomes_a_conversation_the_reader_takes(tmp_path):
    converter = module("longmemeval")
    item, counts = converter.convert(question())
    conversation = item["conversation"]
    assert conversation["session_1_date_time"] == "8:15 am on 2 May, 2023"
    assert conversation["session_2_date_time"] == "9:05 pm on 30 May, 2023"
    assert conversation["session_2"][0]["text"] == "I moved to Lyon in  May 🎉"
    assert conversation["session_2"][0]["speaker"] == "User"
    assert item["qa"][0]["evidence"] == ["D1:1", "D2:1"]
    assert item["qa"][0]["category"] == 1
    assert counts["evidence_turns"] == 2 and counts["turns"] == 4
    assert counts["longest_turn_chars"] == len("Congratulations on the move!")

    path = tmp_path / "lme.json"
    abstains, _ = converter.convert(question("q2_abs", "single-session-user", marked=False))
    path.write_text(json.dumps([item, abstains], ensure_ascii=False), encoding="utf-8")
    first, second = read(path)
    assert [t.dia_id for t in first.turns] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert first.turns[0].written_at < first.turns[2].written_at
    assert first.questions[0].evidence == {"D1:1", "D2:1"}
    assert second.questions == []  # nothing marks the answer: no evidence, left out
    names = module("locomo").category_names(path)
    assert names[1] == "multi-session" and names[6] == "single-session-preference"


def test_the_command_writes_the_first_questions_by_id(tmp_path):
    source, out = tmp_path / "source.json", tmp_path / "out.json"
    source.write_text(json.dumps([question("q9"), question("q3"), question("q5")]))
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "longmemeval.py"), str(source), str(out),
         "--questions", "2"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert [item["sample_id"] for item in json.loads(out.read_text())] == ["lme-q3", "lme-q5"]
    assert "questions" in done.stdout and "evidence_turns" in done.stdout
    assert re.search(r"^longest_turn_chars +28$", done.stdout, re.MULTILINE)
    refused = subprocess.run(
        [sys.executable, str(BENCHMARKS / "longmemeval.py"), str(source), str(out),
         "--questions", "0"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert refused.returncode == 2 and "--questions must be positive" in refused.stderr
