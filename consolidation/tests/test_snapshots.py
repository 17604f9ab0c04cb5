"""Kept compiled files: each records the memories it may quote, and an erasure drops exactly
the files that list an erased memory (and those kept before files recorded any)."""

from django.utils import timezone

from consolidation.models import CompiledSnapshot
from consolidation.services import consolidation_execute, consolidation_start
from consolidation.snapshots import snapshot_keep
from memories.compile import compiled_memory_file
from memories.operations import memory_remember
from memories.selectors.reader import Reader
from memories.services import memory_erase


def compile_phase(workspace):
    run = consolidation_execute(
        consolidation_start(workspace=workspace, trigger="command", phases=["compile"])
    )
    assert run.status == "done", run.error
    return run


def test_a_kept_file_lists_its_memories_and_only_files_listing_an_erased_one_go(alice, bob):
    own = memory_remember(agent=alice.agent, text="Alice's  own\nnote.").memory
    shared = memory_remember(agent=bob.agent, text="A shared note.", scope="team:accounts").memory
    compile_phase(alice.agent.workspace)
    kept = {s.agent_id: s for s in CompiledSnapshot.objects.all()}
    assert sorted(kept[alice.agent.pk].memory_ids) == sorted([own.pk, shared.pk])
    assert kept[bob.agent.pk].memory_ids == [shared.pk]

    memory_erase(agent=alice.agent, mem_id=own.mem_id, reason="asked")
    # Bob's file never listed alice's private memory: it stays.
    assert list(CompiledSnapshot.objects.values_list("agent_id", flat=True)) == [bob.agent.pk]
    assert bob.client.get("/api/v1/compiled/kept").status_code == 200
    assert alice.client.get("/api/v1/compiled/kept").status_code == 404


def test_files_kept_before_ids_were_recorded_go_at_the_first_erasure_in_their_workspace(
    alice, charlie
):
    note = memory_remember(agent=alice.agent, text="A note.").memory
    for actor in (alice, charlie):
        CompiledSnapshot.objects.create(
            workspace=actor.agent.workspace,
            agent=actor.agent,
            markdown="# Memory",
            tokens=3,
            as_of=timezone.now(),
        )
    memory_erase(agent=alice.agent, mem_id=note.mem_id, reason="asked")
    assert list(CompiledSnapshot.objects.values_list("agent_id", flat=True)) == [charlie.agent.pk]


def test_a_file_compiled_before_an_erasure_is_not_kept_after_it(alice):
    note = memory_remember(agent=alice.agent, text="Soon  erased.").memory
    run = compile_phase(alice.agent.workspace)
    CompiledSnapshot.objects.all().delete()
    compiled = compiled_memory_file(Reader.of_agent(alice.agent))
    assert compiled.memory_pks == [note.pk]
    memory_erase(agent=alice.agent, mem_id=note.mem_id, reason="asked")
    assert snapshot_keep(agent=alice.agent, compiled=compiled, run=run) is False
    assert not CompiledSnapshot.objects.exists()
