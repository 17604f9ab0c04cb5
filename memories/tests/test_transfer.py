"""Export and import: a workspace out as JSON Lines and back in, elsewhere, whole; twice stores
nothing new; a bad or cut file writes nothing; a stopped import goes on."""

import json
import re
import tracemalloc
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from consolidation.services import consolidation_execute, consolidation_start
from memories.errors import ValidationFailed
from memories.exchange import record_problems
from memories.models import (
    Agent,
    Divergence,
    Entity,
    Link,
    Memory,
    ProvenanceEvent,
    Thread,
    Workspace,
)
from memories.operations import memory_remember
from memories.services import agent_authenticate, memory_feedback, memory_forget
from memories.services.divergence import divergence_run
from memories.services.feedback import memory_feedback_by_user
from memories.services.transfer import import_file
from memories.tests.test_dashboard import member

SHARED = "team:accounts"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HEX16 = re.compile(r"[0-9a-f]{16}")


@pytest.fixture
def rich(alice, bob, client, settings):
    """A workspace with every kind of record: episodes, entities, a replacement, feedback by an
    agent and a curator, a forgotten memory, links, a divergence and a thread."""
    settings.MM_DIVERGENCE = True
    settings.MM_OPEN_THREADS = True

    def write(agent, text, minutes, **fields):
        return memory_remember(
            agent=agent, text=text, created_at=START + timedelta(minutes=minutes), **fields
        ).memory

    stories = [
        "I started a pottery class at the studio; we shape a bowl for the kiln.",
        "My first pottery bowl cracked in the kiln at the studio.",
        "The pottery teacher at the studio showed me how to glaze a bowl before the kiln.",
        "I will bring my glazed pottery bowl from the studio kiln to the show next week.",
    ]
    for i, text in enumerate(stories):
        write(alice.agent, text, 60 * 24 * 7 * i, session=f"s{i}", memory_type="episodic")
        write(alice.agent, f"Lunch in session {i} was soup.", 60 * 24 * 7 * i + 1, session=f"s{i}")
    march = write(
        alice.agent,
        "Zephyr renews its support contract in March.",
        10,
        scope=SHARED,
        entities=[{"name": "Zephyr", "type": "customer"}],
        idempotency_key="zephyr-1",
        metadata={"ticket": 42},
        valid_from=START,
    )
    write(
        bob.agent,
        "Zephyr renews its support contract in June.",
        11,
        scope=SHARED,
        entities=[{"name": "Zephyr", "type": "customer"}],
        links=[{"type": "supports", "to": march.mem_id}],
    )
    old = write(alice.agent, "The Acme invoice goes to Dana.", 12, scope=SHARED)
    write(
        alice.agent, "The Acme invoice goes to Ravi now.", 13, scope=SHARED, supersedes=old.mem_id
    )
    memory_feedback(agent=alice.agent, mem_id=march.mem_id, action="pin", reason="key date")
    gone = write(alice.agent, "A note to forget.", 14)
    memory_forget(agent=alice.agent, mem_id=gone.mem_id, reason="wrong")
    carol = member(client, "carol", alice.agent.workspace, "curator")
    memory_feedback_by_user(user=carol, memory_pk=old.pk, action="important", reason="billing")
    divergence_run(workspace=alice.agent.workspace)
    consolidation_execute(
        consolidation_start(workspace=alice.agent.workspace, trigger="command", phases=["threads"])
    )
    assert Divergence.objects.exists() and Thread.objects.exists()
    return alice.agent.workspace


def export(slug, path, *options):
    call_command("export", "--workspace", slug, "--output", str(path), *options)
    return [json.loads(line) for line in path.read_text().splitlines()]


