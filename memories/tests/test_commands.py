import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.models import Agent, Memory, Scope


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_createagent_prints_the_token_once_and_stores_its_hash(db):
    out, err = run(
        "createagent", "--workspace", "acme", "--name", "scribe", "--scope", "team:accounts"
    )
    token = out.strip()
    assert token.startswith("mm_") and "shown once" in err
    agent = Agent.objects.get(name="scribe")
    assert agent.token_hash != token and token not in agent.token_hash
    assert agent.private_scope.name == "private:scribe"
    assert list(agent.scopes.values_list("name", flat=True)) == ["team:accounts"]
    with pytest.raises(CommandError, match="already exists"):
        run("createagent", "--workspace", "acme", "--name", "scribe")
    assert Scope.objects.filter(name="private:scribe").count() == 1


def test_remember_and_search_commands(db):
    token = run("createagent", "--workspace", "acme", "--name", "scribe")[0].strip()
    out, _ = run(
        "remember",
        "Zephyr renews in March.",
        "--token",
        token,
        "--category",
        "commitment",
        "--stare-scores",
        '{"s": 0.9}',
    )
    stored = json.loads(out)
    assert stored["category"] == "commitment" and stored["stare_scores"]["s"] == 0.9
    run("remember", "Unrelated note about lunch.", "--workspace", "acme", "--agent", "scribe")
    table, _ = run("search", "When does Zephyr renew?", "--token", token, "--min-s-score", "0.5")
    lines = table.splitlines()
    assert lines[0] == "| # | mem_id | Sig | Eligible | Category | Date | Text |"
    assert len(lines) == 3 and stored["mem_id"] in lines[2]
    as_json, _ = run("search", "lunch", "--token", token, "--json")
    assert json.loads(as_json)["results"][0]["text"] == "Unrelated note about lunch."


def test_commands_report_bad_input_by_field(db):
    token = run("createagent", "--workspace", "acme", "--name", "scribe")[0].strip()
    with pytest.raises(CommandError, match=r"significance: must be between 0 and 1"):
        run("remember", "x", "--token", token, "--significance", "2")
    with pytest.raises(CommandError, match="--token: invalid"):
        run("remember", "x", "--token", "mm_nope")
    with pytest.raises(CommandError, match="say who acts"):
        run("search", "x")
    assert Memory.objects.count() == 0
