"""A customer's page and a conversation's page in headless Chromium at 1,366 px and 390 px:
no sideways scroll of the page, a screenshot of each, and a curator undoing the change
consolidation made, from the customer's page."""

import pytest

from consolidation.services import consolidation_execute, consolidation_start
from memories.models import Entity, Memory
from memories.operations import memory_remember
from memories.tests.test_browser import SCREENSHOTS, browser, log_in, team  # noqa: F401

HUB = SCREENSHOTS / "hub"
WIDTHS = {"wide": 1366, "phone": 390}
SESSION = "orion-call-1"


@pytest.fixture
def corrected(team):  # noqa: F811
    """Alice's note of Orion's renewal month, then her plain correction of it in the same call,
    which consolidation applies; Priya's word on the plan; a promise."""
    from memories.models import Agent

    alice = Agent.objects.get(name="alice")
    march = memory_remember(
        agent=alice, text="Orion Health renews its contract in March.", session=SESSION,
        entities=[{"name": "Orion Health", "type": "customer"}],
    ).memory  # fmt: skip
    memory_remember(
        agent=alice, text="Orion Health's renewal moved from March to June.", session=SESSION,
        entities=[{"name": "Orion Health", "type": "customer"}],
    )  # fmt: skip
    memory_remember(
        agent=alice, text="Priya Raman says Orion Health wants the data residency add-on.",
        session=SESSION, entities=[{"name": "Orion Health", "type": "customer"},
                                   {"name": "Priya Raman", "type": "person"}],
    )  # fmt: skip
    memory_remember(
        agent=alice, text="Priya Raman, VP of Clinical Operations at Orion Health, signs off "
        "the renewal.", entities=[{"name": "Orion Health", "type": "customer"},
                                  {"name": "Priya Raman", "type": "person"}],
    )  # fmt: skip
    memory_remember(
        agent=alice, text="We promised Orion Health a security review by May.",
        category="commitment", entities=[{"name": "Orion Health", "type": "customer"}],
    )  # fmt: skip
    consolidation_execute(consolidation_start(workspace=alice.workspace, trigger="command"))
    march.refresh_from_db()
    assert march.status == Memory.Status.SUPERSEDED, "consolidation did not apply the correction"
    return {"march": march, "orion": Entity.objects.get(name="Orion Health")}


def until(page, script: str, arg=None, seconds: float = 15) -> None:
    """Poll ``script`` in the page until it is true (Playwright's wait_for_function evaluates
    a string, which the pages' Content-Security-Policy forbids)."""
    import time

    deadline = time.monotonic() + seconds
    while not page.evaluate(script, arg):
        assert time.monotonic() < deadline, f"never true: {script}"
        page.wait_for_timeout(100)


def overflow(page) -> int:
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def test_the_customer_and_conversation_pages_at_both_widths(browser, live_server, corrected):  # noqa: F811
    HUB.mkdir(parents=True, exist_ok=True)
    page = log_in(browser, live_server.url, "vic")
    paths = {
        "customer": f"/w/acme/e/{corrected['orion'].entity_id}",
        "conversation": f"/w/acme/s/{SESSION}",
    }
    for width_name, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in paths.items():
            assert page.goto(live_server.url + path).status == 200
            page.screenshot(path=str(HUB / f"{name}-{width_name}.png"), full_page=True)
            assert overflow(page) <= 1, f"{name} at {width}px scrolls sideways"
            main = page.inner_text("main")
            assert "What changed" in main and "consolidation" in main
            assert "Undo (curator)" not in main  # a viewer
            if name == "customer":  # grouped by what each is about; Priya's role from a note
                groups = page.locator("main h2:has-text('True now') + .grid h3").all_inner_texts()
                assert any(g.startswith("Orion Health itself") for g in groups), groups
                assert any(g.startswith("Priya Raman") for g in groups), groups
                chip = page.locator(".chip:has-text('Priya Raman')").inner_text()
                assert "VP of Clinical Operations" in chip, chip
    page.goto(live_server.url + paths["customer"])
    page.click(f"a:has-text('{SESSION}')")
    page.wait_for_url(f"**/s/{SESSION}")
    assert "Priya Raman" in page.inner_text("main")


def test_a_curator_undoes_consolidations_change_from_the_customers_page(
    browser,  # noqa: F811
    live_server,
    corrected,  # noqa: F811
):
    page = log_in(browser, live_server.url, "carol")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + f"/w/acme/e/{corrected['orion'].entity_id}")
    march = corrected["march"]
    page.fill(
        f"input[aria-label='Reason to undo the supersession of {march.mem_id}']", "still March"
    )
    page.click("button:has-text('Undo (curator)')")
    page.wait_for_selector("text=is true again")
    page.screenshot(path=str(HUB / "customer-undone-phone.png"), full_page=True)
    assert "undone: true again" in page.inner_text("main")
    march.refresh_from_db()
    assert march.status == Memory.Status.ACTIVE


