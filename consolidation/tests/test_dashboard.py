"""Consolidation's dashboard pages: runs (a curator's "run now", 409 as a form error), merges
(undo with a reason), supersession proposals (accept or reject with a reason, once), threads and
a thread's time line. Viewers read and cannot act; another workspace's rows are 404s."""

from django_q.models import OrmQ

from consolidation.models import ConsolidationRun, SupersessionProposal
from consolidation.services import consolidation_execute, consolidation_start
from consolidation.tests.test_threads import POTTERY, story
from consolidation.tests.test_threads import run as run_threads
from memories.models import Memory, Thread
from memories.operations import memory_remember
from memories.tests.test_dashboard import member

LINE = "Dana prefers invoices by email."
ZEPHYR = [{"name": "Zephyr", "type": "organization"}]


def consolidate(workspace, phases=None):
    return consolidation_execute(
        consolidation_start(workspace=workspace, trigger="command", phases=phases)
    )


def test_a_curator_runs_consolidation_now_and_reads_its_counts(client, alice):
    member(client, "carol", alice.agent.workspace, "curator")
    memory_remember(agent=alice.agent, text=LINE)
    memory_remember(agent=alice.agent, text=LINE, source="wiki")
    empty = client.get("/w/acme/consolidation").content.decode()
    assert "No consolidation run yet" in empty and "Run now" in empty
    response = client.post("/w/acme/consolidation", {})
    assert response.status_code == 302
    run = ConsolidationRun.objects.get()
    assert (run.trigger, run.status, run.started_by_user.username) == ("api", "queued", "carol")
    assert OrmQ.objects.count() == 1
    busy = client.post("/w/acme/consolidation", {}).content.decode()
    assert run.run_id in busy and "queued" in busy  # the 409 as a message
    consolidation_execute(run)
    page = client.get("/w/acme/consolidation").content.decode()
    assert run.run_id in page and "merged 1" in page and "carol" in page


def test_viewers_read_and_cannot_start_runs_and_other_workspaces_are_404(client, alice, charlie):
    member(client, "vic", alice.agent.workspace, "viewer")
    page = client.get("/w/acme/consolidation").content.decode()
    assert "Run now" not in page
    assert client.post("/w/acme/consolidation", {}).status_code == 403
    assert not ConsolidationRun.objects.exists()
    for path in ("consolidation", "consolidation/merges", "consolidation/proposals", "threads"):
        assert client.get(f"/w/globex/{path}").status_code == 404


def test_a_curator_undoes_a_merge_with_a_reason(client, alice, charlie):
    member(client, "carol", alice.agent.workspace, "curator")
    kept = memory_remember(agent=alice.agent, text=LINE, significance=0.6).memory
    merged = memory_remember(agent=alice.agent, text=LINE, source="wiki", significance=0.4).memory
    consolidate(alice.agent.workspace, ["dedupe"])
    page = client.get("/w/acme/consolidation/merges").content.decode()
    assert merged.mem_id in page and kept.mem_id in page and "exact duplicate" in page
    refused = client.post("/w/acme/consolidation/merges", {"mem_id": merged.mem_id, "reason": ""})
    assert refused.status_code == 200 and "A reason is required" in refused.content.decode()
    assert Memory.objects.get(pk=merged.pk).status == "merged"
    theirs = memory_remember(agent=charlie.agent, text="Globex renews in May.").memory
    for mem_id in (theirs.mem_id, "ffffffffffffffff"):
        response = client.post("/w/acme/consolidation/merges", {"mem_id": mem_id, "reason": "x"})
        assert response.status_code == 404
    done = client.post(
        "/w/acme/consolidation/merges", {"mem_id": merged.mem_id, "reason": "the wiki differs"}
    )
    assert done.status_code == 302
    assert Memory.objects.get(pk=merged.pk).status == "active"
    assert (
        f'id="merge-{merged.mem_id}"'
        not in client.get("/w/acme/consolidation/merges").content.decode()
    )


