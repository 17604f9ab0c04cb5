"""Erasure marker scan: a marker written in awkward text (double spaces, new lines, tabs,
combining accents, emoji, leading white space) into memories of two agents sharing a scope and
into the names of their entities, copied by every phase that copies text (a consolidation run
with all its phases: dedupe, links, supersession, threads, divergence, scores, the kept
compiled files; feedback), then erased over REST as an agent would. After the worker's purge no
text, JSON or character column of any table holds it (the tables are listed by the database,
so a new table is covered the day it is made), no kept compiled file shows it, and after a
full purge no file of the database's data directory (the write-ahead log apart) holds it."""

import os
from io import StringIO

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.core.management import call_command
from django.db import connection

from consolidation.models import CompiledSnapshot, SupersessionProposal
from consolidation.services import consolidation_execute, consolidation_start
from consolidation.tasks import purge_erased as purge_consolidation
from memories.models import Divergence, Entity, Memory, ProvenanceEvent, Thread
from memories.operations import memory_remember
from memories.services import memory_feedback
from memories.tasks import purge_erased

SHARED = "team:accounts"
#: The marker: no other test writes it. It is looked for without regard to case, so a copy
#: lower-cased by a normaliser (entity keys, word counts, rule values) is found too.
MARKER = "Vexqorbiel"
ZEPHYR = {"name": "Zephyr", "type": "organization"}

#: A double space and a new line within the first 40 characters (the compiled file collapses
#: white space), a tab, a combining accent, emoji, and leading white space.
ALICE_TEXT = (
    f"  {MARKER}  vault\n\tcode café\u0301 🦩 is kept  in the harbour safe.\n"
    f"Ask {MARKER.lower()} before the audit."
)
BOB_TEXT = f"\tZephyr billing is now owned by {MARKER}.\n  Ask  them first 🙂 ñ\u0303."


def remember(actor, text, **fields):
    return memory_remember(agent=actor.agent, text=text, scope=SHARED, **fields).memory


def columns_with(needle: str) -> dict[str, int]:
    """Every text, character, JSON, array or text-search column of every table of the public
    schema, as the database lists them, with how many rows of it hold ``needle`` (any case)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.table_name, c.column_name
            FROM information_schema.columns c
            JOIN information_schema.tables t
              ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
              AND (c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb',
                                   'tsvector', 'ARRAY', 'USER-DEFINED'))
            ORDER BY 1, 2
            """
        )
        columns = cursor.fetchall()
        found = {}
        for table, column in columns:
            name, col = connection.ops.quote_name(table), connection.ops.quote_name(column)
            cursor.execute(
                f"SELECT count(*) FROM {name} WHERE {col}::text ILIKE %s", [f"%{needle}%"]
            )
            (count,) = cursor.fetchone()
            if count:
                found[f"{table}.{column}"] = count
    assert len(columns) > 50  # the scan did list the tables
    return found


def data_files_with(*needles: bytes) -> list[str] | None:
    """The files of the database's data directory, the write-ahead log apart, that hold one
    of ``needles``, after a checkpoint wrote every page out; None when this process may not
    read the directory (the server runs as another user)."""
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
        cursor.execute("SHOW data_directory")
        (directory,) = cursor.fetchone()
    if not os.access(directory, os.R_OK | os.X_OK):
        return None
    hits = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if os.path.join(root, d) != os.path.join(directory, "pg_wal")]
        for name in files:
            path = os.path.join(root, name)
            if not os.path.isfile(path):  # the server's socket
                continue
            try:
                with open(path, "rb") as data:
                    content = data.read()
            except (FileNotFoundError, PermissionError):  # a file gone meanwhile; a lock file
                continue
            if any(needle in content for needle in needles):
                hits.append(os.path.relpath(path, directory))
    return sorted(hits)


