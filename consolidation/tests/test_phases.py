"""The phases after dedupe and threads: divergence (when on), rescore (the bundled scorer where
dimensions are empty, never over a writer's score), compile (each agent's file kept and served
to that agent only)."""

import pytest

from consolidation.models import CompiledSnapshot
from consolidation.services import consolidation_execute, consolidation_start
from memories import services
from memories.errors import Forbidden
from memories.models import Divergence, Memory, SourceRecord
from memories.operations import memory_remember


def run(workspace, phases, **options):
    done = consolidation_execute(
        consolidation_start(workspace=workspace, trigger="command", phases=phases, **options)
    )
    assert done.status == "done", done.error
    return done


def test_rescore_fills_empty_dimensions_and_leaves_the_writers(alice, settings):
    settings.MM_STARE_AUTO_SKIP_DIMS = "STARE"  # the scorer skipped at write time
    bare = memory_remember(agent=alice.agent, text="We decided to move the launch to May.").memory
    given = memory_remember(
        agent=alice.agent, text="Dana owns the Zephyr account.", stare_scores={"s": 0.2}
    ).memory
    assert bare.s_score is None and given.s_score == 0.2
    settings.MM_STARE_AUTO_SKIP_DIMS = None  # the calibrated dimensions again
    dry = run(alice.agent.workspace, ["rescore"], dry_run=True)
    assert dry.counts["rescore"] == {"memories": 2, "scored": 2}
    assert Memory.objects.get(pk=bare.pk).s_score is None
    done = run(alice.agent.workspace, ["rescore"])
    assert done.counts["rescore"]["scored"] == 2
    bare.refresh_from_db()
    given.refresh_from_db()
    assert bare.s_score is not None and bare.s_origin == "scorer"
    assert (given.s_score, given.s_origin) == (0.2, "writer")
    assert given.t_score is not None and given.t_origin == "scorer"
    event = bare.provenance.get(action="rescore")
    assert event.new_values["s_score"] == bare.s_score and "bundled scorer" in event.reason
    assert run(alice.agent.workspace, ["rescore"]).counts["rescore"]["memories"] == 0


def test_compile_keeps_each_agents_file_for_that_agent_only(alice, bob, charlie):
    memory_remember(agent=alice.agent, text="Alice's own note: call Dana on Monday.")
    memory_remember(agent=alice.agent, text="Zephyr renews in March.", scope="team:accounts")
    missing = alice.client.get("/api/v1/compiled/kept")
    assert missing.status_code == 404 and "compile phase" in missing.json()["detail"]
    done = run(alice.agent.workspace, ["compile"])
    assert done.counts["compile"]["agents"] == 2
    mine = alice.client.get("/api/v1/compiled/kept")
    assert mine.status_code == 200 and mine["Content-Type"].startswith("text/markdown")
    assert "call Dana on Monday" in mine.content.decode()
    theirs = bob.client.get("/api/v1/compiled/kept").content.decode()
    assert "Zephyr renews in March" in theirs and "call Dana" not in theirs
    assert charlie.client.get("/api/v1/compiled/kept").status_code == 404
    assert CompiledSnapshot.objects.count() == 2


def test_divergence_runs_as_a_phase_when_switched_on(alice, bob, settings):
    with pytest.raises(Forbidden) as caught:  # switched off: a 403 over REST
        consolidation_start(workspace=alice.agent.workspace, trigger="api", phases=["divergence"])
    assert "MM_DIVERGENCE" in caught.value.message
    settings.MM_DIVERGENCE = True
    memory_remember(
        agent=alice.agent,
        text="Zephyr renews its support contract in March.",
        scope="team:accounts",
        entities=[{"name": "Zephyr", "type": "organization"}],
    )
    memory_remember(
        agent=bob.agent,
        text="Zephyr renews its support contract in June.",
        scope="team:accounts",
        entities=[{"name": "Zephyr", "type": "organization"}],
    )
    done = run(alice.agent.workspace, ["divergence"])
    assert done.counts["divergence"]["flagged"] == 1 and Divergence.objects.count() == 1


