"""The divergence benchmark's pair readers (``benchmarks/divergence.py``) on small files of the
two outside shapes: two user turns of one dialogue, a claim and a revision's sentence."""

import importlib.util
import json
import sys

import pytest
from django.conf import settings

from readiness.corrections import held_out


@pytest.fixture(scope="module")
def benchmark():
    folder = settings.BASE_DIR / "benchmarks"
    sys.path.insert(0, str(folder))  # it imports its neighbours: common, supersede
    try:
        spec = importlib.util.spec_from_file_location(
            "divergence_benchmark", folder / "divergence.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(folder))


def turn(utterance, *informs, speaker="USER"):
    frames = {}
    for service, slot, values in informs:
        frames.setdefault(service, []).append({"act": "INFORM", "slot": slot, "values": values})
    return {
        "speaker": speaker,
        "utterance": utterance,
        "frames": [{"service": s, "actions": a} for s, a in frames.items()],
    }


def test_two_turns_of_a_dialogue_are_a_pair_labelled_by_the_state(benchmark, tmp_path):
    dialogue = {
        "dialogue_id": "1_00000",
        "turns": [
            turn("A table for 4 at 7 pm in San José, please.",
                 ("Restaurants_1", "party_size", ["4"]), ("Restaurants_1", "time", ["19:30"])),
            turn("Which time suits you?", speaker="SYSTEM"),
            turn("Thanks!"),  # informs nothing: in no pair
            turn("Make it 8 pm.", ("Restaurants_1", "time", ["20:15"])),
            turn("Still 4 of us.", ("Restaurants_1", "party_size", ["4"])),  # a restatement
            turn("And a cab at 8 pm.", ("RideSharing_1", "time", ["20:15"])),  # another service
        ],
    }  # fmt: skip
    (tmp_path / "dialogues_001.json").write_text(json.dumps([dialogue]), encoding="utf-8")
    (tmp_path / "schema.json").write_text("[]")  # not a dialogue file: not read
    pairs = {(p.first, p.second): p.contradicts for p in benchmark.dialogue_pairs(tmp_path)}
    first = "A table for 4 at 7 pm in San José, please."
    assert pairs[(first, "Make it 8 pm.")] is True
    assert pairs[(first, "And a cab at 8 pm.")] is False
    assert pairs[("Make it 8 pm.", "Still 4 of us.")] is False  # different slots
    assert (first, "Still 4 of us.") not in pairs  # the same value said again: neither
    assert not any("Thanks!" in pair or "Which time suits you?" in pair for pair in pairs)


def test_a_test_split_or_a_file_of_another_shape_is_refused(benchmark, tmp_path):
    kept = tmp_path / "test"
    kept.mkdir()
    (kept / "dialogues_001.json").write_text("[]")
    with pytest.raises(ValueError, match="kept apart"):
        benchmark.dialogue_pairs(kept)
    other = tmp_path / "dev"
    other.mkdir()
    (other / "dialogues_002.json").write_text(json.dumps([{"turns": [{"utterance": "hi"}]}]))
    with pytest.raises(ValueError, match="dialogues_002.json"):
        benchmark.dialogue_pairs(other)
    empty = tmp_path / "train"
    empty.mkdir()
    with pytest.raises(ValueError, match="no dialogues"):
        benchmark.dialogue_pairs(empty)


def vitaminc_file(tmp_path, rows, blank=True):
    path = tmp_path / "pairs.jsonl"
    lines = [json.dumps(row) for row in rows]
    path.write_text(("\n\n" if blank else "\n").join(lines) + "\n")
    return path


def test_a_claim_and_a_revisions_sentence_are_a_pair_refuted_or_supported(benchmark, tmp_path):
    pages = {part: next(f"Page {n}" for n in range(100) if held_out(f"Page {n}") == part)
             for part in (True, False)}  # fmt: skip
    claim = "ChuChu TV has more than 25 million subscribers ."
    rows = [
        {"claim": claim, "evidence": "ChuChu TV has over 20 million subscribers .",
         "label": "REFUTES", "page": pages[True]},
        {"claim": claim, "evidence": "ChuChu TV has more than 26 million subscribers .",
         "label": "SUPPORTS", "page": pages[True]},
        {"claim": claim, "evidence": "ChuChu TV is a `` channel '' .",
         "label": "NOT ENOUGH INFO", "page": pages[True]},
        {"claim": claim, "evidence": "It earned $ 73 million .", "label": "REFUTES",
         "page": pages[False]},
    ]  # fmt: skip
    path = vitaminc_file(tmp_path, rows)
    held = benchmark.vitaminc_pairs(path)
    assert [(p.second, p.contradicts) for p in held] == [
        ("ChuChu TV has over 20 million subscribers.", True),
        ("ChuChu TV has more than 26 million subscribers.", False),
    ]
    assert held[0].first == "ChuChu TV has more than 25 million subscribers."
    every = benchmark.vitaminc_pairs(path, held_out_only=False)
    assert [p.second for p in every][-1] == "It earned $73 million."


def test_a_vitaminc_line_without_its_fields_names_the_line(benchmark, tmp_path):
    path = vitaminc_file(tmp_path, [{"claim": "a", "label": "REFUTES", "page": "P"}], blank=False)
    with pytest.raises(ValueError, match="pairs.jsonl:1: no evidence"):
        benchmark.vitaminc_pairs(path)
