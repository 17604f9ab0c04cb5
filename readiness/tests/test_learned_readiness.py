"""The readiness report's ``S learned`` row: its gated check measures the learned ranking's gain
on the conversations its model was not fitted on, from a file of any LoCoMo shape."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from readiness.models import EvaluationRun, Evidence
from readiness.report import readiness_report


def conversation_file(path, sample_id="own-1"):
    """A small LoCoMo-shaped conversation of our own: two sessions, three questions."""
    session_1 = [
        ("Ana", "Hi Ben! I started a pottery class yesterday, it was so calming."),
        ("Ben", "That sounds great, Ana. What did you make?"),
        ("Ana", "A small blue bowl for my sister."),
        ("Ben", "I went hiking on Mount Rainier last weekend with my dog Pixel."),
    ]
    session_2 = [
        ("Ana", "Hey Ben, the pottery studio is having a show next month."),
        ("Ben", "Nice! Pixel hurt his paw two weeks ago, so no hikes for now."),
        ("Ana", "Oh no, I hope Pixel gets better soon."),
        ("Ben", "Thanks. I am reading about trail safety meanwhile."),
    ]

    def turns(lines, session):
        return [
            {"speaker": speaker, "dia_id": f"D{session}:{n}", "text": text}
            for n, (speaker, text) in enumerate(lines, 1)
        ]

    item = {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns(session_1, 1),
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": turns(session_2, 2),
        },
        "qa": [
            {
                "question": "When did Ana start a pottery class?",
                "evidence": ["D1:1"],
                "category": 2,
            },
            {"question": "What did Ana make?", "evidence": ["D1:3"], "category": 4},
            {
                "question": "What has happened with Ben's dog Pixel?",
                "evidence": ["D1:4", "D2:2"],
                "category": 1,
            },
        ],
    }
    path.write_text(json.dumps([item]))
    return path


@pytest.fixture
def gated_only(monkeypatch):
    from readiness.checks import runner

    monkeypatch.setattr(runner, "SYNTHETIC", {})  # the gated checks alone


def test_the_gain_is_measured_on_a_conversation_the_model_was_not_fitted_on(
    db, tmp_path, gated_only
):
    path = conversation_file(tmp_path / "ours.json")
    call_command("stare-eval", "--locomo", str(path), stdout=StringIO())
    run = Evidence.objects.get(check_id="s.learned.locomo_gain")
    detail = run.detail
    assert run.kind == "gated-eval" and run.dataset == "ours.json"
    assert detail["measured_on"] == ["own-1"]
    assert detail["questions"] == 3 and set(detail["gain_by_category"]) == {"1", "2", "4"}
    assert run.value == pytest.approx(detail["recall_learned"] - detail["recall_formula"], abs=1e-3)
    assert 0 <= detail["recall_learned"] <= 1 and 0 <= detail["recall_formula"] <= 1
    assert run.passed == (run.value >= 0.01)
    row = {r.capability.key: r for r in readiness_report()}["S/learned"]
    assert row.deployment == "customer-default"
    core = Evidence.objects.get(check_id="s.core.locomo_recall").detail
    assert core["learned_ranking"] is True and core["learned_fitted_on"] == 0
    # Another dataset's conversations were not given: that check says what it needs.
    assert (
        EvaluationRun.objects.get()
        .not_run["s.learned.held_out_gain"]
        .startswith("needs --held-out-conversations FILE")
    )


def test_a_conversation_the_model_was_fitted_on_is_left_out_and_said_so(
    db, tmp_path, gated_only, settings
):
    """A conversation under the name of one the shipped model was fitted on (one that says what
    those say under another name: ``test_readiness``, with the dev file)."""
    from memories.search.learned import shipped_model

    fitted = shipped_model().fitted_on
    assert fitted["fit_on"] and len(fitted["fit_on_turns"]) > 1000
    path = conversation_file(tmp_path / "renamed.json", sample_id=fitted["fit_on"][0])
    out = StringIO()
    call_command("stare-eval", "--locomo", str(path), stdout=out)
    assert not Evidence.objects.filter(check_id="s.learned.locomo_gain").exists()
    said = "s.learned.locomo_gain: not run: the learned ranking's model was fitted on every"
    assert said in out.getvalue()
    assert "s.learned.locomo_gain" in EvaluationRun.objects.get().not_run
    # Switched off, the row says so.
    settings.MM_SEARCH_LEARNED = False
    row = {r.capability.key: r for r in readiness_report()}["S/learned"]
    assert row.deployment == "off (switched off)"


def test_held_out_conversations_measure_the_gain_alone_beside_a_fitted_locomo_run(
    db, tmp_path, gated_only
):
    """The learned ranking's evidence from other conversations than --locomo's (which its
    model was fitted on): only ``s.learned.held_out_gain`` runs on them, with their file's
    name; the LoCoMo checks keep theirs, and the run does not call the learned check "not
    run"."""
    from memories.search.learned import shipped_model

    fitted = shipped_model().fitted_on["fit_on"][0]
    dev = conversation_file(tmp_path / "dev.json", sample_id=fitted)
    held = conversation_file(tmp_path / "held.json", sample_id="elsewhere-1")
    out = StringIO()
    call_command(
        "stare-eval", "--locomo", str(dev), "--held-out-conversations", str(held), stdout=out
    )
    learned = Evidence.objects.get(check_id="s.learned.held_out_gain")
    assert learned.dataset == "held.json" and learned.detail["measured_on"] == ["elsewhere-1"]
    assert learned.detail["questions"] == 3 and learned.detail["conversations"] == 1
    assert Evidence.objects.get(check_id="s.core.locomo_recall").dataset == "dev.json"
    # Nothing else ran on the held-out file.
    assert set(Evidence.objects.filter(dataset="held.json").values_list("check_id", flat=True)) == {
        "s.learned.held_out_gain"
    }
    run = EvaluationRun.objects.get()
    assert "s.learned.held_out_gain" not in run.not_run
    # The dev file's conversation was fitted on: its own learned check says so.
    assert "s.learned.locomo_gain" in run.not_run
    assert run.datasets["held_out"]["file"] == "held.json"


def test_held_out_conversations_refuse_a_missing_file_and_a_test_split(db, tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--held-out-conversations: no file"):
        call_command("stare-eval", "--held-out-conversations", str(tmp_path / "none.json"))
    kept = tmp_path / "test"
    kept.mkdir()
    path = conversation_file(kept / "conversations.json")
    with pytest.raises(CommandError, match="test split is kept apart"):
        call_command("stare-eval", "--held-out-conversations", str(path))
    assert not EvaluationRun.objects.exists()
