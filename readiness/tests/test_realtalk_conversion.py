"""REALTALK's chats in LoCoMo's shape (``benchmarks/realtalk.py``), on a chat of our own making:
sessions renumbered in order, evidence however it was typed mapped to the new ids, a photo
without words left unresolved, and the engine's own reader takes the result."""

import importlib.util
import json
import subprocess
import sys

from django.conf import settings

from readiness.locomo import read

SCRIPT = settings.BASE_DIR / "benchmarks" / "realtalk.py"


def converter():
    spec = importlib.util.spec_from_file_location("realtalk", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chat(folder, number=1):
    turn = {"date_time": "29.12.2023, 22:42:04"}
    data = {
        "name": {"speaker_1": "Emi", "speaker_2": "Noah"},
        # Out of order, with ids that do not follow the sessions (as the data has them).
        "session_2": [
            {**turn, "speaker": "Noah", "dia_id": "D3:30", "clean_text": "My café finally opened!"},
            {**turn, "speaker": "Emi", "dia_id": "D3:31", "clean_text": "Congrats  Noah 🎉"},
        ],
        "session_2_date_time": "02.01.2024, 09:05:00",
        "session_1": [
            {**turn, "speaker": "Emi", "dia_id": "D1:1", "clean_text": "I adopted a cat."},
            {**turn, "speaker": "Noah", "dia_id": "D1:3", "clean_text": "What is its name?"},
        ],
        "session_1_date_time": "29.12.2023, 22:42:04",
        "qa": [
            {
                "question": "What did Noah open?",
                "answer": "a café",
                "evidence": ["D3;30."],
                "category": 2,
            },
            {
                "question": "What happened?",
                "answer": "x",
                "evidence": ["D1:1-D1:3", "D1:2", "D:5"],
                "category": 1,
            },
        ],
    }
    path = folder / f"Chat_{number}_Emi_Noah.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_chat_becomes_a_locomo_conversation_the_reader_takes(tmp_path):
    item, counts = converter().convert(chat(tmp_path), 1)
    conversation = item["conversation"]
    assert item["sample_id"] == "realtalk-1"
    assert conversation["speaker_a"] == "Kate"  # renamed to the name the questions use
    assert conversation["session_1_date_time"] == "10:42 pm on 29 December, 2023"
    assert conversation["session_2_date_time"] == "9:05 am on 2 January, 2024"
    assert [t["dia_id"] for t in conversation["session_2"]] == ["D2:1", "D2:2"]
    assert conversation["session_2"][0]["orig_dia_id"] == "D3:30"
    first, second = item["qa"]
    assert first["evidence"] == ["D2:1"]
    # The range's turns that exist, mapped to their new ids; a turn that does not exist (each
    # time it is named) and an id with no number, unresolved.
    assert second["evidence"] == ["D1:1", "D1:2"]
    assert second["evidence_unresolved"] == ["D1:2", "D1:2", "D:5"]
    assert counts["questions"] == 2 and counts["turns"] == 4


def test_the_command_writes_a_file_the_readiness_reader_reads(tmp_path):
    source = tmp_path / "chats"
    source.mkdir()
    chat(source, 1)
    chat(source, 2)
    out = tmp_path / "realtalk.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(source), str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "total" in done.stdout
    conversations = read(out)
    assert [c.sample_id for c in conversations] == ["realtalk-1", "realtalk-2"]
    assert all(len(c.turns) == 4 for c in conversations)
    empty = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "nothing"), str(out)],
        capture_output=True,
        text=True,
    )
    assert empty.returncode == 2 and "no Chat_<N>_*.json" in empty.stderr