def test_link_relates_close_memories_of_a_session_or_an_entity_and_extracts_the_rest(
    alice, settings
):
    from django.db.models import Q

    from consolidation.models import PhaseWatermark
    from memories.models import Link

    first = memory_remember(
        agent=alice.agent, text="The Lisbon office opens at eight.", session="s1"
    ).memory
    second = memory_remember(
        agent=alice.agent, text="The Lisbon office opens at eight on weekdays.", session="s1"
    ).memory
    elsewhere = memory_remember(
        agent=alice.agent, text="The Lisbon office opens at eight, mostly.", session="s2"
    ).memory  # close, but another session and no entity in common with the others
    Link.objects.filter(source=elsewhere, target_entity__isnull=False).delete()
    settings.MM_ENTITY_EXTRACTION = False
    unextracted = memory_remember(agent=alice.agent, text="Priya met Dana in Porto.").memory
    assert unextracted.relations_version is None
    settings.MM_ENTITY_EXTRACTION = True

    done = run(alice.agent.workspace, ["link"])
    counts = done.counts["link"]
    assert counts["extracted"] == 1 and counts["entity_links"] >= 1
    unextracted.refresh_from_db()
    assert unextracted.relations_version is not None
    related = Link.objects.filter(kind="relates_to")
    assert {(r.source_id, r.target_memory_id) for r in related} >= {(second.pk, first.pk)}
    assert not related.filter(Q(source=elsewhere) | Q(target_memory=elsewhere)).exists()
    link = related.get(source=second, target_memory=first)
    assert link.origin == "consolidation" and link.evidence["why"] == "session"
    assert link.evidence["similarity"] >= settings.MM_RELATES_MIN_SIMILARITY
    assert PhaseWatermark.objects.get(phase="link").through_id == unextracted.pk

    # Idempotent; a relation a curator removed is not made again.
    link.removed_at = link.created_at
    link.save(update_fields=["removed_at"])
    PhaseWatermark.objects.filter(phase="link").update(through_id=0)
    again = run(alice.agent.workspace, ["link"])
    assert not Link.objects.filter(
        kind="relates_to", source=second, target_memory=first, removed_at__isnull=True
    ).exists()
    assert again.counts["link"]["extracted"] == 0


def test_asymmetry_counts_the_records_again_and_rescores_only_the_engine_s_a(alice):
    agent = alice.agent
    doubtful = [
        memory_remember(agent=agent, text=f"Rumour {n}: the office moves.", source="rumours").memory
        for n in range(5)
    ]
    given = memory_remember(agent=agent, text="Mine.", stare_scores={"a": 0.2}).memory
    for memory in doubtful:
        services.memory_feedback(agent=agent, mem_id=memory.mem_id, action="demote", reason="wrong")
    before = {m.pk: Memory.objects.get(pk=m.pk).a_score for m in doubtful}
    dry = run(alice.agent.workspace, ["asymmetry"], dry_run=True)
    assert dry.counts["asymmetry"]["memories"] == 5  # the writer's A is not the engine's
    assert dry.counts["asymmetry"]["rescored"] == 5
    assert {m.pk: Memory.objects.get(pk=m.pk).a_score for m in doubtful} == before
    assert not SourceRecord.objects.filter(workspace=agent.workspace).exists()
    done = run(alice.agent.workspace, ["asymmetry"])
    assert done.counts["asymmetry"]["rescored"] == 5
    after = {m.pk: Memory.objects.get(pk=m.pk).a_score for m in doubtful}
    # Before the refresh no record was kept (no score); after it, the source's record of five
    # wrong memories puts each below the workspace's prior.
    assert set(before.values()) == {None}
    assert all(after[pk] is not None and after[pk] < 0.5 for pk in before)
    record = SourceRecord.objects.get(
        workspace=agent.workspace, kind="writer", key="rumours", topic=""
    )
    assert (record.memories, record.right, record.wrong) == (5, 0, 5)
    given.refresh_from_db()
    assert (given.a_score, given.a_origin) == (0.2, "writer")
    assert run(alice.agent.workspace, ["asymmetry"]).counts["asymmetry"]["rescored"] == 0


def test_a_worker_run_rests_after_each_step_as_long_as_it_worked_outside_transactions(
    alice, settings, monkeypatch
):
    from consolidation import rest, tasks

    now = [100.0]
    slept: list[float] = []
    steps = rest.Rest(2.0, clock=lambda: now[0], sleep=slept.append)
    monkeypatch.setattr(rest, "in_transaction", lambda: False)
    now[0] += 0.25
    steps("link", 200, 600)
    now[0] += 30  # a long step rests at most MAX_REST_SECONDS
    steps("link", 400, 600)
    monkeypatch.setattr(rest, "in_transaction", lambda: True)
    now[0] += 1
    steps("link", 600, 600)  # inside a transaction: no rest (it would hold its locks)
    assert slept == [pytest.approx(0.5), rest.MAX_REST_SECONDS]
    rest.Rest(0, sleep=slept.append)("link", 1, 1)  # 0: none
    assert len(slept) == 2

    # The worker's job: its run rests MM_WORKER_REST times as long as each step worked.
    settings.MM_WORKER_REST = 0.5
    monkeypatch.setattr(rest, "in_transaction", lambda: False)  # the test's own transaction
    monkeypatch.setattr(rest.time, "sleep", slept.append)
    memory_remember(agent=alice.agent, text="Dana owns the Zephyr account.")
    queued = consolidation_start(workspace=alice.agent.workspace, trigger="command")
    assert tasks.run_consolidation(queued.pk)["status"] == "done"
    assert len(slept) > 2 and all(0 <= s <= rest.MAX_REST_SECONDS for s in slept[2:])
