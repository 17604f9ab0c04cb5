"""``meaning-memory backup`` / ``restore`` on an embedded database of its own, with real
processes: a backup taken while the engine serves, a restore refused while it serves, then
done, the replaced database kept; a damaged or foreign backup refused, nothing changed."""

import json

import pytest

from meaning_memory.tests.served import engine_command, served

pytestmark = pytest.mark.slow


def run(engine, *args, token=None, check=True):
    env = {**engine.env, **({"MM_TOKEN": token} if token else {})}
    return engine_command(env, *args, check=check)


def texts(engine):
    out = run(engine, "export", "--workspace", "acme").stdout
    return sorted(
        record["text"] for record in map(json.loads, out.splitlines()) if record["type"] == "memory"
    )


def test_a_backup_taken_while_serving_restores_in_place_keeping_what_it_replaced(tmp_path):
    engine = served(tmp_path / "data")
    run(engine, "migrate", "-v0")
    token = run(engine, "createagent", "--workspace", "acme", "--name", "alice", "-v0").stdout
    token = token.strip()
    run(engine, "remember", "Zephyr renews in March.", token=token)

    engine.start()
    try:
        made = run(engine, "backup", str(tmp_path / "b1"))
        assert "1 memories in 1 workspaces" in made.stderr
        assert (
            engine.call("POST", "/api/v1/memories", token, {"text": "Later: June."}).status == 201
        )
        refused = run(engine, "restore", str(tmp_path / "b1"), check=False)
        assert refused.returncode == 1
        assert "other connection(s) to database 'meaning_memory'" in refused.stderr
        assert "stop them, then restore" in refused.stderr
    finally:
        engine.stop()
    assert texts(engine) == ["Later: June.", "Zephyr renews in March."]

    manifest = json.loads((tmp_path / "b1" / "manifest.json").read_text())
    assert manifest["format"] == "meaning-memory-backup" and manifest["server_version"]
    assert manifest["counts"]["memories_memory"] == 1
    assert "0026_restorable_trigger" in manifest["migrations"]["memories"]

    restored = run(engine, "restore", str(tmp_path / "b1"))
    assert "is now database 'meaning_memory': 1 memories" in restored.stderr
    assert "kept as 'meaning_memory_before_restore_" in restored.stderr
    assert texts(engine) == ["Zephyr renews in March."]
    # The restored engine works: its agent's token, search, writes.
    run(engine, "remember", "After the restore.", token=token)
    found = run(engine, "search", "Zephyr renewal", "--json", token=token).stdout
    assert "Zephyr renews in March." in found

    again = run(engine, "restore", str(tmp_path / "b1"), "--drop-previous")
    assert "kept as" not in again.stderr
    assert texts(engine) == ["Zephyr renews in March."]


def test_a_damaged_or_foreign_backup_is_refused_and_nothing_changes(tmp_path):
    engine = served(tmp_path / "data")
    run(engine, "migrate", "-v0")
    token = run(engine, "createagent", "--workspace", "acme", "--name", "alice", "-v0").stdout
    run(engine, "remember", "Kept as it is.", token=token.strip())
    run(engine, "backup", str(tmp_path / "b1"))

    refused = run(engine, "backup", str(tmp_path / "b1"), check=False)
    assert "exists and is not an empty directory" in refused.stderr

    dump = tmp_path / "b1" / "database.dump"
    data = bytearray(dump.read_bytes())
    data[len(data) // 2] ^= 0xFF
    dump.write_bytes(bytes(data))
    refused = run(engine, "restore", str(tmp_path / "b1"), check=False)
    assert refused.returncode == 1 and "size or sha256 differ" in refused.stderr

    (tmp_path / "empty").mkdir()
    refused = run(engine, "restore", str(tmp_path / "empty"), check=False)
    assert "holds no manifest.json: not a backup" in refused.stderr

    newer = tmp_path / "b2"
    run(engine, "backup", str(newer))
    manifest = json.loads((newer / "manifest.json").read_text())
    manifest["migrations"]["memories"].append("9999_from_the_future")
    (newer / "manifest.json").write_text(json.dumps(manifest))
    refused = run(engine, "restore", str(newer), check=False)
    assert "made by a newer version of the engine" in refused.stderr
    assert "memories.9999_from_the_future" in refused.stderr

    assert texts(engine) == ["Kept as it is."]
