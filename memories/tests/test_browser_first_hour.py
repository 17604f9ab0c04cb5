"""The dashboard's rough edges a newcomer met (issue 38), in headless Chromium: the first run's
login page, the icon every page asks for, link weights as people read them."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from meaning_memory.testing import make_actor
from memories.models import Agent
from memories.services import link_add, memory_remember
from memories.tests.test_browser import browser, log_in, shot, team  # noqa: F401 (fixtures)


def test_a_first_run_login_page_says_how_to_make_a_user(browser, served):  # noqa: F811
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{served}/accounts/login/")

    assert "meaning-memory createsuperuser" in page.inner_text("body")
    shot(page, "login-first-run")


def test_the_icon_is_served_and_a_link_weight_reads_as_a_person_writes_it(
    browser,  # noqa: F811
    served,
    team,  # noqa: F811
):
    renewal = team["renewal"]
    alice = Agent.objects.get(name="alice")
    budget = memory_remember(agent=alice, text="Next year's budget depends on the renewal.")
    link_add(agent=alice, mem_id=budget.memory.mem_id, to=renewal.mem_id, kind="supports",
             weight=1 / 3)  # fmt: skip
    page = log_in(browser, served, "carol")
    missing = []
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)

    page.goto(f"{served}/w/acme/m/{budget.memory.mem_id}")
    links = page.inner_text("body")
    shot(page, "memory-link-weight")
    icon = page.goto(f"{served}/favicon.ico")

    assert "(0.33)" in links and "0.33333" not in links  # the table, and the history (0.3333)
    assert icon.status == 200 and "svg" in icon.headers["content-type"]
    assert missing == []


def test_the_navigation_is_one_row_of_groups_on_a_laptop(browser, served, team):  # noqa: F811
    page = log_in(browser, served, "carol")  # 1200 px wide
    page.goto(f"{served}/w/acme/")

    tops = page.eval_on_selector_all(
        "header nav a", "links => links.map(a => Math.round(a.getBoundingClientRect().top))"
    )
    groups = page.eval_on_selector_all(
        "header nav [role=group]", "groups => groups.map(g => g.getAttribute('aria-label'))"
    )
    shot(page, "navigation-grouped")

    assert len(tops) == 12 and len(set(tops)) == 1  # every link on one row (no Erase: curator)
    assert groups == ["Read", "Relations", "Consolidation", "Team", "Readiness"]


def test_the_admins_memory_list_fits_1400_px_with_awkward_rows(browser, live_server):  # noqa: F811
    """Long names without spaces (a workspace's slug, a scope, a URL in a text), a precise
    significance, a superseded row: every column stays inside the list, Written whole."""
    slug = "northwind-trading-company-europe-middle-east-and-africa-division"[:64]
    scope = "team:" + "customer-success-renewals-and-escalations-" * 2
    writer = make_actor(slug, "writer", scopes=[scope])
    old = memory_remember(
        agent=writer.agent,
        text="See https://support.example.com/tickets/2026/renewals/northwind/escalation-"
        "0000000000000000000000000000000000000 for the whole thread.",
        scope=scope,
        significance=0.123457,
    ).memory
    memory_remember(
        agent=writer.agent,
        text="Ünïcode row: Zürich office renews — 契約更新は三月です。" * 3,
        scope=scope,
        supersedes=old.mem_id,
    )
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/memories/memory/")
    shot(page, "admin-memories-awkward")

    box = page.eval_on_selector("#changelist .results", "b => b.getBoundingClientRect().right")
    written = page.eval_on_selector_all(
        "#result_list td.field-written",
        "cells => cells.map(c => { const r = document.createRange(); r.selectNodeContents(c);"
        " return [c.getBoundingClientRect().right, c.scrollWidth - c.clientWidth,"
        " r.getClientRects().length]; })",
    )
    overflow = page.eval_on_selector(".results", "b => b.scrollWidth - b.clientWidth")
    assert len(written) == 2
    assert overflow <= 0, f"the list is {overflow} px wider than its box"
    for right, clipped, lines in written:
        assert right <= box and clipped <= 0 and lines == 1  # whole, on one line
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