def aligned(first, second, ids, path="record"):
    """The two values are the same but for ids, each id of ``first`` always standing for the
    same other id of ``second`` (recorded in ``ids``)."""
    if isinstance(first, dict):
        assert isinstance(second, dict) and first.keys() == second.keys(), path
        for key in first:
            aligned(first[key], second[key], ids, f"{path}.{key}")
    elif isinstance(first, list):
        assert isinstance(second, list) and len(first) == len(second), path
        for i, (a, b) in enumerate(zip(first, second, strict=True)):
            aligned(a, b, ids, f"{path}[{i}]")
    elif first != second:
        assert isinstance(first, str) and HEX16.fullmatch(first), (path, first, second)
        assert isinstance(second, str) and HEX16.fullmatch(second), (path, first, second)
        assert ids.setdefault(first, second) == second, path


def test_a_workspace_goes_out_and_comes_back_the_same_apart_from_ids(rich, tmp_path):
    out = export("acme", tmp_path / "acme.jsonl")
    kinds = [r["type"] for r in out]
    assert kinds[0] == "header" and kinds[-1] == "end"
    counts = out[-1]["counts"]
    assert counts["memory"] == Memory.objects.filter(workspace=rich).count() == 13
    assert {"scope", "agent", "entity", "link", "thread", "divergence"} <= counts.keys()
    assert not any("token" in json.dumps(r) for r in out if r["type"] == "agent")

    err = StringIO()
    call_command("import", str(tmp_path / "acme.jsonl"), "--workspace", "copy", stderr=err)
    assert "memory: 13 stored, 0 already there" in err.getvalue()
    assert "agents made" in err.getvalue() and "alice" in err.getvalue()

    again = export("copy", tmp_path / "copy.jsonl")
    ids: dict[str, str] = {}
    assert len(out) == len(again)
    for before, after in zip(out[1:], again[1:], strict=True):
        aligned(before, after, ids)
    # Every memory, entity, link, thread and divergence has a new id; the origin stays.
    mem_ids = {r["mem_id"] for r in out if r["type"] == "memory"}
    assert mem_ids and not mem_ids & {r["mem_id"] for r in again if r["type"] == "memory"}
    assert [r["origin"] for r in out if r["type"] == "memory"] == [
        r["origin"] for r in again if r["type"] == "memory"
    ]
    for kind, key in (("entity", "entity_id"), ("link", "link_id"), ("thread", "thread_id")):
        named = [r[key] for r in out if r["type"] == kind]
        assert named and all(ids[name] != name for name in named)
    copy = Memory.objects.get(
        workspace__slug="copy", text__startswith="Zephyr renews its support contract in M"
    )
    assert copy.pinned and copy.valid_from == START and copy.metadata == {"ticket": 42}
    assert copy.provenance.filter(action="pin").exists()
    assert (
        Memory.objects.get(workspace__slug="copy", text="A note to forget.").status == "forgotten"
    )
    replaced = Memory.objects.get(workspace__slug="copy", text="The Acme invoice goes to Dana.")
    assert replaced.superseded_by.text == "The Acme invoice goes to Ravi now."
    assert replaced.provenance.get(action="important").user.username == "carol"
    episode = Memory.objects.get(workspace__slug="copy", text="Lunch in session 1 was soup.")
    assert episode.follows.text.startswith("My first pottery") and episode.episode_text
    # Searchable there: vectors made on import, and the agents' private scopes kept apart.
    copied_alice = Agent.objects.get(workspace__slug="copy", name="alice")
    assert Memory.objects.filter(scope=copied_alice.private_scope).count() == 9


def test_importing_twice_stores_nothing_new_and_into_its_own_workspace_nothing(rich, tmp_path):
    export("acme", tmp_path / "acme.jsonl")
    first = import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    tables = (Memory, Link, Entity, ProvenanceEvent, Thread, Divergence, Agent)
    sizes = {model: model.objects.count() for model in tables}
    second = import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    assert {model: model.objects.count() for model in tables} == sizes
    assert sum(second.stored.values()) == 0
    assert second.already["memory"] == first.stored["memory"] == 13
    assert second.already["link"] == first.stored["link"]
    home = import_file(tmp_path / "acme.jsonl")  # the workspace it came from
    assert sum(home.stored.values()) == 0 and home.workspace == rich
    assert {model: model.objects.count() for model in tables} == sizes
    # A copy of the copy names the same memories: importing it back stores nothing either.
    export("copy", tmp_path / "copy.jsonl")
    back = import_file(tmp_path / "copy.jsonl", workspace_slug="acme")
    assert sum(back.stored.values()) == 0


