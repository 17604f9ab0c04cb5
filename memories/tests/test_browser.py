"""The dashboard end to end in headless Chromium (Debian's ``chromium``, driven by Playwright),
against a live server started by the test suite. Screenshots go to ``var/screenshots/``
(ignored by git) for a person to look at."""

import os
import shutil
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from meaning_memory.testing import make_actor
from memories.models import Membership, Memory, ProvenanceEvent
from memories.operations import memory_remember

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
RENEWAL = "Zephyr Logistics renews its support contract every March."
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

if not Path(CHROMIUM).exists():
    # CI installs it (.ci/run); a developer without it is told, not silently passed.
    reason = "no chromium: apt-get install chromium"
    if os.environ.get("CI"):
        raise RuntimeError(reason)
    pytest.skip(reason, allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def browser(monkeypatch):
    # Playwright's synchronous API runs an event loop in this thread; the test's own ORM calls
    # are still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def team(transactional_db):
    alice = make_actor("acme", "alice", scopes=["team:accounts"])
    charlie = make_actor("globex", "charlie")
    users = get_user_model().objects
    for name, workspace, role in [
        ("carol", alice.agent.workspace, "curator"),
        ("vic", alice.agent.workspace, "viewer"),
        ("gus", charlie.agent.workspace, "curator"),
    ]:
        Membership.objects.create(
            user=users.create_user(name, password="pw"), workspace=workspace, role=role
        )
    renewal = memory_remember(
        agent=alice.agent, text=RENEWAL, category="commitment", stare_scores={"s": 0.9, "t": 0.4}
    ).memory
    memory_remember(agent=alice.agent, text="Zephyr's main contact is Dana Whitfield.")
    return {"renewal": renewal}


def log_in(browser, base: str, name: str):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", name)
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/w/**")
    return page


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_curator_searches_demotes_pins_and_sees_it_protected(browser, live_server, team):
    base = live_server.url
    renewal = team["renewal"]
    page = log_in(browser, base, "carol")

    page.click("text=Search")
    page.fill("input[name=query]", "When does Zephyr renew?")
    page.click("summary:has-text('Filters')")  # folded until one is set
    page.select_option("select[name=category]", "commitment")
    page.click("button:has-text('Search')")
    assert "category=commitment" in page.url  # shareable: the filters are in the URL
    assert page.locator("details.filters[open]").count() == 1  # a filter set: shown
    assert page.locator("table tr").count() == 2  # the header and the renewal only
    shot(page, "search")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    shot(page, "search-narrow")
    page.set_viewport_size({"width": 1200, "height": 900})

    page.click(f"text={RENEWAL}")
    page.wait_for_url(f"**/m/{renewal.mem_id}")
    page.select_option("select[name=action]", "demote")
    page.fill("input[name=reason]", "the budget moved to April")
    page.click("button:has-text('Apply')")
    page.wait_for_selector("text=the budget moved to April")
    history = page.locator("table.provenance").inner_text()
    assert "demote" in history and "user:carol" in history
    shot(page, "memory")

    page.select_option("select[name=action]", "pin")
    page.fill("input[name=reason]", "it decides the budget")
    page.click("button:has-text('Apply')")
    page.wait_for_selector("text=it decides the budget")
    page.click("text=Compiled file")
    row = page.locator(f"table.included tr:has-text('{renewal.mem_id}')").inner_text()
    assert "protected" in row
    assert f"●○——— {RENEWAL}" in page.locator("pre.compiled").inner_text()
    shot(page, "compiled")

    renewal.refresh_from_db()
    assert renewal.pinned and renewal.significance == 0.4
    assert list(
        ProvenanceEvent.objects.filter(memory=renewal, user__username="carol").values_list(
            "action", flat=True
        )
    ) == ["demote", "pin"]


def test_a_viewer_sees_no_feedback_and_a_forged_post_is_refused(browser, live_server, team):
    base = live_server.url
    renewal = team["renewal"]
    page = log_in(browser, base, "vic")

    page.goto(f"{base}/w/acme/m/{renewal.mem_id}")
    assert page.locator("form.feedback").count() == 0
    assert page.locator("text=Apply").count() == 0
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    forged = page.context.request.post(
        f"{base}/w/acme/m/{renewal.mem_id}/feedback",
        form={"action": "pin", "reason": "forged", "csrfmiddlewaretoken": token},
        headers={"Referer": f"{base}/w/acme/m/{renewal.mem_id}"},
    )

    assert forged.status == 403
    assert "CSRF" not in forged.text()  # refused for the role, not for a missing token
    renewal.refresh_from_db()
    assert not renewal.pinned


def test_a_user_of_another_workspace_gets_404(browser, live_server, team):
    base = live_server.url
    page = log_in(browser, base, "gus")

    response = page.goto(f"{base}/w/acme/m/{team['renewal'].mem_id}")
    assert response.status == 404
    assert page.goto(f"{base}/w/acme/").status == 404
    assert Memory.objects.get(pk=team["renewal"].pk).significance == 0.8


def test_a_superuser_adds_a_member_who_then_sees_the_workspace(browser, live_server, team):
    base = live_server.url
    users = get_user_model().objects
    users.create_superuser("root", password="pw")
    users.create_user("nina", password="pw")
    page = log_in(browser, base, "root")

    page.click("text=Members")
    page.fill("input[name=username]", "nobody")
    page.click("button:has-text('Save')")
    assert "no active user 'nobody'" in page.locator("form.inline").inner_text()
    page.fill("input[name=username]", "nina")
    page.select_option("select[name=role]", "curator")
    page.click("button:has-text('Save')")
    page.wait_for_selector("text=nina is a curator of acme")
    assert "curator" in page.locator("table tr:has-text('nina')").inner_text()
    shot(page, "members")

    nina = log_in(browser, base, "nina")
    assert nina.url.endswith("/w/acme/")
    assert nina.locator("text=Add a member").count() == 0  # a curator, not an admin
    assert nina.goto(f"{base}/w/globex/").status == 404


def test_pages_keep_to_their_content_security_policy(browser, live_server, team):
    """No inline script or style: the dashboard's are files, and the browser refuses nothing
    under the policy; the stylesheet applies and the workspace switcher works."""
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    base = live_server.url
    page = log_in(browser, base, "root")
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Security Policy" in m.text else None)
    for path in (
        "/w/acme/",
        "/w/acme/search?query=Zephyr",
        f"/w/acme/m/{team['renewal'].mem_id}",
        "/w/acme/compiled",
        "/w/acme/agents",
        "/w/acme/members",
        "/w/acme/readiness",
        "/w/acme/entities",
        "/admin/",
        "/admin/memories/memory/",
        "/admin/memories/entity/",
        "/admin/memories/link/",
    ):
        response = page.goto(f"{base}{path}")
        assert "script-src 'self';" in response.headers["content-security-policy"], path
    page.goto(f"{base}/w/acme/")
    header = page.eval_on_selector("header", "e => getComputedStyle(e).backgroundColor")
    page.select_option("select[name=ws]", "globex")
    page.wait_for_url(f"{base}/w/globex/")
    shot(page, "content-security-policy")

    assert header == "rgb(29, 35, 48)"
    assert refused == []


def test_a_curator_follows_links_and_merges_two_entities(browser, live_server, team):
    from memories.models import Entity

    alice = team["renewal"]
    agent = alice.workspace.agents.get(name="alice")
    note = memory_remember(
        agent=agent,
        text="Melanie from ZL approved the renewal price.",
        entities=[{"name": "ZL", "type": "customer"}],
        links=[{"to": alice.mem_id, "type": "supports"}],
    ).memory
    base = live_server.url
    page = log_in(browser, base, "carol")

    page.goto(f"{base}/w/acme/m/{note.mem_id}")
    drawing = page.locator("figure.neighbourhood svg")
    assert drawing.count() == 1
    assert "supports" in page.locator("table.links").inner_text()
    shot(page, "memory-links")
    page.click("figure.neighbourhood svg a:has(title:has-text('Zephyr Logistics renews')) circle")
    page.wait_for_url(f"**/m/{alice.mem_id}")
    assert "← in\tsupports" in page.locator("table.links").inner_text()

    page.click("text=Entities")
    page.fill("input[name=name]", "Zephyr Logistics")
    page.fill("input[name=kind]", "customer")
    page.fill("input[name=aliases]", "Zephyr")
    page.click("button:has-text('Declare')")
    page.wait_for_selector("text=Declared: Zephyr Logistics (customer).")
    page.click("text=Entities")
    shot(page, "entities")

    page.click("table >> text=ZL")
    page.fill("#merge input[name=into]", "Zephyr Logistics")
    page.fill("#merge input[name=reason]", "ZL is what the team calls Zephyr Logistics")
    page.click("button:has-text('Merge')")
    page.wait_for_selector("text=ZL is merged into Zephyr Logistics.")
    page.click("p >> a:has-text('Zephyr Logistics')")
    page.wait_for_selector("h1:has-text('Zephyr Logistics')")
    assert "Melanie from ZL approved the renewal price." in page.content()
    shot(page, "entity")
    assert Entity.objects.get(name="ZL").merged_into.name == "Zephyr Logistics"


def test_a_curator_resolves_and_dismisses_divergences(browser, live_server, team, settings):
    from memories.models import Divergence
    from memories.services.divergence import divergence_run

    settings.MM_DIVERGENCE = True
    workspace = team["renewal"].workspace
    alice = workspace.agents.get(name="alice")
    bob = make_actor("acme", "bob", scopes=["team:accounts"]).agent
    # Helios Bank, not the fixture's Zephyr Logistics: one entity per name would join alice's
    # own renewal memory to these, and this test counts the team's two disagreements.
    helios = [{"name": "Helios Bank", "type": "customer"}]
    for agent, month in ((alice, "March"), (bob, "June"), (bob, "October")):
        memory_remember(
            agent=agent,
            text=f"Helios Bank renews its hosting contract in {month}.",
            scope="team:accounts",
            entities=helios,
        )
    divergence_run(workspace=workspace)
    assert Divergence.objects.filter(status="open").count() == 2
    base = live_server.url
    page = log_in(browser, base, "carol")
    page.click("nav >> text=Divergences")
    page.wait_for_selector("h1:has-text('Divergences')")
    assert "attribute (month: march ≠ june)" in page.content()
    shot(page, "divergences")

    sections = page.locator("section.divergence")
    first = sections.nth(0)
    first.locator("button:has-text('Resolve')").click()
    page.wait_for_selector("text=was not changed")
    assert "A reason is required" in page.content()
    first = page.locator("section.divergence").nth(0)
    first.locator("input[name=reason]").fill("The contract says June")
    first.locator("button:has-text('Resolve')").click()
    page.wait_for_selector("text=resolved.")
    page.locator("section.divergence").nth(0).locator("input[name=reason]").fill("Two contracts")
    page.locator("section.divergence").nth(0).locator("button:has-text('Dismiss')").click()
    page.wait_for_selector("text=dismissed.")
    assert page.locator("section.divergence").count() == 0
    page.click("text=All")
    assert page.locator("section.divergence").count() == 2
    assert "The contract says June" in page.content()
    shot(page, "divergences-closed")
    assert sorted(Divergence.objects.values_list("status", flat=True)) == ["dismissed", "resolved"]


def test_a_curator_reads_the_sources_records_and_the_events_behind_one(browser, live_server, team):
    from memories.services import memory_feedback

    alice = Memory.objects.get(pk=team["renewal"].pk).workspace.agents.get(name="alice")
    ledger = [
        memory_remember(
            agent=alice,
            text=f"Ledger figure {n} for Zephyr.",
            source="ledger",
            scope="team:accounts",
        ).memory
        for n in range(4)
    ]
    rumours = [
        memory_remember(agent=alice, text=f"Rumour {n} about Zephyr.", source="rumours").memory
        for n in range(3)
    ]
    for memory in ledger[:3]:
        memory_feedback(agent=alice, mem_id=memory.mem_id, action="important", reason="audited")
    for memory in rumours:
        memory_feedback(agent=alice, mem_id=memory.mem_id, action="demote", reason="was wrong")
    memory_remember(agent=alice, text="According to Maria Lopez, Zephyr moves to Lisbon.")
    base = live_server.url
    page = log_in(browser, base, "carol")
    page.click("header >> text=Sources")
    rows = page.locator("table.sources tr")
    assert rows.count() == 5  # the header, alice, ledger, rumours, Maria Lopez
    assert rows.nth(1).locator("td").first.inner_text() in {"ledger", "rumours"}
    assert page.locator("svg[aria-label^='Estimate']").count() == 4
    shot(page, "sources")
    page.click("table.sources >> text=rumours")
    assert page.locator("h1").inner_text() == "rumours"
    assert page.locator("text=was wrong").count() == 3
    shot(page, "source")
    page.goto(f"{base}/w/acme/sources")
    page.select_option("select[name=kind]", "entity")
    page.click("button:has-text('Filter')")
    assert "kind=entity" in page.url
    assert page.locator("table.sources tr").count() == 2
    page.click("text=Maria Lopez")
    assert page.locator("h1").inner_text() == "Maria Lopez"
    # Another workspace's sources are a 404, like a missing one.
    gus = log_in(browser, base, "gus")
    assert gus.goto(f"{base}/w/acme/sources").status == 404
    assert gus.goto(f"{base}/w/globex/sources/writer/ledger").status == 404


def test_a_viewer_browses_the_memories_without_a_query(browser, live_server, team):
    base = live_server.url
    page = log_in(browser, base, "vic")
    assert page.locator("svg.chart").count() == 2  # the overview's charts, with axes
    shot(page, "overview")
    page.click("header >> text=Memories")
    rows = page.locator("table.memories tr")
    assert rows.count() == 3  # the header, the renewal and the contact
    assert "Dana Whitfield" in rows.nth(1).inner_text()  # the newest first
    shot(page, "memories")
    page.click("details.filters > summary")  # folded until one is set
    page.select_option("select[name=ordering]", "significance")
    page.select_option("select[name=category]", "commitment")
    page.click("button:has-text('Filter')")
    assert "ordering=significance" in page.url and "category=commitment" in page.url
    assert page.locator("table.memories tr").count() == 2
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, "memories-narrow")
    page.click(f"text={RENEWAL}")
    assert page.locator("h1").inner_text().startswith("Memory")
    gus = log_in(browser, base, "gus")
    assert gus.goto(f"{base}/w/acme/memories").status == 404


