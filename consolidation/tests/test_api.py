"""Starting consolidation over REST and MCP: a queued run (202) a worker executes, one at a
time per workspace (409 naming the run), bad phases named, another workspace's run a 404 like a
missing one."""

from django_q.models import OrmQ

from consolidation.models import ConsolidationRun
from consolidation.tasks import RUN, run_consolidation
from memories.models import Memory
from memories.operations import memory_remember


def test_an_agent_starts_a_run_a_worker_executes_it_and_reads_it_back(alice):
    for source in ("crm", "wiki"):
        memory_remember(agent=alice.agent, text="Dana prefers invoices by email.", source=source)
    started = alice.client.post("/api/v1/consolidate", {"phases": ["dedupe"]}, format="json")
    assert started.status_code == 202, started.json()
    run = started.json()
    assert (run["status"], run["trigger"], run["phases"], run["dry_run"]) == (
        "queued",
        "api",
        ["dedupe"],
        False,
    )
    [queued] = [q.task for q in OrmQ.objects.all()]
    assert (queued["func"], queued["args"]) == (RUN, (ConsolidationRun.objects.get().pk,))

    busy = alice.client.post("/api/v1/consolidate", {}, format="json")
    assert busy.status_code == 409 and run["run_id"] in busy.json()["detail"]

    assert run_consolidation(*queued["args"])["status"] == "done"
    assert run_consolidation(*queued["args"]) == {"status": "not queued"}  # once only
    read = alice.client.get(f"/api/v1/consolidate/{run['run_id']}").json()
    assert read["status"] == "done" and read["counts"]["dedupe"]["merged"] == 1
    assert Memory.objects.filter(status="merged").count() == 1


def test_bad_arguments_are_400s_naming_the_field(alice):
    for body, field in (
        ({"phases": ["dedup"]}, "phases[0]"),
        ({"phases": []}, "phases"),
        ({"phases": "dedupe"}, "phases"),
        ({"dry_run": "yes"}, "dry_run"),
        ({"force": True}, "force"),
    ):
        response = alice.client.post("/api/v1/consolidate", body, format="json")
        assert response.status_code == 400 and field in response.json(), (body, response.json())
    assert not ConsolidationRun.objects.exists()


def test_another_workspaces_run_is_a_404_like_a_missing_one(alice, charlie):
    theirs = charlie.client.post("/api/v1/consolidate", {"dry_run": True}, format="json").json()
    for run_id in (theirs["run_id"], "ffffffffffffffff"):
        response = alice.client.get(f"/api/v1/consolidate/{run_id}")
        assert response.status_code == 404
        assert response.json() == {"detail": f"no consolidation run {run_id!r}"}
    # Their run does not block alice's workspace.
    assert alice.client.post("/api/v1/consolidate", {}, format="json").status_code == 202


def test_the_mcp_tool_queues_a_run_and_names_the_one_in_progress(alice):
    from consolidation.mcp import consolidate

    first = consolidate(alice.agent, {"dry_run": True})
    assert not first.is_error and "queued" in first.content[0].text
    assert first.structured_content["dry_run"] is True
    from memories.errors import Conflict

    try:
        consolidate(alice.agent, {})
    except Conflict as exc:
        assert first.structured_content["run_id"] in exc.message
    else:
        raise AssertionError("a second run was queued while the first was")


def test_the_schedule_queues_a_run_for_each_workspace_with_unread_memories(
    alice, charlie, settings
):
    from django_q.models import Schedule

    from consolidation.services import consolidation_execute
    from consolidation.tasks import DUE, ensure_schedules, queue_due_runs

    memory_remember(agent=alice.agent, text="Dana prefers invoices by email.")
    memory_remember(agent=charlie.agent, text="Globex renews in May.")
    assert queue_due_runs() == {"queued": 2, "busy": 0}
    assert queue_due_runs() == {"queued": 0, "busy": 2}  # both still queued
    for run in ConsolidationRun.objects.all():
        consolidation_execute(run)
    assert queue_due_runs() == {"queued": 0, "busy": 0}  # nothing new
    memory_remember(agent=alice.agent, text="Zephyr renews in March.")
    assert queue_due_runs() == {"queued": 1, "busy": 0}
    assert ConsolidationRun.objects.filter(status="queued").get().workspace == alice.agent.workspace

    ensure_schedules()
    ensure_schedules()
    schedule = Schedule.objects.get(func=DUE)
    assert (schedule.schedule_type, schedule.minutes) == (Schedule.MINUTES, 60)
    settings.MM_CONSOLIDATE_EVERY = 0
    ensure_schedules()
    assert not Schedule.objects.filter(func=DUE).exists()


def test_a_bulk_import_queues_a_run_unless_switched_off(alice, settings, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    items = {"memories": [{"text": "Dana prefers invoices by email."}]}
    assert alice.client.post("/api/v1/memories/bulk", items, format="json").status_code == 201
    run = ConsolidationRun.objects.get()
    assert (run.trigger, run.status) == ("bulk", "queued")
    # Nothing new stored: nothing queued; a run queued already: none more.
    alice.client.post("/api/v1/memories/bulk", items, format="json")
    path = tmp_path / "notes.md"
    path.write_text("- Zephyr renews in March.\n")
    call_command("seed", str(path), workspace="acme", agent="alice", stderr=StringIO())
    assert ConsolidationRun.objects.count() == 1
    ConsolidationRun.objects.update(status="done")
    path.write_text("- Globex renews in May.\n")
    call_command("seed", str(path), workspace="acme", agent="alice", stderr=StringIO())
    assert ConsolidationRun.objects.filter(status="queued", trigger="bulk").count() == 1
    ConsolidationRun.objects.update(status="done")
    from memories.mcp.tools import bulk_remember

    bulk_remember(alice.agent, {"memories": [{"text": "Vic prefers calls."}]})
    assert ConsolidationRun.objects.filter(status="queued", trigger="bulk").count() == 1
    ConsolidationRun.objects.update(status="done")
    settings.MM_CONSOLIDATE_AFTER_IMPORT = False
    more = {"memories": [{"text": "Lisbon opens at eight."}]}
    assert alice.client.post("/api/v1/memories/bulk", more, format="json").status_code == 201
    assert not ConsolidationRun.objects.filter(status="queued").exists()