def test_a_curator_decides_a_proposal_once_and_a_viewer_cannot(client, alice, bob, charlie):
    older = memory_remember(
        agent=alice.agent,
        text="Zephyr is on the gold plan.",
        scope="team:accounts",
        entities=ZEPHYR,
    ).memory
    memory_remember(
        agent=bob.agent,
        text="Zephyr moved to the silver plan.",
        scope="team:accounts",
        entities=ZEPHYR,
    )
    consolidate(alice.agent.workspace, ["supersede"])
    proposal = SupersessionProposal.objects.get()
    member(client, "vic", alice.agent.workspace, "viewer")
    assert 'value="accept"' not in client.get("/w/acme/consolidation/proposals").content.decode()
    body = {"proposal": proposal.proposal_id, "decision": "accept", "reason": "x"}
    assert client.post("/w/acme/consolidation/proposals", body).status_code == 403
    client.logout()
    member(client, "carol", alice.agent.workspace, "curator")
    page = client.get("/w/acme/consolidation/proposals").content.decode()
    assert proposal.proposal_id in page and "gold → silver" in page
    bogus = {**body, "proposal": "nosuchproposal"}
    assert client.post("/w/acme/consolidation/proposals", bogus).status_code == 404
    body["reason"] = "Bob has the new contract"
    assert client.post("/w/acme/consolidation/proposals", body).status_code == 302
    older.refresh_from_db()
    assert older.status == "superseded"
    again = client.post("/w/acme/consolidation/proposals", {**body, "decision": "reject"})
    assert "accepted already" in again.content.decode()
    accepted = client.get("/w/acme/consolidation/proposals", {"status": "accepted"})
    assert "Bob has the new contract" in accepted.content.decode()
    assert client.get("/w/acme/consolidation/proposals", {"status": "x"}).status_code == 404
    assert client.get("/w/globex/consolidation/proposals").status_code == 404


def test_threads_and_a_threads_time_line(client, alice, charlie, settings):
    settings.MM_OPEN_THREADS = True
    story(alice.agent)
    run_threads(alice.agent.workspace)
    member(client, "vic", alice.agent.workspace, "viewer")
    thread = Thread.objects.get(members__memory__text=POTTERY[0])
    listed = client.get("/w/acme/threads").content.decode()
    assert thread.title in listed and "pilot" in listed
    page = client.get(f"/w/acme/threads/{thread.thread_id}").content.decode()
    positions = [page.index(text) for text in POTTERY]
    assert positions == sorted(positions)  # oldest first
    assert "Still open: plan (will)" in page and 'class="cue"' in page
    assert client.get("/w/acme/threads", {"status": "resolved"}).status_code == 200
    assert client.get("/w/acme/threads/nosuchthread").status_code == 404
    assert client.get(f"/w/globex/threads/{thread.thread_id}").status_code == 404
    settings.MM_OPEN_THREADS = False
    assert "Open Threads is off" in client.get("/w/acme/threads").content.decode()


def test_a_curator_undoes_an_applied_supersession_and_a_viewer_cannot(client, alice, charlie):
    older = memory_remember(
        agent=alice.agent,
        text="Zephyr Logistics renews its contract in March.",
        scope="team:accounts",
    ).memory
    memory_remember(
        agent=alice.agent,
        text="Zephyr Logistics has moved its contract renewal from March to June.",
        scope="team:accounts",
    )
    consolidate(alice.agent.workspace, ["supersede"])
    proposal = SupersessionProposal.objects.get()
    assert proposal.status == "applied"
    member(client, "vic", alice.agent.workspace, "viewer")
    page = client.get("/w/acme/consolidation/proposals", {"status": "applied"}).content.decode()
    assert "explicit change (from … to)" in page and "March → June" in page
    assert 'value="undo"' not in page
    body = {"proposal": proposal.proposal_id, "decision": "undo", "reason": "a draft"}
    assert client.post("/w/acme/consolidation/proposals", body).status_code == 403
    client.logout()
    member(client, "carol", alice.agent.workspace, "curator")
    page = client.get("/w/acme/consolidation/proposals", {"status": "applied"}).content.decode()
    assert 'value="undo"' in page
    blank = client.post("/w/acme/consolidation/proposals", {**body, "reason": "  "})
    assert blank.status_code == 200 and "was not changed" in blank.content.decode()
    older.refresh_from_db()
    assert older.status == "superseded"
    assert client.post("/w/acme/consolidation/proposals", body).status_code == 302
    older.refresh_from_db()
    assert older.status == "active" and older.valid_until is None
    undone = client.get("/w/acme/consolidation/proposals", {"status": "undone"}).content.decode()
    assert proposal.proposal_id in undone and "a draft" in undone
    again = client.post("/w/acme/consolidation/proposals", body).content.decode()
    assert "nothing to undo" in again
    # Another workspace's member cannot reach it: its page is a 404, so is the proposal.
    client.logout()
    member(client, "gus", charlie.agent.workspace, "curator")
    assert client.post("/w/globex/consolidation/proposals", body).status_code == 404
    assert client.post("/w/acme/consolidation/proposals", body).status_code == 404