def test_with_vectors_the_import_embeds_nothing_and_keeps_them_exactly(rich, tmp_path):
    out = export("acme", tmp_path / "acme.jsonl", "--vectors")
    assert all(r["embedding"] for r in out if r["type"] == "memory")
    result = import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    assert result.embedded == 0 and result.stored["memory"] == 13
    for text in (
        "Lunch in session 2 was soup.",
        "My first pottery bowl cracked in the kiln at the studio.",
    ):
        original, copy = (
            Memory.objects.get(workspace__slug=slug, text=text) for slug in ("acme", "copy")
        )
        assert list(original.embedding) == list(copy.embedding)
        assert (original.episode_embedding is None) == (copy.episode_embedding is None)
    again = export("copy", tmp_path / "copy.jsonl", "--vectors")
    assert [r.get("embedding") for r in out if r["type"] == "memory"] == [
        r.get("embedding") for r in again if r["type"] == "memory"
    ]


def test_an_imported_agent_gets_a_token_by_command_and_sees_its_memories(rich, tmp_path):
    export("acme", tmp_path / "acme.jsonl")
    import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    out = StringIO()
    call_command(
        "createagent",
        "--workspace",
        "copy",
        "--name",
        "alice",
        "--new-token",
        stdout=out,
        stderr=StringIO(),
    )
    agent = agent_authenticate(out.getvalue().strip())
    assert agent is not None and agent.workspace.slug == "copy"
    assert ProvenanceEvent.objects.filter(
        subject_agent=agent, reason__startswith="new token"
    ).exists()
    hits = memory_remember(agent=agent, text="A new note after the move.").memory
    assert hits.scope == agent.private_scope
    with pytest.raises(CommandError, match="no agent 'nobody'"):
        call_command("createagent", "--workspace", "copy", "--name", "nobody", "--new-token")


def test_a_bad_or_cut_file_is_refused_naming_the_line_and_nothing_is_written(rich, tmp_path):
    lines = (tmp_path / "x").parent.joinpath("acme.jsonl")
    export("acme", lines)
    text = lines.read_text().splitlines()
    before = Memory.objects.count()

    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(text[:-1]) + "\n")
    with pytest.raises(CommandError, match="no end record: it was cut short"):
        call_command("import", str(cut), "--workspace", "copy")

    bad = [json.loads(line) for line in text]
    memory = next(i for i, r in enumerate(bad) if r["type"] == "memory")
    bad[memory]["significance"] = 3
    bad[memory + 1]["category"] = "gossip"
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("\n".join(json.dumps(r) for r in bad) + "\nnot json\n")
    with pytest.raises(CommandError) as refused:
        call_command("import", str(wrong), "--workspace", "copy")
    message = str(refused.value)
    assert f"line {memory + 1} (memory): significance: must be between 0 and 1 (got 3)" in message
    assert f"line {memory + 2} (memory): category: 'gossip' is not one of" in message
    assert f"line {len(text) + 1}: not valid JSON" in message

    other = tmp_path / "other.jsonl"
    other.write_text('{"text": "a seed file, not an export"}\n')
    with pytest.raises(CommandError, match="not a meaning-memory-export file"):
        call_command("import", str(other), "--workspace", "copy")
    with pytest.raises(CommandError, match="workspace: "):
        call_command("import", str(lines), "--workspace", "not a slug")
    assert Memory.objects.count() == before
    assert not Memory.objects.filter(workspace__slug="copy").exists()