@pytest.mark.django_db(transaction=True)
def test_an_erased_marker_is_in_no_column_no_kept_file_and_no_data_file(
    alice, bob, settings, django_user_model
):
    settings.MM_OPEN_THREADS = True
    settings.MM_DIVERGENCE = True
    workspace = alice.agent.workspace
    # Around alice's: the memory after it carries it in its episode; a thread holds them.
    remember(alice, "We met the pottery studio owner at the harbour.", session="s",
             thread="harbour", memory_type="episodic")  # fmt: skip
    alices = remember(
        alice,
        ALICE_TEXT,
        session="s",
        thread="harbour",
        memory_type="episodic",
        source=f"{MARKER.lower()}-feed",
        metadata={"note": f"{MARKER}\tin  metadata"},
        entities=[{"name": f"{MARKER}  Holdings", "type": "customer"}, ZEPHYR],
    )
    remember(alice, "The pottery studio owner will call back about the harbour.", session="s",
             thread="harbour", memory_type="episodic")  # fmt: skip
    # Bob restates a slot he filled, saying it changed (the supersede phase applies it, quoting
    # both values in the older memory's history) that alice filled too (a proposal, and a
    # divergence).
    remember(bob, "Zephyr billing is owned by Ravi.", entities=[ZEPHYR])
    remember(alice, "Zephyr billing is owned by Dana.", entities=[ZEPHYR])
    bobs = remember(
        bob, BOB_TEXT, entities=[ZEPHYR, {"name": f"{MARKER} Kiln 🦩", "type": "product"}]
    )
    memory_feedback(agent=alice.agent, mem_id=alices.mem_id, action="pin", reason="vault")
    memory_feedback(agent=bob.agent, mem_id=bobs.mem_id, action="important", reason="billing")

    run = consolidation_execute(consolidation_start(workspace=workspace, trigger="command"))
    assert run.status == "done", run.error
    assert {"supersede", "threads", "divergence", "compile"} <= set(run.phases)
    # Every copy the test means to see erased is there before.
    assert SupersessionProposal.objects.filter(new_values__contains=[MARKER.lower()]).exists()
    assert Divergence.objects.exists() and Thread.objects.exists()
    assert CompiledSnapshot.objects.filter(markdown__icontains=MARKER).count() == 2
    for actor in (alice, bob):
        assert MARKER.lower() in actor.client.get("/api/v1/compiled/kept").text.lower()
    # The admin's log names what a curator changed as it read then.
    admin = django_user_model.objects.create_user("curator")
    for row in [
        *Entity.objects.filter(name__icontains=MARKER),
        Thread.objects.get(members__memory=alices),
    ]:
        LogEntry.objects.log_actions(admin.pk, [row], CHANGE, single_object=True)
    needles = {MARKER.encode(), MARKER.lower().encode(), MARKER.upper().encode()}
    assert data_files_with(*needles) != []  # the file scan finds it (or cannot read: None)
    before = columns_with(MARKER)
    assert "memories_provenanceevent.reason" in before  # the older memory's supersession
    assert "memories_memory.episode_text" in before
    assert "django_admin_log.object_repr" in before

    for actor, memory in ((alice, alices), (bob, bobs)):
        answer = actor.client.post(
            f"/api/v1/memories/{memory.mem_id}/erase", {"reason": "asked"}, format="json"
        )
        assert answer.status_code == 200, answer.content
    purge_erased(workspace.pk)
    purge_consolidation(workspace.pk)

    assert columns_with(MARKER) == {}
    for actor in (alice, bob):
        kept = actor.client.get("/api/v1/compiled/kept")
        assert kept.status_code in (200, 404)
        assert MARKER.lower() not in kept.content.decode().lower()
    # What the erasure leaves: the memories not erased, their history, a tombstone each.
    assert Memory.objects.count() == 4
    assert ProvenanceEvent.objects.filter(action="erase").count() == 2

    out = StringIO()
    call_command("purge", "--full", stdout=out)
    assert "tables rewritten" in out.getvalue()
    left = data_files_with(*needles)
    if left is None:
        pytest.skip(
            "the database's data directory is not readable by this test's user (the server "
            "runs as another): its files were not scanned; every table's columns were"
        )
    assert left == []
