import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory


def seed(*args):
    out, err = StringIO(), StringIO()
    call_command("seed", *map(str, args), stdout=out, stderr=err)
    return err.getvalue()


def test_seed_a_markdown_list_twice_stores_each_memory_once(alice, tmp_path):
    path = tmp_path / "team.md"
    path.write_text(
        "# What the team knows\n\n- Zephyr renews in March.\n* Dana prefers email.\n"
        "+ The office closes at 18:00.\n"
    )

    first = seed(path, "--token", alice.token, "--category", "preference", "--source", "wiki")
    again = seed(path, "--token", alice.token, "--category", "preference", "--source", "wiki")

    memories = Memory.objects.filter(workspace=alice.agent.workspace)
    assert sorted(m.text for m in memories) == [
        "Dana prefers email.",
        "The office closes at 18:00.",
        "Zephyr renews in March.",
    ]
    assert {(m.category, m.source) for m in memories} == {("preference", "wiki")}
    assert "3 memories: 3 stored, 0 already there" in first
    assert "3 memories: 0 stored, 3 already there" in again


def test_seed_json_lines_with_progress_in_batches(alice, tmp_path):
    path = tmp_path / "import.jsonl"
    rows = [{"text": f"Fact number {n} about the warehouse."} for n in range(5)]
    rows[2] |= {"category": "decision", "stare_scores": {"s": 0.3}, "session": "s1"}
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")

    err = seed(path, "--workspace", "acme", "--agent", "alice", "--batch", "2")

    progress = [line.split(" (")[0] for line in err.splitlines() if "/5 (" in line]
    assert progress == ["seed: 2/5", "seed: 4/5", "seed: 5/5"]
    assert "seed: 5/5 (5 stored, " in err
    decision = Memory.objects.get(text="Fact number 2 about the warehouse.")
    assert decision.category == "decision" and decision.s_score == 0.3
    assert decision.s_origin == "writer" and decision.session == "s1"


def test_a_malformed_line_is_reported_by_number_and_nothing_is_stored(alice, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"text": "Good one."}\n\n{"text": "Bad score", "significance": 7}\nnot json\n[1]\n'
        '{"text": ""}\n'
    )

    with pytest.raises(CommandError) as caught:
        seed(path, "--token", alice.token)

    message = str(caught.value)
    assert "nothing stored" in message
    assert "line 3: significance: must be between 0 and 1 (got 7.0)." in message
    assert "line 4: not valid JSON" in message
    assert "line 5: must be a JSON object" in message
    assert "line 6: text: must not be empty." in message
    assert not Memory.objects.exists()


def test_markdown_lines_that_are_not_list_items_are_refused(alice, tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("- fine\njust a sentence\n")
    with pytest.raises(CommandError, match="line 2: not a list item"):
        seed(path, "--token", alice.token)
    assert not Memory.objects.exists()


def test_errors_found_by_the_service_are_reported_by_line(alice, tmp_path):
    path = tmp_path / "scoped.md"
    path.write_text("- one\n\n- two\n")
    with pytest.raises(CommandError, match="line 1: scope: 'team:nope' is not a scope"):
        seed(path, "--token", alice.token, "--scope", "team:nope")


def test_bad_arguments(alice, tmp_path):
    with pytest.raises(CommandError, match="no file"):
        seed(tmp_path / "missing.md", "--token", alice.token)
    empty = tmp_path / "empty.md"
    empty.write_text("# only a heading\n")
    with pytest.raises(CommandError, match="no memories in it"):
        seed(empty, "--token", alice.token)


def test_a_store_time_refusal_names_the_line_and_what_was_stored(alice, tmp_path):
    from memories.operations import memory_remember

    old = memory_remember(agent=alice.agent, text="The office closes at 17:00.").memory
    memory_remember(agent=alice.agent, text="It closes at 18:00.", supersedes=old.mem_id)
    path = tmp_path / "keys.jsonl"
    path.write_text(
        '{"text": "One."}\n{"text": "Two."}\n'
        f'{{"text": "Three.", "supersedes": "{old.mem_id}"}}\n'
    )

    with pytest.raises(CommandError) as caught:
        seed(path, "--token", alice.token, "--batch", "2")

    message = str(caught.value)
    assert "stopped at line 3 with 2 memories stored before it" in message
    assert f"line 3: supersedes: memory {old.mem_id!r} is superseded, not active" in message
    assert (
        Memory.objects.filter(
            workspace=alice.agent.workspace, scope=alice.agent.private_scope
        ).count()
        == 4
    )


def test_seed_json_lines_carry_perspective_and_attribution(alice, tmp_path):
    path = tmp_path / "notes.jsonl"
    rows = [
        {"text": "The renewal moves to April.", "perspective": "external",
         "attributed_to": "Maria Lopez", "source_kind": "stated", "sig_external": 0.9},
        {"text": "According to Tom Baker, the office moves."},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    seed(path, "--token", alice.token)
    given, cued = Memory.objects.filter(workspace=alice.agent.workspace).order_by("id")
    assert (given.perspective, given.source_kind, given.claimant.name) == (
        "external",
        "stated",
        "Maria Lopez",
    )
    assert given.significance == 0.9 and given.sig_external == 0.9
    assert (
        cued.claimant.name == "Tom Baker" and cued.attribution["attributed_to"]["origin"] == "cue"
    )