def test_an_import_stopped_halfway_goes_on_where_it_stopped(rich, tmp_path, monkeypatch):
    from memories.services import transfer
    from memories.services.transfer.writing import Importer

    export("acme", tmp_path / "acme.jsonl")
    monkeypatch.setattr(transfer, "BATCH", 4)
    real = Importer.memories
    calls = []

    def dies_on_the_third_batch(self, records):
        calls.append(len(records))
        if len(calls) == 3:
            raise RuntimeError("killed")
        return real(self, records)

    monkeypatch.setattr(Importer, "memories", dies_on_the_third_batch)
    with pytest.raises(RuntimeError):
        import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    assert Memory.objects.filter(workspace__slug="copy").count() == 8
    monkeypatch.setattr(Importer, "memories", real)
    result = import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    assert (result.already["memory"], result.stored["memory"]) == (8, 5)
    again = export("copy", tmp_path / "copy.jsonl")
    out = [json.loads(line) for line in (tmp_path / "acme.jsonl").read_text().splitlines()]
    ids: dict[str, str] = {}
    for before, after in zip(out[1:], again[1:], strict=True):
        aligned(before, after, ids)


def test_since_exports_the_later_memories_and_an_import_adds_them(rich, tmp_path):
    export("acme", tmp_path / "all.jsonl")
    import_file(tmp_path / "all.jsonl", workspace_slug="copy")
    later = memory_remember(
        agent=Agent.objects.get(workspace=rich, name="alice"),
        text="Zephyr asked for a call on Friday.",
        scope=SHARED,
    ).memory
    out = export("acme", tmp_path / "later.jsonl", "--since", later.created_at.isoformat())
    assert [r["text"] for r in out if r["type"] == "memory"] == [later.text]
    result = import_file(tmp_path / "later.jsonl", workspace_slug="copy")
    assert result.stored["memory"] == 1
    assert Memory.objects.filter(workspace__slug="copy").count() == 14
    with pytest.raises(CommandError, match="--since: 'yesterday' is not"):
        export("acme", tmp_path / "x.jsonl", "--since", "yesterday")
    with pytest.raises(CommandError, match="--workspace: no workspace 'nowhere'"):
        export("nowhere", tmp_path / "x.jsonl")


def test_an_erased_memory_is_never_brought_back_by_an_import(rich, tmp_path):
    from memories.services import memory_erase

    export("acme", tmp_path / "acme.jsonl")
    import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    copied = Memory.objects.get(workspace__slug="copy", text="The Acme invoice goes to Dana.")
    agent = Agent.objects.get(workspace__slug="copy", name="alice")
    memory_erase(agent=agent, mem_id=copied.mem_id, reason="personal data")
    again = import_file(tmp_path / "acme.jsonl", workspace_slug="copy")
    assert sum(again.stored.values()) == 0
    left_out = dict(again.skipped)
    assert left_out["memory (erased here: an import never brings one back)"] == 1
    assert left_out["entity (named only by memories erased here)"] == 1  # a name from its words
    assert left_out["link (an end erased here)"] == 1  # its mention
    assert not Memory.objects.filter(workspace__slug="copy", text=copied.text).exists()
    # At home, erased there too: the copy's export does not bring it back either.
    home = Memory.objects.get(workspace=rich, text=copied.text)
    memory_erase(agent=Agent.objects.get(workspace=rich, name="alice"), mem_id=home.mem_id,
                 reason="personal data")  # fmt: skip
    export("copy", tmp_path / "copy.jsonl")
    assert import_file(tmp_path / "copy.jsonl", workspace_slug="acme").stored["memory"] == 0
    assert not Memory.objects.filter(workspace=rich, text=copied.text).exists()


# --- A refused file writes nothing: the rules of every entry point, the whole file first -------


@pytest.fixture
def small(alice, charlie, tmp_path):
    """A workspace of three memories (one replaced, one after another in a session), exported:
    its records. Charlie's workspace, globex, holds a memory of its own."""
    first = memory_remember(
        agent=alice.agent, text="The Acme invoice goes to Dana.", scope=SHARED, session="s1"
    ).memory
    memory_remember(
        agent=alice.agent,
        text="The Acme invoice goes to Ravi now.",
        scope=SHARED,
        supersedes=first.mem_id,
        session="s1",
    )
    memory_remember(agent=alice.agent, text="Lunch is at noon.", session="s1")
    memory_remember(agent=charlie.agent, text="Globex keeps its own books.")
    return export("acme", tmp_path / "small.jsonl")