def test_the_admins_memory_list_fits_a_1400_px_screen(browser, live_server, team):
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    alice = Memory.objects.get(pk=team["renewal"].pk).workspace.agents.get(name="alice")
    memory_remember(
        agent=alice,
        text="A long note about the warehouse audit, its schedule, who leads it and why. " * 4,
        valid_from=team["renewal"].created_at,
        valid_until=team["renewal"].created_at.replace(year=2030),
        scope="team:accounts",
    )
    base = live_server.url
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw")
    page.click("input[type=submit]")
    page.goto(f"{base}/admin/memories/memory/")
    assert page.locator("#result_list tbody tr").count() == 3
    shot(page, "admin-memories")
    # The admin scrolls a list too wide inside its box: every column must fit in it.
    overflow = page.evaluate(
        "(() => { const box = document.querySelector('#changelist .results');"
        " return box.scrollWidth - box.clientWidth; })()"
    )
    assert overflow <= 0, f"the list is {overflow} px wider than its box"
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


def test_an_admin_previews_and_erases_a_memory_others_cannot(browser, live_server, team):
    base = live_server.url
    users = get_user_model().objects
    ada = users.create_user("ada", password="pw")
    Membership.objects.create(user=ada, workspace=team["renewal"].workspace, role="admin")
    mem_id = team["renewal"].mem_id

    carol = log_in(browser, base, "carol")  # a curator
    assert carol.locator("nav >> text=Erase").count() == 0
    assert carol.goto(f"{base}/w/acme/erase").status == 403
    gus = log_in(browser, base, "gus")  # another workspace
    assert gus.goto(f"{base}/w/acme/erase?by=memory&value={mem_id}").status == 404

    page = log_in(browser, base, "ada")
    page.goto(f"{base}/w/acme/m/{mem_id}")
    page.click("text=Erase this memory for good")
    page.wait_for_selector("text=1 memory would be erased")
    assert "Zephyr Logistics renews" in page.locator("table").inner_text()
    page.click("button:has-text('Erase 1 for good')")  # the box not ticked
    page.wait_for_selector("text=Tick the box")
    page.fill("input[name=reason]", "the customer asked")
    page.check("input[name=confirm]")
    shot(page, "erase")
    page.click("button:has-text('Erase 1 for good')")
    page.wait_for_selector("text=Erased 1 memories for good")
    assert not Memory.objects.filter(mem_id=mem_id).exists()
    assert page.goto(f"{base}/w/acme/m/{mem_id}").status == 404
    page.goto(f"{base}/w/acme/erase?by=source&value=nobody")
    page.wait_for_selector("text=0 memories would be erased")
    shot(page, "erase-empty")


