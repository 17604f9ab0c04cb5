"""Consolidation's runs and its first phase, dedupe: exact duplicates within a scope merged
whatever their source, never lost (kept as ``merged``, linked, with provenance), idempotent and
resumable from a watermark; a dry run writes nothing; bad phases, a busy workspace and a failing
phase are clear errors."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from consolidation import phases
from consolidation.models import ConsolidationRun, PhaseWatermark
from consolidation.services import consolidation_execute, consolidation_start
from memories.errors import Conflict, ValidationFailed
from memories.models import Link, Memory, ProvenanceEvent
from memories.operations import memory_remember, memory_remember_bulk, memory_search
from memories.selectors.reader import Reader

LINES = [
    "Zephyr renews its support contract every March.",
    "Dana prefers invoices by email.",
    "The Lisbon office opens at eight.",
]


def consolidate(*args):
    out = StringIO()
    call_command("consolidate", "--workspace", "acme", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_file_seeded_twice_with_other_sources_is_merged_back_to_one_copy(alice):
    memory_remember_bulk(agent=alice.agent, items=[{"text": t, "source": "wiki"} for t in LINES])
    # The same lines again, by another source and written a little differently.
    again = [{"text": f"  {t.upper()} ", "significance": 0.9} for t in LINES[:2]]
    memory_remember_bulk(agent=alice.agent, items=again + [{"text": LINES[2]}])
    assert Memory.objects.filter(status="active").count() == 6

    output = consolidate()

    assert "dedupe: groups 3, merged 3" in output
    active = Memory.objects.filter(status="active")
    merged = Memory.objects.filter(status="merged")
    assert active.count() == 3 and merged.count() == 3
    # The survivor is the more significant (the second copy's first two), then the older.
    assert {m.text.strip() for m in active} == {LINES[0].upper(), LINES[1].upper(), LINES[2]}
    assert {m.source for m in active} == {"alice", "wiki"}
    for memory in merged:
        link = Link.objects.get(source=memory, kind="same_as")
        assert link.target_memory.status == "active" and link.origin == "consolidation"
        assert ProvenanceEvent.objects.filter(memory=memory, action="merge").exists()
        assert ProvenanceEvent.objects.filter(memory=link.target_memory, action="merge").exists()
    hits = memory_search(Reader.of_agent(alice.agent), query="Zephyr support contract")
    assert [h.memory.status for h in hits].count("merged") == 0


def test_the_survivor_keeps_the_pin_and_the_higher_significance(alice):
    first = memory_remember(agent=alice.agent, text="Dana prefers invoices by email.").memory
    second = memory_remember(
        agent=alice.agent, text="dana prefers invoices by email", significance=0.95, source="crm"
    ).memory
    Memory.objects.filter(pk=first.pk).update(pinned=True)
    consolidate()
    first.refresh_from_db()
    second.refresh_from_db()
    assert (second.status, second.pinned, second.significance) == ("active", True, 0.95)
    assert first.status == "merged"


def test_what_differs_or_lives_in_another_scope_is_never_merged(alice):
    memory_remember(agent=alice.agent, text="Zephyr renews in March.")
    memory_remember(agent=alice.agent, text="Zephyr renews in June.")
    memory_remember(agent=alice.agent, text="Zephyr does not renew in March.")
    memory_remember(agent=alice.agent, text="Zephyr renews in March.", scope="team:accounts")
    assert "merged 0" in consolidate()
    assert not Memory.objects.filter(status="merged").exists()


def test_runs_are_idempotent_and_go_on_from_their_watermark(alice):
    memory_remember(agent=alice.agent, text=LINES[0])
    memory_remember(agent=alice.agent, text=LINES[0], source="wiki")
    assert "merged 1" in consolidate()
    assert "groups 0, merged 0" in consolidate()  # nothing new
    newest = Memory.objects.order_by("-id").first()
    assert PhaseWatermark.objects.get(phase="dedupe").through_id == newest.pk
    later = memory_remember(agent=alice.agent, text=LINES[0] + " ", source="notes").memory
    assert "merged 1" in consolidate()
    later.refresh_from_db()
    assert later.status == "merged"


def test_a_dry_run_reports_and_writes_nothing(alice):
    memory_remember(agent=alice.agent, text=LINES[1])
    memory_remember(agent=alice.agent, text=LINES[1], source="wiki")
    events = ProvenanceEvent.objects.count()
    output = consolidate("--dry-run")
    assert "dry run" in output and "merged 1" in output
    assert not Memory.objects.filter(status="merged").exists()
    assert ProvenanceEvent.objects.count() == events
    assert not PhaseWatermark.objects.exists()
    run = ConsolidationRun.objects.get()
    assert run.dry_run and run.status == "done" and run.counts["dedupe"]["merged"] == 1


def test_bad_phases_and_a_busy_workspace_are_clear_errors(alice):
    with pytest.raises(CommandError, match="phases: unknown phase.*dedup.*the phases are: dedupe"):
        consolidate("--phases", "dedup")
    with pytest.raises(CommandError, match="no workspace 'nowhere'"):
        call_command("consolidate", "--workspace", "nowhere", stdout=StringIO())
    with pytest.raises(ValidationFailed):
        consolidation_start(workspace=alice.agent.workspace, trigger="api", phases=[" "])
    queued = consolidation_start(workspace=alice.agent.workspace, trigger="api")
    with pytest.raises(Conflict, match=queued.run_id):
        consolidation_start(workspace=alice.agent.workspace, trigger="command")
    assert ConsolidationRun.objects.count() == 1


def test_a_failing_phase_records_its_error_and_the_run_fails(alice, monkeypatch):
    def broken(context):
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(phases.PHASES, "dedupe", broken)
    with pytest.raises(CommandError, match="dedupe: RuntimeError: disk on fire"):
        consolidate()
    run = ConsolidationRun.objects.get()
    assert run.status == "failed" and "disk on fire" in run.error
    # The workspace is free again: the next run starts.
    monkeypatch.undo()
    assert (
        consolidation_execute(
            consolidation_start(workspace=alice.agent.workspace, trigger="command")
        ).status
        == "done"
    )


def test_a_run_whose_process_died_no_longer_blocks_the_workspace(alice):
    dead = consolidation_start(workspace=alice.agent.workspace, trigger="schedule")
    ConsolidationRun.objects.filter(pk=dead.pk).update(status="running")  # then killed
    fresh = consolidation_start(workspace=alice.agent.workspace, trigger="command")
    dead.refresh_from_db()
    assert dead.status == "failed" and "process ended" in dead.error
    assert consolidation_execute(fresh).status == "done"


def test_a_merge_is_undone_with_a_reason_and_the_survivor_gets_back_what_it_had(alice):
    from memories.services import memory_restore

    kept = memory_remember(agent=alice.agent, text=LINES[1], significance=0.5).memory
    duplicate = memory_remember(
        agent=alice.agent, text=LINES[1] + "!", significance=0.4, source="wiki"
    ).memory
    Memory.objects.filter(pk=duplicate.pk).update(pinned=True)
    consolidate()
    kept.refresh_from_db()
    assert (kept.significance, kept.pinned) == (0.5, True)

    with pytest.raises(ValidationFailed) as caught:
        memory_restore(merged=duplicate, reason="  ")
    assert "reason" in caught.value.errors
    with pytest.raises(ValidationFailed) as caught:
        memory_restore(merged=kept, reason="not merged")
    assert "not merged" in caught.value.errors["mem_id"][0]

    memory_restore(merged=duplicate, reason="Wiki's copy is the reference")
    duplicate.refresh_from_db()
    kept.refresh_from_db()
    assert duplicate.status == "active"
    assert (kept.significance, kept.pinned) == (0.5, False)  # back to what it was
    link = Link.objects.get(source=duplicate, kind="same_as")
    assert link.removed_at is not None  # removed, its row kept
    for memory in (duplicate, kept):
        event = ProvenanceEvent.objects.get(memory=memory, action="restore")
        assert event.reason == "Wiki's copy is the reference"
    with pytest.raises(ValidationFailed):
        memory_restore(merged=duplicate, reason="twice")  # undone twice: an error
    # A later copy of the same text touches the group again: it is merged, and the memory the
    # curator restored is not, behind their back.
    memory_remember(agent=alice.agent, text=LINES[1], significance=0.3, source="notes")
    assert "merged 1" in consolidate()
    duplicate.refresh_from_db()
    assert duplicate.status == "active"


NEAR = (
    "The Lisbon office opens at eight every weekday morning.",
    "The Lisbon office opens at eight every weekday morning, as usual.",
)


def test_a_near_duplicate_in_other_words_is_merged_with_its_evidence(alice):
    first = memory_remember(agent=alice.agent, text=NEAR[0], significance=0.6).memory
    second = memory_remember(
        agent=alice.agent, text=NEAR[1], source="wiki", significance=0.3
    ).memory
    output = consolidate()
    assert "near_merged 1" in output
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == ("active", "merged")  # the more significant stays
    link = Link.objects.get(source=second, kind="same_as")
    assert link.evidence["rule"] == "near duplicate"
    assert link.evidence["similarity"] >= 0.92 and link.evidence["overlap"] >= 0.6
    assert "near_merged 0" in consolidate()  # idempotent


def test_close_texts_whose_numbers_or_dates_differ_are_never_merged(alice):
    # Both pairs are closer than the similarity threshold (0.96 by the local embedder).
    memory_remember(agent=alice.agent, text="Zephyr renewed 500 seats for the support plan.")
    memory_remember(agent=alice.agent, text="Zephyr renewed 600 seats for the support plan.")
    memory_remember(agent=alice.agent, text="The team meets on Monday to plan the release.")
    memory_remember(agent=alice.agent, text="The team meets on Friday to plan the release.")
    run = ConsolidationRun.objects.get(run_id=_run_id(consolidate("--json")))
    counts = run.counts["dedupe"]
    assert counts["near_merged"] == 0 and counts["near_examined"] == 2
    assert counts["near_refused_numbers"] == 1 and counts["near_refused_dates"] == 1
    assert not Memory.objects.filter(status="merged").exists()


def test_near_duplicates_in_another_scope_or_restored_are_left_alone(alice):
    from memories.services import memory_restore

    memory_remember(agent=alice.agent, text=NEAR[0])
    other = memory_remember(agent=alice.agent, text=NEAR[1], scope="team:accounts").memory
    assert "near_merged 0" in consolidate()
    mine = memory_remember(agent=alice.agent, text=NEAR[1], source="wiki").memory
    assert "near_merged 1" in consolidate()
    memory_restore(merged=mine, reason="the wiki says it differently on purpose")
    memory_remember(agent=alice.agent, text=NEAR[1] + " Really.", source="notes")
    consolidate()
    mine.refresh_from_db()
    other.refresh_from_db()
    assert (mine.status, other.status) == ("active", "active")


def test_a_dry_run_finds_near_duplicates_and_writes_nothing(alice):
    memory_remember(agent=alice.agent, text=NEAR[0])
    memory_remember(agent=alice.agent, text=NEAR[1], source="wiki")
    assert "near_merged 1" in consolidate("--dry-run")
    assert not Memory.objects.filter(status="merged").exists()
    assert "near_merged 1" in consolidate()


def _run_id(output):
    import json

    return json.loads(output)["run_id"]


def test_the_entities_each_memory_mentions_keep_two_people_apart(alice, settings):
    # Below the default similarity (0.75 by the local embedder): with a lower threshold the
    # words alone would merge them; the extracted entities (Dana, Priya) refuse it.
    settings.MM_DEDUPE_MIN_SIMILARITY = 0.7
    memory_remember(agent=alice.agent, text="Dana approved the travel budget for the Lisbon trip.")
    memory_remember(agent=alice.agent, text="Priya approved the travel budget for the Lisbon trip.")
    run = ConsolidationRun.objects.get(run_id=_run_id(consolidate("--json")))
    assert run.counts["dedupe"]["near_examined"] == 1
    assert run.counts["dedupe"]["near_refused_names"] == 1
    assert run.counts["dedupe"]["near_merged"] == 0


def test_the_same_words_with_other_metadata_are_not_merged(alice):
    """Two users' or two customers' same words (a store's items, a team's notes) are two
    memories: a merge would lose one's metadata; with the same metadata they are merged."""
    for user in ("u1", "u2"):
        memory_remember(agent=alice.agent, text="Likes green tea.", metadata={"user": user})
        memory_remember(agent=alice.agent, text=NEAR[0], metadata={"user": user})
    memory_remember(agent=alice.agent, text=NEAR[1], metadata={"user": "u1"}, source="wiki")
    run = ConsolidationRun.objects.get(run_id=_run_id(consolidate("--json")))
    assert run.counts["dedupe"]["near_refused_metadata"] >= 1
    merged = Memory.objects.filter(status="merged")
    assert [m.metadata for m in merged] == [{"user": "u1"}]  # NEAR[1] into u1's NEAR[0]
    assert Memory.objects.filter(text="Likes green tea.", status="active").count() == 2
    memory_remember(agent=alice.agent, text="likes green tea", metadata={"user": "u2"})
    consolidate()
    assert Memory.objects.filter(text="likes green tea", status="merged").count() == 1