def rows() -> dict[str, int]:
    """How many rows every table holds."""
    return {model._meta.label: model._base_manager.count() for model in apps.get_models()}


def lines_of(records: list) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


def refused(tmp_path, records: list, match: str) -> str:
    """Import ``records`` (dicts, or lines as they are) into a new workspace: it must be
    refused with a message holding ``match``, and not one row written anywhere."""
    path = tmp_path / "refused.jsonl"
    path.write_text(lines_of(records))
    before = rows()
    with pytest.raises(ValidationFailed) as failure:
        import_file(path, workspace_slug="copy")
    assert match in str(failure.value), str(failure.value)
    assert rows() == before
    return str(failure.value)


def line_of(records: list[dict], kind: str, nth: int = 0) -> int:
    return [i for i, r in enumerate(records) if r["type"] == kind][nth]


def test_the_same_memory_twice_is_refused_and_not_one_row_is_written(small, tmp_path):
    twice = line_of(small, "memory")
    records = [*small[: twice + 1], small[twice], *small[twice + 1 :]]
    refused(
        tmp_path,
        records,
        f"line {twice + 2} (memory): origin: the same origin as line {twice + 1} (a memory is "
        "in a file once).",
    )
    assert not Workspace.objects.filter(slug="copy").exists()
    agent = line_of(small, "agent")
    records = [*small[: agent + 1], small[agent], *small[agent + 1 :]]
    refused(tmp_path, records, f"line {agent + 2} (agent): name: the same name as line")


