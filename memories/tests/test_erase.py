"""Erase: a memory removed for good, over REST, MCP, the CLI and the dashboard. After the purge
its words are in no row of any table and in no file of the database (tables, indexes,
statistics); a tombstone says which memory, who, when and why, never what it said."""

import glob
import os
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from io import StringIO

import numpy as np
import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import CommandError, call_command
from django.db import connection

from consolidation.models import CompiledSnapshot
from consolidation.services import consolidation_execute, consolidation_start
from consolidation.tasks import purge_erased as purge_consolidation
from memories.models import Entity, Link, Memory, ProvenanceEvent, Thread
from memories.operations import memory_remember
from memories.services import memory_feedback
from memories.tasks import purge_erased

SHARED = "team:accounts"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
#: Words no other test writes: found anywhere afterwards, they came from the erased memory.
SECRET = "Quixotic zanzibarquux flamingo vault code 4417-zanzibarquux."
WORD = b"zanzibarquux"


def write(agent, text, minutes, **fields):
    """An episodic memory (what Open Threads reads)."""
    return memory_remember(
        agent=agent,
        text=text,
        created_at=START + timedelta(minutes=minutes),
        memory_type="episodic",
        **fields,
    ).memory


@pytest.fixture
def story(alice, bob, settings, transactional_db):
    """The secret between two memories of its session (the one after it carries it in its
    episode), named entity, linked, pinned, in a thread, in the admin's log and in a kept
    compiled file."""
    settings.MM_OPEN_THREADS = True
    before = write(
        alice.agent,
        "We met the pottery studio owner at the harbour.",
        0,
        session="s",
        scope=SHARED,
        thread="harbour",
    )
    secret = write(
        alice.agent,
        SECRET,
        1,
        session="s",
        entities=[{"name": "Zanzibarquux Holdings", "type": "customer"}],
        metadata={"note": "zanzibarquux in metadata"},
        scope=SHARED,
        thread="harbour",
    )
    after = write(alice.agent, "The pottery studio owner will call back.", 2, session="s",
                  scope=SHARED, thread="harbour")  # fmt: skip
    other = write(bob.agent, "Pottery studio owner asked about the harbour kiln.", 3, scope=SHARED)
    memory_remember(
        agent=bob.agent,
        text="The harbour kiln order depends on the studio.",
        links=[{"type": "supports", "to": secret.mem_id}],
        scope=SHARED,
    )
    memory_feedback(agent=alice.agent, mem_id=secret.mem_id, action="pin", reason="vault")
    LogEntry.objects.create(
        user=member_user(),
        content_type=ContentType.objects.get_for_model(Memory),
        object_id=str(secret.pk),
        object_repr=str(secret),
        action_flag=CHANGE,
        change_message="[]",
    )
    for phases in (["threads"], ["compile"]):
        consolidation_execute(
            consolidation_start(workspace=alice.agent.workspace, trigger="command", phases=phases)
        )
    assert SECRET in Memory.objects.get(pk=after.pk).episode_text
    assert Thread.objects.filter(members__memory=secret).exists()
    assert CompiledSnapshot.objects.filter(markdown__contains="zanzibarquux").exists()
    return {"before": before, "secret": secret, "after": after, "other": other}


def member_user():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get_or_create(username="admin-log-user")[0]


def rows_with(word: str) -> dict[str, int]:
    """Every table of the database whose rows, read as text, hold ``word``."""
    found = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT schemaname, tablename FROM pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        for schema, table in cursor.fetchall():
            cursor.execute(
                f'SELECT count(*) FROM "{schema}"."{table}" t WHERE t::text ILIKE %s',
                [f"%{word}%"],
            )
            (count,) = cursor.fetchone()
            if count:
                found[table] = count
    return found


