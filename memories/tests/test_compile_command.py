import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.operations import memory_remember

RENEWAL = (
    "Zephyr Logistics renews its support contract every March; the renewal decides "
    "next year's budget."
)


def run(*args):
    out, err = StringIO(), StringIO()
    call_command("compile", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_compile_prints_the_workspace_file(alice, bob):
    memory_remember(agent=alice.agent, text=RENEWAL, stare_scores={"s": 0.9, "t": 0.4})
    memory_remember(agent=bob.agent, text="Bob's private note.")

    out, _ = run("--workspace", "acme", "--as-of", "2100-01-01T00:00:00Z")

    assert out.startswith("# Memory: acme\n\nAs of 2100-01-01T00:00:00Z: 2 memories in, 0 cut")
    assert f"- ●○——— {RENEWAL}\n" in out and "- ————— Bob's private note.\n" in out


def test_compile_as_an_agent_sees_its_scopes_only(alice, bob):
    memory_remember(agent=alice.agent, text=RENEWAL)
    memory_remember(agent=bob.agent, text="Bob's private note.")

    # One instant for both: the file's header says when it was compiled, to the second.
    when = ("--as-of", "2100-01-01T00:00:00Z")
    by_name, _ = run("--workspace", "acme", "--agent", "alice", "--display-mode", "off", *when)
    by_token, _ = run("--token", alice.token, "--display-mode", "off", *when)

    assert by_name == by_token
    assert f"- {RENEWAL}\n" in by_name and "Bob" not in by_name


def test_compile_writes_the_file_atomically(alice, tmp_path):
    memory_remember(agent=alice.agent, text=RENEWAL)
    target = tmp_path / "MEMORY.md"
    target.write_text("the previous file\n")

    out, err = run("--workspace", "acme", "--out", str(target), "--as-of", "2100-01-01T00:00:00Z")

    assert out == ""
    assert "MEMORY.md: 1 in, 0 cut" in err
    assert RENEWAL in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]  # no temporary left
    again, _ = run("--workspace", "acme", "--as-of", "2100-01-01T00:00:00Z")
    assert target.read_text() == again


def test_compile_json(alice):
    memory_remember(agent=alice.agent, text=RENEWAL)

    body = json.loads(run("--workspace", "acme", "--json", "--budget", "300")[0])

    assert body["budget"] == 300 and body["included_count"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "0"], "budget: must be between 200 and"),
        (["--budget", "10000000"], "budget: must be between 200 and"),
        (["--display-mode", "loud"], 'display_mode: "loud" is not one of'),
        (["--decay", "sometimes"], 'decay: "sometimes" is not one of'),
        (["--as-of", "yesterday"], "as_of: must be an ISO 8601 timestamp"),
    ],
)
def test_bad_options_are_command_errors_and_nothing_is_written(alice, tmp_path, args, message):
    target = tmp_path / "MEMORY.md"
    with pytest.raises(CommandError, match=message):
        run("--workspace", "acme", "--out", str(target), *args)
    assert not target.exists()


def test_unknown_workspace_agent_or_directory(alice, tmp_path):
    with pytest.raises(CommandError, match="no workspace 'nope'"):
        run("--workspace", "nope")
    with pytest.raises(CommandError, match="no active agent 'zed'"):
        run("--workspace", "acme", "--agent", "zed")
    with pytest.raises(CommandError, match="no directory"):
        run("--workspace", "acme", "--out", str(tmp_path / "missing" / "MEMORY.md"))
    with pytest.raises(CommandError, match="say whose file"):
        run()


def test_out_keeps_the_old_files_permissions_and_refuses_a_directory(alice, tmp_path):
    target = tmp_path / "MEMORY.md"
    target.write_text("old\n")
    target.chmod(0o640)

    run("--workspace", "acme", "--out", str(target))

    assert target.stat().st_mode & 0o777 == 0o640
    with pytest.raises(CommandError, match="is a directory"):
        run("--workspace", "acme", "--out", str(tmp_path))


def test_out_creates_a_new_file_readable_as_the_umask_allows(alice, tmp_path):
    import os

    target = tmp_path / "MEMORY.md"
    umask = os.umask(0o022)
    try:
        run("--workspace", "acme", "--out", str(target))
    finally:
        os.umask(umask)

    assert target.stat().st_mode & 0o777 == 0o644