def test_a_line_nested_100000_deep_is_a_clean_error_naming_the_line(small, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    refused(tmp_path, [*small[:2], deep, *small[2:]], "line 3: not valid JSON here: nested too")
    memory = dict(small[line_of(small, "memory")], metadata={"a": json.loads("[" * 40 + "]" * 40)})
    records = [memory if r["type"] == "memory" else r for r in small]
    refused(tmp_path, records, "metadata: must not be nested more than 32 levels deep.")
    with pytest.raises(CommandError, match="nested too deep"):
        (tmp_path / "deep.jsonl").write_text(lines_of([*small[:2], deep, *small[2:]]))
        call_command("import", str(tmp_path / "deep.jsonl"), "--workspace", "copy")


def test_an_over_long_text_is_refused_naming_the_field_and_the_limit(small, tmp_path, settings):
    at = line_of(small, "memory")
    records = [dict(r) for r in small]
    records[at]["text"] = "x" * (settings.MM_MAX_TEXT_CHARS + 1)
    refused(
        tmp_path,
        records,
        f"line {at + 1} (memory): text: must be at most {settings.MM_MAX_TEXT_CHARS} characters "
        f"(got {settings.MM_MAX_TEXT_CHARS + 1}).",
    )
    records[at]["text"] = "An ordinary text."
    records[at]["episode_text"] = "y" * (
        3 * settings.MM_EPISODE_WINDOW * settings.MM_MAX_TEXT_CHARS
    )
    refused(tmp_path, records, f"line {at + 1} (memory): episode_text: must be at most")


def test_a_line_longer_than_any_record_is_refused_without_being_read_whole(small, tmp_path):
    from memories.exchange import LINE_MAX_BYTES

    path = tmp_path / "huge.jsonl"
    memory = line_of(small, "memory")
    with path.open("w") as out:
        out.write(lines_of(small[:memory]))
        out.write('{"type": "memory", "text": "' + "x" * 60_000_000 + '"}\n')
        out.write(lines_of(small[memory:]))
    tracemalloc.start()
    try:
        with pytest.raises(ValidationFailed) as failure:
            import_file(path, workspace_slug="copy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"line {memory + 1}: longer than {LINE_MAX_BYTES:,} bytes" in str(failure.value)
    assert peak < 1.5 * LINE_MAX_BYTES  # never the 60 MB line
    assert not Workspace.objects.filter(slug="copy").exists()


@pytest.mark.parametrize(
    ("kind", "field"),
    [
        ("memory", "superseded_by"),
        ("memory", "follows"),
        ("link", "source"),
        ("thread", "members"),
        ("divergence", "first"),
    ],
)
def test_a_memory_named_from_another_workspace_is_refused_before_any_write(
    small, tmp_path, charlie, kind, field
):
    foreign = Memory.objects.get(workspace=charlie.agent.workspace).mem_id
    records = [dict(r) for r in small]
    end = records.pop()
    at = len(records) - 1
    if kind == "memory":
        at = line_of(records, "memory")
        records[at][field] = foreign
        records[at]["status"] = "superseded"
    else:
        origin = records[line_of(records, "memory")]["origin"]
        extra = {
            "link": {**LINK, "source": foreign, "target_memory": origin},
            "thread": {**THREAD, "members": [{"memory": foreign, "evidence": {}}]},
            "divergence": {**DIVERGENCE, "first": foreign, "second": origin},
        }[kind]
        records.append(extra)
        at = len(records) - 1
        end = {**end, "counts": {**end["counts"], kind: end["counts"].get(kind, 0) + 1}}
    message = refused(tmp_path, [*records, end], f"line {at + 1} ({kind}): {field}")
    assert f"names no memory {foreign!r} in the file or in workspace 'copy'." in message
    assert not Workspace.objects.filter(slug="copy").exists()
    # Into the workspace that holds it, the same reference is right.
    if kind == "memory":
        path = tmp_path / "there.jsonl"
        path.write_text(lines_of([*records, end]))
        import_file(path, workspace_slug="globex")


def test_times_are_stored_as_the_check_read_them_and_those_no_column_holds_are_refused(
    small, tmp_path
):
    at = line_of(small, "memory")
    records = [dict(r) for r in small]
    records[at]["observed_at"] = "0001-01-01T00:00:00+05:00"  # before the first UTC day
    refused(tmp_path, records, f"line {at + 1} (memory): observed_at: '0001-01-01T00:00:00+05")
    records[at]["observed_at"] = None
    records[at]["created_at"] = "2026-W10-1T09:00Z"  # ISO 8601 that PostgreSQL does not read
    records[at]["history"] = [
        dict(e, created_at="2026-W10-1T09:00Z") for e in records[at]["history"]
    ]
    path = tmp_path / "weeks.jsonl"
    path.write_text(lines_of(records))
    assert import_file(path, workspace_slug="copy").stored["memory"] == 3
    copy = Memory.objects.get(workspace__slug="copy", imported_from=records[at]["origin"])
    assert copy.created_at == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    assert {e.created_at for e in copy.provenance.all()} == {copy.created_at}


LATER = datetime(2999, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("text", None),  # one character more than MM_MAX_TEXT_CHARS
        ("perspective", "boss"),
        ("source_kind", "rumour"),
        ("metadata", {"deep": json.loads("[" * 40 + "]" * 40)}),
        ("idempotency_key", "k" * 201),
        ("significance", 2),
        ("sig_self", -0.5),
        ("created_at", LATER),
        ("valid_until", START),
    ],
)
def test_a_memory_field_is_refused_by_import_as_remember_refuses_it(
    small, alice, settings, field, value
):
    """The rules are remember's own: the same value, the same message."""
    value = "x" * (settings.MM_MAX_TEXT_CHARS + 1) if value is None else value
    window = {"valid_from": START + timedelta(days=1)} if field == "valid_until" else {}
    with pytest.raises(ValidationFailed) as remembered:
        memory_remember(agent=alice.agent, **{"text": "A note.", **window, field: value})
    record = dict(small[line_of(small, "memory")])
    for name, bad in {**window, field: value}.items():
        record[name] = bad.isoformat() if isinstance(bad, datetime) else bad
    assert record_problems(record)[field] == remembered.value.errors[field][0]


LINK = {
    "type": "link",
    "link_id": "00000000000000a1",
    "target_entity": None,
    "kind": "supports",
    "weight": 1.0,
    "origin": "writer",
    "agent": None,
    "user": None,
    "evidence": {},
    "created_at": "2026-03-02T09:00:00+00:00",
    "removed_at": None,
}
THREAD = {
    "type": "thread",
    "thread_id": "00000000000000b1",
    "scope": SHARED,
    "label": "",
    "title": "A thread",
    "status": "resolved",
    "first_seen": "2026-03-02T09:00:00+00:00",
    "last_seen": "2026-03-02T09:00:00+00:00",
    "size": 1,
    "sessions": 1,
    "cues": [],
    "words": {},
}
DIVERGENCE = {
    "type": "divergence",
    "divergence_id": "00000000000000c1",
    "link": None,
    "score": 0.5,
    "detector": "rules",
    "evidence": {},
    "status": "open",
    "reason": "",
    "closed_by": None,
    "closed_at": None,
    "created_at": "2026-03-02T09:00:00+00:00",
}


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**30, 10**400, -1, 2**63])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
RAW_LINES = st.sampled_from(
    [
        "[" * 50_000 + "]" * 50_000,
        '{"type": "memory", "significance": 1e999}',
        '{"type": "memory", "significance": NaN}',
        "9" * 5_000,
        '"\\ud800"',
        "{",
        "",
        "null",
    ]
) | st.binary(max_size=40).map(lambda raw: raw.decode("latin-1"))