def files_with(*needles: bytes) -> list[str]:
    """Every relation of the database (tables, indexes, TOAST, the catalogs and their
    statistics) whose files hold one of ``needles``, after a checkpoint wrote them out."""
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
        cursor.execute("SHOW data_directory")
        (directory,) = cursor.fetchone()
        cursor.execute(
            "SELECT relname, pg_relation_filepath(oid) FROM pg_class "
            "WHERE pg_relation_filepath(oid) IS NOT NULL"
        )
        relations = cursor.fetchall()
    hits = set()
    for name, path in relations:
        base = os.path.join(directory, path)
        # Its own files only: base, base.1, base_fsm, … (not base0…, another relation's).
        own = re.compile(re.escape(os.path.basename(base)) + r"(_fsm|_vm|_init)?(\.\d+)?")
        for segment in glob.glob(base + "*"):
            if not own.fullmatch(os.path.basename(segment)):
                continue
            with open(segment, "rb") as data:
                content = data.read()
            hits.update(name for needle in needles if needle in content)
    return sorted(hits)


def test_an_erased_memory_is_nowhere_in_the_database_and_leaves_a_tombstone(alice, story):
    secret = story["secret"]
    vector = np.asarray(secret.embedding, dtype="<f4").tobytes()
    assert files_with(WORD)  # the check can find it: it is there before
    with connection.cursor() as cursor:  # as autovacuum may have: statistics that hold it
        cursor.execute("ANALYZE memories_memory")

    answer = alice.client.post(
        f"/api/v1/memories/{secret.mem_id}/erase",
        {"reason": "asked by the customer"},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["erased"] == [secret.mem_id] and body["count"] == 1
    assert body["episodes_rewritten"] == 1 and body["entities_removed"] == 1
    purge_erased(alice.agent.workspace_id)
    purge_consolidation(alice.agent.workspace_id)

    assert rows_with("zanzibarquux") == {}
    assert rows_with("flamingo vault") == {}
    # No index or statistic holds it; a table's page may keep its bytes in its free space
    # until a new row takes it ...
    left = files_with(WORD, b"4417-zanz", vector[:64])
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, relkind FROM pg_class WHERE relname = ANY(%s)", [left])
        assert {kind for _, kind in cursor.fetchall()} <= {"r", "t"}, left  # tables only
    # ... until a full purge rewrites the tables.
    out = StringIO()
    call_command("purge", "--full", stdout=out)
    assert "tables rewritten" in out.getvalue()
    assert files_with(WORD, b"4417-zanz", vector[:64]) == []

    # What held its words was mended, not dropped.
    after = Memory.objects.get(pk=story["after"].pk)
    assert after.episode_text == story["before"].text
    assert after.episode_embedding is not None
    assert not Entity.objects.filter(name__icontains="zanzibarquux").exists()
    assert not Link.objects.filter(target_memory_id=secret.pk).exists()
    assert not CompiledSnapshot.objects.exists()
    thread = Thread.objects.get(members__memory=story["after"])
    assert thread.size == 2 and thread.label == "harbour"
    assert "zanzibarquux" not in str(thread.words) + thread.title + str(thread.cues)
    # The tombstone: which, who, when, why, how chosen; never the content.
    tombstone = ProvenanceEvent.objects.get(action="erase")
    assert tombstone.memory is None and tombstone.agent == alice.agent
    assert tombstone.new_values == {
        "erased": secret.mem_id,
        "origin": secret.mem_id,
        "by": "memory",
    }
    assert tombstone.reason == "asked by the customer"
    # Erasing it again: there is nothing to erase.
    again = alice.client.post(
        f"/api/v1/memories/{secret.mem_id}/erase", {"reason": "twice"}, format="json"
    )
    assert again.status_code == 404


def reader_with_a_snapshot():
    """Another session, as a long report would be: a transaction whose snapshot sees the rows
    as they are now."""
    reader = connection.get_new_connection(connection.get_connection_params())
    reader.autocommit = True
    reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    reader.execute("SELECT 1").fetchone()  # the snapshot: another table, no lock on these
    return reader


def test_a_full_purge_waits_for_a_session_that_still_sees_the_erased_rows(alice, story):
    secret = story["secret"]
    reader = reader_with_a_snapshot()  # it began before the erasure: it sees the secret
    answer = alice.client.post(
        f"/api/v1/memories/{secret.mem_id}/erase", {"reason": "asked"}, format="json"
    )
    assert answer.status_code == 200, answer.content
    ending = threading.Timer(1.5, reader.close)  # the report ends while the purge waits
    ending.start()
    out, err = StringIO(), StringIO()
    began = time.monotonic()
    try:
        call_command("purge", "--full", "--wait", "30", stdout=out, stderr=err)
    finally:
        ending.cancel()
        reader.close()
    assert time.monotonic() - began >= 1.4  # it waited for the report ...
    assert "tables rewritten" in out.getvalue() and err.getvalue() == ""
    assert files_with(WORD, b"4417-zanz") == []  # ... and then nothing of the secret is left


def test_a_purge_that_outlives_its_wait_says_so_and_the_next_one_finishes(alice, story):
    secret = story["secret"]
    reader = reader_with_a_snapshot()
    try:
        answer = alice.client.post(
            f"/api/v1/memories/{secret.mem_id}/erase", {"reason": "asked"}, format="json"
        )
        assert answer.status_code == 200, answer.content
        err = StringIO()
        call_command("purge", "--full", "--wait", "0.2", stdout=StringIO(), stderr=err)
        assert "1 other session(s) still held a snapshot older than the purge" in err.getvalue()
        # What the open session can see had to be kept: the rewrite copied it.
        assert "memories_memory" in files_with(WORD)
    finally:
        reader.close()
    err = StringIO()
    call_command("purge", "--full", stdout=StringIO(), stderr=err)
    assert err.getvalue() == ""
    assert files_with(WORD, b"4417-zanz") == []
    for wrong in ("-1", "soon", "3601"):
        with pytest.raises(CommandError, match=f"--wait: '{wrong}' is not a number of seconds"):
            call_command("purge", "--wait", wrong)


def test_erase_refuses_without_a_reason_and_outside_what_the_agent_sees(alice, bob, charlie):
    private = memory_remember(agent=alice.agent, text="Alice's own note.").memory
    shared = memory_remember(agent=alice.agent, text="A shared note.", scope=SHARED).memory
    missing = alice.client.post(f"/api/v1/memories/{private.mem_id}/erase", {}, format="json")
    assert missing.status_code == 400
    assert missing.json()["reason"] == ["This field is required."]
    for actor, memory in ((charlie, shared), (bob, private)):  # another workspace; private
        refused = actor.client.post(
            f"/api/v1/memories/{memory.mem_id}/erase", {"reason": "x"}, format="json"
        )
        assert refused.status_code == 404
        assert refused.json() == alice.client.post(
            "/api/v1/memories/0123456789abcdef/erase", {"reason": "x"}, format="json"
        ).json() | {"detail": refused.json()["detail"]}
    assert Memory.objects.count() == 2 and not ProvenanceEvent.objects.filter(action="erase")


@pytest.mark.django_db(transaction=True)
def test_a_workspace_admin_erases_a_source_an_agent_or_a_session_by_command(alice, bob):
    for i in range(3):
        memory_remember(agent=alice.agent, text=f"Wiki line {i}.", source="wiki", scope=SHARED)
    memory_remember(agent=bob.agent, text="Bob's chat line.", session="chat-7", scope=SHARED)
    memory_remember(agent=bob.agent, text="Bob's private line.")
    out = StringIO()
    call_command("erase", "--workspace", "acme", "--source", "wiki", "--dry-run", stdout=out)
    assert "would erase 3 memories" in out.getvalue()
    assert Memory.objects.count() == 5
    with pytest.raises(CommandError, match="reason: is required"):
        call_command("erase", "--workspace", "acme", "--source", "wiki")
    call_command(
        "erase", "--workspace", "acme", "--source", "wiki", "--reason", "old wiki", stdout=out
    )
    assert "erased 3 memories" in out.getvalue()
    call_command("erase", "--workspace", "acme", "--agent", "bob", "--reason", "left", stdout=out)
    assert not Memory.objects.exists()
    tombstones = ProvenanceEvent.objects.filter(action="erase")
    assert sorted(t.new_values["by"] for t in tombstones) == ["agent"] * 2 + ["source"] * 3
    assert {t.new_values.get("source") for t in tombstones} == {"wiki", None}
    with pytest.raises(CommandError, match="value: no agent 'nobody'"):
        call_command("erase", "--workspace", "acme", "--agent", "nobody", "--reason", "x")
    with pytest.raises(CommandError, match="--workspace: no workspace 'nowhere'"):
        call_command("erase", "--workspace", "nowhere", "--session", "s", "--reason", "x")
