"""The dashboard's rough edges a newcomer met (issue 38), in headless Chromium: the first run's
login page, the icon every page asks for, link weights as people read them."""

from __future__ import annotations

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