def test_the_navigation_folds_into_a_menu_on_a_phone(browser, live_server, corrected):  # noqa: F811
    """At 390 px the navigation hides behind Menu, which opens every one of its links (none
    cut off, no sideways scroll); at 1,366 px there is no Menu and every link shows."""
    page = log_in(browser, live_server.url, "carol")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + "/w/acme/")
    links = page.locator("#workspace-nav a")
    assert links.count() >= 12 and not links.first.is_visible()
    page.click("header button.menu")
    assert page.get_attribute("header button.menu", "aria-expanded") == "true"
    for i in range(links.count()):
        box = links.nth(i).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, links.nth(i).inner_text()
    assert overflow(page) <= 1
    page.screenshot(path=str(HUB / "menu-open-phone.png"), full_page=True)
    page.click("#workspace-nav a:has-text('Entities')")
    page.wait_for_url("**/entities")
    page.set_viewport_size({"width": 1366, "height": 900})
    assert not page.locator("header button.menu").is_visible()
    assert all(links.nth(i).is_visible() for i in range(links.count()))


def test_wide_tables_reflow_into_rows_on_a_phone(browser, live_server, corrected):  # noqa: F811
    """Recent changes, a memory's history and the readiness table fit a 390 px column: each
    row one card, every cell under its label, nothing wider than the screen."""
    page = log_in(browser, live_server.url, "carol")
    page.set_viewport_size({"width": 390, "height": 844})
    march = corrected["march"]
    for name, path in {
        "overview": "/w/acme/",
        "memory": f"/w/acme/m/{march.mem_id}",
        "readiness": "/w/acme/readiness",
    }.items():
        page.goto(live_server.url + path)
        tables = page.locator("table.reflow")
        assert tables.count() >= 1, name
        for i in range(tables.count()):
            wide = tables.nth(i).evaluate("t => [t.scrollWidth, t.getBoundingClientRect().right]")
            assert wide[0] <= 390 and wide[1] <= 390, (name, wide)
        assert overflow(page) <= 1, name
        labelled = page.locator("table.reflow td[data-label]").first
        assert labelled.evaluate("td => getComputedStyle(td, '::before').content") != "none"
        page.screenshot(path=str(HUB / f"reflow-{name}-phone.png"), full_page=True)


def test_the_graph_draws_recentres_and_finds_a_path(browser, live_server, corrected, settings):  # noqa: F811
    """Drawn by the site's own copy of its library, with no Content-Security-Policy error;
    clicking Priya puts her at the centre (and in the address); "Path from here" then a
    click on Orion lists the path through the memory naming both; at both widths."""
    settings.MM_TRAVERSAL = True
    page = log_in(browser, live_server.url, "carol")
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    orion = corrected["orion"]
    for width_name, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + f"/w/acme/graph?entity={orion.entity_id}")
        until(page, "() => document.getElementById('graph').graph !== undefined")
        assert page.locator("#graph canvas").count() >= 1
        assert overflow(page) <= 1, width_name
        page.screenshot(path=str(HUB / f"graph-{width_name}.png"), full_page=True)
    assert not problems, problems

    def click(node_id: str) -> None:
        position = page.evaluate(
            "id => { const cy = document.getElementById('graph').graph;"
            " const p = cy.getElementById(id).renderedPosition();"
            " const box = cy.container().getBoundingClientRect();"
            " return {x: box.left + p.x, y: box.top + p.y}; }",
            node_id,
        )
        page.mouse.click(position["x"], position["y"])

    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(live_server.url + f"/w/acme/graph?entity={orion.entity_id}")
    until(page, "() => document.getElementById('graph').graph !== undefined")
    priya = page.evaluate(
        "() => document.getElementById('graph').graph.nodes()"
        ".filter(n => n.data('label') === 'Priya Raman')[0].id()"
    )
    click(priya)
    until(page, "id => location.search === '?entity=' + id", priya[2:])  # pushed, not loaded
    until(
        page,
        "id => document.getElementById('graph').graph.getElementById(id).data('centre')",
        priya,
    )
    assert page.inner_text("#graph-title") == "Priya Raman"
    page.click("#graph-path")
    click(f"e:{orion.entity_id}")
    page.wait_for_selector("ol.path-steps")
    steps = page.inner_text("ol.path-steps")
    assert "Priya Raman" in steps and "Orion Health" in steps and "mentions" in steps
    page.screenshot(path=str(HUB / "graph-path-wide.png"), full_page=True)
    assert not problems, problems


def test_search_by_the_days_a_memory_was_written(browser, live_server, corrected):  # noqa: F811
    """The written range's day pickers are among the common filters: a range that ends before
    the memories were written finds none, one that holds them finds them, the range is in the
    URL, and the page does not scroll sideways on a phone with the filters open."""
    from django.utils import timezone

    today = timezone.now().date()
    page = log_in(browser, live_server.url, "vic")
    page.goto(live_server.url + "/w/acme/search?query=Orion+renewal")
    page.click("summary:has-text('Filters')")
    picker = page.locator("input[name=written_until]")
    assert picker.get_attribute("type") == "date" and picker.is_visible()
    picker.fill(f"{today.year - 1}-01-31")
    page.click("button:has-text('Search')")
    page.wait_for_url(f"**written_until={today.year - 1}-01-31**")
    assert page.locator("main table").count() == 0
    page.fill("input[name=written_from]", today.isoformat())
    page.fill("input[name=written_until]", today.isoformat())
    page.click("button:has-text('Search')")
    page.wait_for_url(f"**written_from={today.isoformat()}**")
    assert "renewal moved from March to June" in page.inner_text("main table")
    page.set_viewport_size({"width": 390, "height": 844})
    assert overflow(page) <= 1
    page.screenshot(path=str(HUB / "search-written-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1366, "height": 900})
    page.screenshot(path=str(HUB / "search-written-wide.png"), full_page=True)
