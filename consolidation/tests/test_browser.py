"""Consolidation's pages end to end in headless Chromium: a curator runs consolidation now, reads
its counts, undoes a merge, accepts a supersession proposal and follows a thread's time line.
Screenshots go to ``var/screenshots/``."""

from consolidation.models import ConsolidationRun
from consolidation.tasks import run_consolidation
from consolidation.tests.test_threads import POTTERY, ROOF, write
from meaning_memory.testing import make_actor
from memories.models import Memory
from memories.operations import memory_remember
from memories.tests.test_browser import browser, log_in, shot, team  # noqa: F401 (fixtures)

ZEPHYR = [{"name": "Zephyr Logistics", "type": "customer"}]


def test_a_curator_runs_consolidation_and_acts_on_what_it_found(
    browser,  # noqa: F811
    live_server,
    team,  # noqa: F811
    settings,
):
    settings.MM_OPEN_THREADS = True
    workspace = team["renewal"].workspace
    alice = workspace.agents.get(name="alice")
    bob = make_actor("acme", "bob", scopes=["team:accounts"]).agent
    memory_remember(agent=alice, text="Dana prefers invoices by email.", significance=0.6)
    memory_remember(agent=alice, text="dana prefers invoices by email", source="crm")
    memory_remember(
        agent=alice,
        text="Zephyr Logistics is on the gold plan.",
        scope="team:accounts",
        entities=ZEPHYR,
    )
    memory_remember(
        agent=bob,
        text="Zephyr Logistics moved to the silver plan.",
        scope="team:accounts",
        entities=ZEPHYR,
    )
    for session in range(4):
        write(alice, POTTERY[session], session, 0)
        write(alice, ROOF[session], session, 2)

    page = log_in(browser, live_server.url, "carol")
    page.click("nav >> text=Consolidation")
    page.wait_for_selector("h1:has-text('Consolidation')")
    assert "No consolidation run yet" in page.content()
    page.click("button:has-text('Run now')")
    page.wait_for_selector("text=queued.")
    run = ConsolidationRun.objects.get()
    run_consolidation(run.pk)  # what the worker does
    page.reload()
    content = page.content()
    assert "done" in content and "merged 1" in content and "proposed 1" in content
    shot(page, "consolidation-runs")

    page.goto(f"{live_server.url}/w/acme/consolidation/merges")
    section = page.locator("section.card").nth(0)
    assert "exact duplicate" in section.inner_text()
    shot(page, "consolidation-merges")
    section.locator("input[name=reason]").fill("The CRM copy is kept apart")
    section.locator("button:has-text('Undo merge')").click()
    page.wait_for_selector("text=undone")
    assert Memory.objects.filter(status="merged").count() == 0

    page.goto(f"{live_server.url}/w/acme/consolidation/proposals")
    card = page.locator("section.card").nth(0)
    assert "gold → silver" in card.inner_text()
    shot(page, "consolidation-proposals")
    card.locator("input[name=reason]").fill("Bob has the new contract")
    card.locator("button:has-text('Accept')").click()
    page.wait_for_selector("text=accepted.")
    assert Memory.objects.get(text="Zephyr Logistics is on the gold plan.").status == "superseded"

    page.click("nav >> text=Threads")
    page.wait_for_selector("h1:has-text('Threads')")
    shot(page, "threads")
    page.locator("table a").filter(has_text="ottery").first.click()
    page.wait_for_selector("ol.timeline")
    timeline = page.locator("ol.timeline").inner_text()
    assert [timeline.index(text) for text in POTTERY] == sorted(
        timeline.index(text) for text in POTTERY
    )
    shot(page, "thread")
