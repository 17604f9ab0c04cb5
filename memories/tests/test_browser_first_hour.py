"""The dashboard's rough edges a newcomer met (issue 38), in headless Chromium: the first run's
login page, the icon every page asks for, link weights as people read them."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from meaning_memory.testing import make_actor
from memories.models import Agent, Entity
from memories.operations import memory_remember
from memories.services import link_add
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


def test_on_a_phone_the_memories_page_shows_memories_before_its_filters(browser, served, team):  # noqa: F811
    page = log_in(browser, served, "carol")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{served}/w/acme/memories")

    first = page.locator("table.memories tr td a").first
    assert first.is_visible() and first.bounding_box()["y"] < 844  # on the first screen
    assert not page.locator("select[name=category]").is_visible()  # folded
    shot(page, "memories-phone")

    page.click("details.filters > summary")
    page.select_option("select[name=category]", "commitment")
    page.click("button:has-text('Filter')")
    page.wait_for_url("**category=commitment**")
    assert page.locator("details.filters summary").inner_text() == "Filters (1 set)"
    assert page.locator("select[name=category]").is_visible()  # open while one is set
    assert page.locator("table.memories tr td a").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "memories-phone-filtered")


def test_a_memory_page_says_how_significance_and_s_differ(browser, served, team):  # noqa: F811
    page = log_in(browser, served, "vic")  # a viewer reads it too
    page.goto(f"{served}/w/acme/m/{team['renewal'].mem_id}")

    page.click("text=what ranks it")
    help_ = page.locator("#significance-or-s")
    page.click("#significance-or-s > summary")
    text = help_.inner_text()
    shot(page, "significance-or-s")

    assert "Significance ranks the memory" in text and "0.80 when none is given" in text
    assert "S is one of the five STARE scores" in text and "rank nothing" in text
    assert "0.90 or more" in text


def test_a_curator_corrects_an_entitys_type_from_its_page(browser, served, team):  # noqa: F811
    alice = Agent.objects.get(name="alice")
    memory_remember(
        agent=alice,
        text="Zürich Logistik AG asked for a quote.",
        entities=[{"name": "Zürich Logistik AG", "type": "place"}],
    )
    entity = Entity.objects.get(name="Zürich Logistik AG")
    page = log_in(browser, served, "carol")
    page.goto(f"{served}/w/acme/e/{entity.entity_id}")

    page.fill("#retype input[name=retype]", "customer")
    page.click("#retype button")  # no reason: the browser asks for one
    assert page.eval_on_selector("#retype input[name=reason]", "e => e.validity.valueMissing")
    page.fill("#retype input[name=reason]", "   ")
    page.click("#retype button")  # blanks only: the page refuses, nothing changed
    assert "A reason is required" in page.locator("#retype").inner_text()
    assert Entity.objects.get(pk=entity.pk).kind == "place"
    page.fill("#retype input[name=reason]", "  a firm, not a town  ")
    page.click("#retype button")
    page.wait_for_selector("text=is a customer now (was place)")
    shot(page, "entity-retyped")

    assert page.locator("h1").inner_text() == "Zürich Logistik AG customer"
    assert "type: place → customer" in page.locator("table.provenance").inner_text()
    assert Entity.objects.get(pk=entity.pk).kind == "customer"
    assert page.goto(f"{served}/w/acme/e/{entity.entity_id}").status == 200
    gus = log_in(browser, served, "gus")  # another workspace: as a missing entity
    assert gus.goto(f"{served}/w/acme/e/{entity.entity_id}").status == 404
