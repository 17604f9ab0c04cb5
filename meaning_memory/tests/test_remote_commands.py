"""The agent commands against a served engine (issue 58): ``--url`` (or ``MM_URL``) and
``--token`` send remember, search, list, feedback, forget, compile and messages over the API,
with the same options, checks and output as on the local database; another workspace's token
sees nothing; a bad option is refused before anything is sent; an engine that cannot be
reached is one line, not a traceback."""

from __future__ import annotations

import json

import pytest

from meaning_memory.cli import main
from meaning_memory.testing import make_actor
from meaning_memory.tests.served import free_port
from memories.models import Memory


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ended:
        main(["meaning-memory", *argv])
    out, err = capsys.readouterr()
    return ended.value.code, out, err


@pytest.fixture
def agents(transactional_db):
    return make_actor("acme", "alice"), make_actor("globex", "charlie")


def test_every_agent_command_goes_over_the_api(served, agents, capsys, tmp_path):
    alice, charlie = agents
    over = ("--url", served, "--token", alice.token)
    code, out, err = cli(
        capsys, "remember", "Orion renews in March.", "--metadata", '{"customer": "orion"}',
        "--significance", "0.9", "--entities", '[{"name": "Orion", "type": "customer"}]', *over,
    )  # fmt: skip
    assert code == 0, err
    stored = json.loads(out)
    assert stored["text"] == "Orion renews in March." and stored["metadata"] == {
        "customer": "orion"
    }
    assert Memory.objects.get(mem_id=stored["mem_id"]).significance == pytest.approx(0.9)
    code, out, _ = cli(capsys, "search", "When does Orion renew?", "--json", *over)
    assert [hit["mem_id"] for hit in json.loads(out)["results"]] == [stored["mem_id"]]
    code, out, _ = cli(capsys, "search", "When does Orion renew?", *over)
    assert out.startswith("| #") and stored["mem_id"] in out
    code, out, _ = cli(capsys, "list", "--metadata", '{"customer": "orion"}', *over)
    assert out.startswith(f"{stored['mem_id']} (fact, 0.90): Orion renews in March.")
    code, out, _ = cli(capsys, "feedback", stored["mem_id"], "pin", "--reason", "key", *over)
    assert out == f"{stored['mem_id']}: pin (significance 0.90, active, pinned)\n"
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"role": "user", "name": "Priya", "content": "Orion wants June.", "at": "2026-03-01"}\n'
        "\n"
        '{"role": "assistant", "content": "Noted."}\n'
    )
    code, out, err = cli(capsys, "messages", "--session", "orion-1", "--file", str(chat), *over)
    assert code == 0, err
    assert json.loads(out)["stored"] == 2
    code, out, _ = cli(capsys, "compile", "--group-by", "entity", "--display-mode", "off", *over)
    assert "## Orion (customer)" in out and "- 2026-03-01 Priya: Orion wants June." in out
    target = tmp_path / "MEMORY.md"
    code, _, err = cli(capsys, "compile", "--out", str(target), *over)
    assert code == 0 and "Orion renews in March." in target.read_text()
    code, out, _ = cli(capsys, "forget", stored["mem_id"], "--reason", "moved", *over)
    assert out == f"{stored['mem_id']}: forgotten\n"
    # Another workspace's agent: nothing to find, nothing to forget.
    theirs = ("--url", served, "--token", charlie.token)
    code, out, _ = cli(capsys, "search", "When does Orion renew?", "--json", *theirs)
    assert json.loads(out)["results"] == []
    code, _, err = cli(capsys, "forget", stored["mem_id"], "--reason", "x", *theirs)
    assert code == 1 and "Error:" in err


def test_mm_url_in_the_environment_and_errors_as_lines(served, agents, capsys, monkeypatch):
    alice, _ = agents
    monkeypatch.setenv("MM_URL", served)
    monkeypatch.setenv("MM_TOKEN", alice.token)
    code, out, err = cli(capsys, "remember", "Kestrel pays by card.")
    assert code == 0, err and json.loads(out)["text"] == "Kestrel pays by card."
    # Refused before anything is sent, named as without --url.
    code, _, err = cli(capsys, "remember", "x", "--significance", "1.5")
    assert code == 1 and "significance: must be between 0 and 1" in err
    code, _, err = cli(capsys, "search", "x", "--metadata", '{"seats": {"gte": []}}')
    assert code == 1 and "metadata" in err and "seats.gte" in err
    # Refused by the engine (a scope the agent is not in): its answer, as lines.
    code, _, err = cli(capsys, "remember", "x", "--scope", "team:nope")
    assert code == 1 and "scope:" in err
    code, _, err = cli(capsys, "remember", "x", "--workspace", "acme", "--agent", "alice")
    assert code == 2 and "the agent is the token's" in err
    monkeypatch.setenv("MM_TOKEN", "mm_not-a-token")
    code, _, err = cli(capsys, "search", "x")
    assert code == 1 and "Error:" in err
    monkeypatch.setenv("MM_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("MM_TOKEN", alice.token)
    code, _, err = cli(capsys, "search", "anything")
    assert code == 1 and err.startswith("Error: cannot reach http://127.0.0.1:")
    assert Memory.objects.count() == 1