@st.composite
def malformed(draw, records: list[dict]) -> bytes:
    """An export file made wrong in one or two ways: bytes, a cut line, a field of another
    type, a line twice or missing, a raw line of JSON no record has."""
    lines: list[dict | str] = list(records)
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["bytes", "cut", "field", "twice", "drop", "raw"]))
        if how == "bytes":
            return draw(st.binary(max_size=200))
        if how == "cut":
            line = lines_of([lines[at]]).rstrip("\n")
            lines[at] = line[: draw(st.integers(0, max(len(line) - 1, 0)))]
        elif how == "field" and isinstance(lines[at], dict):
            name = draw(st.sampled_from(sorted(lines[at])))
            lines[at] = {**lines[at], name: draw(JSON_VALUES)}
        elif how == "twice":
            lines.insert(at, lines[at])
        elif how == "drop" and len(lines) > 1:
            del lines[at]
        elif how == "raw":
            lines.insert(at, draw(RAW_LINES))
    return lines_of(lines).encode("utf-8", "surrogatepass")


def test_any_malformed_file_is_imported_or_refused_with_nothing_written(small, tmp_path):
    """Whatever the file holds, an import stores it or raises ValidationFailed having written
    nothing: never another exception, never half a file."""
    path = tmp_path / "malformed.jsonl"

    @hypothesis_settings(max_examples=60, deadline=None, derandomize=True)
    @given(data=malformed(small))
    def imported_or_refused(data: bytes) -> None:
        path.write_bytes(data)
        before = rows()
        try:
            import_file(path, workspace_slug="copy")
        except ValidationFailed as exc:
            assert exc.errors
            assert rows() == before

    imported_or_refused()


@pytest.mark.parametrize("note", ["é" * 70_000, "x" * 5_000_000], ids=["70k", "5MB"])
def test_a_link_s_evidence_of_megabytes_is_refused_naming_the_line_and_the_limit(
    small, tmp_path, note
):
    """A link's evidence is what the engine writes (a rule, a score, a note of at most 1,000
    characters): a file bringing a 5 MB one would have every traversal serve it."""
    at = line_of(small, "link")
    records = [dict(r) for r in small]
    records[at]["evidence"] = {"note": note}
    message = refused(tmp_path, records, f"line {at + 1} (link): evidence: must be at most")
    assert "65536 bytes as JSON" in message
    records[at]["evidence"] = {"note": "é" * 1_000}  # what the API allows imports as before
    path = tmp_path / "fine.jsonl"
    path.write_text(lines_of(records))
    import_file(path, workspace_slug="copy")
    assert Link.objects.filter(evidence__note="é" * 1_000).exists()
