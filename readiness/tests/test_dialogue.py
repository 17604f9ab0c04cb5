"""Corrections in conversation, as the readiness check reads dialogues of the Schema-Guided
Dialogue shape: pairs labelled by the dialogue state, the engine's verdicts, and a ``test``
split never read."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from readiness.dialogue import files, measure, read


def turn(text, *informs):
    return {
        "speaker": "USER",
        "utterance": text,
        "frames": [
            {"service": s, "actions": [{"act": "INFORM", "slot": k, "values": [v]}]}
            for s, k, v in informs
        ],
    }


DIALOGUES = [
    {
        "dialogue_id": "1",
        "turns": [
            turn("Will you call a cab for 1 person?", ("Cabs", "riders", "1")),
            {"speaker": "SYSTEM", "utterance": "Where to?", "frames": []},
            turn("No, make that 2 people.", ("Cabs", "riders", "2")),
            turn("And play some jazz.", ("Music", "genre", "jazz")),
        ],
    }
]


def write(folder, dialogues=DIALOGUES):
    folder.mkdir(parents=True)
    (folder / "dialogues_001.json").write_text(json.dumps(dialogues))
    return folder


def test_pairs_are_labelled_by_the_state_and_judged_as_a_session(tmp_path):
    pairs = read(write(tmp_path / "dev"))
    by_texts = {(p.older[:8], p.newer[:8]): p for p in pairs}
    correction = by_texts[("Will you", "No, make")]
    assert correction.positive and correction.verdict == "apply"
    other = by_texts[("No, make", "And play")]
    assert not other.positive and other.verdict == ""
    figures = measure(pairs)
    assert figures["pairs"] == 3 and figures["positives"] == 1
    assert figures["applied_precision"] == 1.0 and figures["caught_recall"] == 1.0


def test_the_test_split_is_never_read(tmp_path):
    folder = write(tmp_path / "test")
    with pytest.raises(ValueError, match="kept apart"):
        files(folder)
    with pytest.raises(ValueError, match="kept apart"):
        files(folder / "dialogues_001.json")
    with pytest.raises(CommandError, match="kept apart"):
        call_command("stare-eval", "--dialogue", str(folder), stdout=StringIO())


def test_a_file_of_another_shape_names_itself(tmp_path):
    folder = tmp_path / "dev"
    folder.mkdir()
    (folder / "dialogues_001.json").write_text(json.dumps([{"turns": [{"speaker": "USER"}]}]))
    with pytest.raises(ValueError, match="dialogues_001.json: not the Schema-Guided"):
        read(folder)
    with pytest.raises(ValueError, match="no dialogues"):
        files(tmp_path)


def test_stare_eval_records_corrections_and_divergence_on_dialogues(db, tmp_path):
    from readiness.models import Evidence

    more = [
        {
            "dialogue_id": "2",
            "turns": [
                turn("Book a table for 4 at 7 pm.", ("Restaurants", "party_size", "4")),
                turn("Actually make it 6 people.", ("Restaurants", "party_size", "6")),
                turn("Also find a hotel in Paris.", ("Hotels", "location", "Paris")),
            ],
        }
    ]
    folder = write(tmp_path / "dev", DIALOGUES + more)
    call_command("stare-eval", "--dialogue", str(folder), stdout=StringIO())
    recorded = {e.check_id: e for e in Evidence.objects.filter(dataset="dev")}
    assert {
        "t.corrections.dialogue_precision",
        "t.corrections.dialogue_recall",
        "r.divergence.dialogue_auc",
    } <= set(recorded)
    divergence = recorded["r.divergence.dialogue_auc"]
    assert divergence.detail["positives"] == 2 and divergence.detail["pairs"] > 2
    assert 0 <= divergence.value <= 1 and "slot_rule_auc" in divergence.detail
    assert divergence.passed == (divergence.value >= 0.70)