def test_a_curator_splits_off_a_namesake_on_the_entity_page(browser, live_server, team):
    from memories.models import Entity, Link

    agent = team["renewal"].workspace.agents.get(name="alice")
    person = [{"name": "Jordan", "type": "person"}]
    memory_remember(agent=agent, text="Jordan approved the budget.", entities=person)
    trip = memory_remember(
        agent=agent, text="Jordan changed its visa rules for visitors.", entities=person
    ).memory
    jordan = Entity.objects.get(normalized="jordan")
    base = live_server.url
    page = log_in(browser, base, "carol")
    page.goto(f"{base}/w/acme/e/{jordan.entity_id}")
    page.fill("#split input[name=split]", "place")
    page.fill("#split input[name=memories]", trip.mem_id)
    page.fill("#split input[name=reason]", "the country, not our colleague")
    page.click("button:has-text('Split off')")
    page.wait_for_selector("text=1 mention moved to Jordan (place).")
    assert "Jordan (place)" in page.locator("table").first.inner_text()
    shot(page, "entity-namesakes")
    page.click("table >> a:has-text('Jordan (place)')")
    page.wait_for_selector("h1:has-text('Jordan')")
    assert "Jordan changed its visa rules for visitors." in page.content()
    link = Link.objects.get(source=trip, removed_at__isnull=True)
    assert link.target_entity.kind == "place"
