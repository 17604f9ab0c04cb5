"""Every dashboard page at 1,366 px and 390 px in headless Chromium: it answers, the page body
never scrolls sideways (measured), a screenshot of each under the tests' artefacts, and the
states a newcomer meets: the STARE legend wherever marks are shown, plain words, and on a new
workspace empty states that say what fills the page and how to turn its feature on."""

import pytest

from memories.tests.test_browser import SCREENSHOTS, browser, log_in, team  # noqa: F401
from memories.tests.test_hub_browser import SESSION, corrected, overflow  # noqa: F401

PAGES = SCREENSHOTS / "pages"
WIDTHS = {"wide": 1366, "phone": 390}
#: The pages whose memories carry STARE marks, which a legend explains on the page.
WITH_MARKS = ("search", "memories", "memory", "compiled")


def sweep(page, base: str, paths: dict[str, str], prefix: str) -> dict[str, str]:
    """Each page at both widths: 200, no sideways scroll, a screenshot; its main text."""
    PAGES.mkdir(parents=True, exist_ok=True)
    texts = {}
    for width_name, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in paths.items():
            response = page.goto(base + path)
            assert response.status == 200, (name, response.status)
            assert overflow(page) <= 1, f"{name} at {width}px scrolls sideways"
            page.screenshot(path=str(PAGES / f"{prefix}-{name}-{width_name}.png"), full_page=True)
            texts[name] = page.inner_text("main")
    return texts


def test_every_page_of_a_workspace_in_use_at_both_widths(browser, live_server, corrected):  # noqa: F811
    march, orion = corrected["march"], corrected["orion"]
    page = log_in(browser, live_server.url, "carol")
    paths = {
        "overview": "/w/acme/",
        "search": "/w/acme/search?query=Orion+renewal&currently_valid=false",
        "memories": "/w/acme/memories",
        "memory": f"/w/acme/m/{march.mem_id}",
        "entities": "/w/acme/entities",
        "customer": f"/w/acme/e/{orion.entity_id}",
        "conversation": f"/w/acme/s/{SESSION}",
        "graph": f"/w/acme/graph?entity={orion.entity_id}",
        "compiled": "/w/acme/compiled",
        "sources": "/w/acme/sources",
        "divergences": "/w/acme/divergences",
        "runs": "/w/acme/consolidation",
        "proposals": "/w/acme/consolidation/proposals",
        "threads": "/w/acme/threads",
        "readiness": "/w/acme/readiness",
        "agents": "/w/acme/agents",
        "members": "/w/acme/members",
    }
    texts = sweep(page, live_server.url, paths, "acme")
    for name in WITH_MARKS:
        assert "What the STARE marks say" in texts[name], name
    assert "March" in texts["search"]  # the superseded note, found as no longer valid
    memory = texts["memory"]
    assert "engine engine" not in memory and "from always until open" not in memory
    assert "In the file" in texts["compiled"] and "Orion Health" in texts["compiled"]
    readiness = texts["readiness"].lower()
    assert readiness.index("you can rely on") < readiness.index("evidence over time")


def test_a_new_workspaces_pages_say_what_fills_them(browser, live_server, team):  # noqa: F811
    """gus's workspace has no memory: each page says what fills it and how to turn its feature
    on, at both widths."""
    page = log_in(browser, live_server.url, "gus")
    paths = {
        "overview": "/w/globex/",
        "memories": "/w/globex/memories",
        "entities": "/w/globex/entities",
        "compiled": "/w/globex/compiled",
        "divergences": "/w/globex/divergences",
        "proposals": "/w/globex/consolidation/proposals",
        "threads": "/w/globex/threads",
    }
    texts = sweep(page, live_server.url, paths, "new")
    # What fills each page, and the setting or command that turns its feature on.
    said = {
        "divergences": ("No open divergences.", "MM_DIVERGENCE=true"),
        "proposals": ("No open proposals.", "meaning-memory consolidate --workspace globex"),
        "threads": ("No open threads.", "MM_OPEN_THREADS=true"),
    }
    for name, (heading, how) in said.items():
        assert heading in texts[name] and how in texts[name], (name, texts[name])
    for name in paths:
        assert len(texts[name].strip()) > 40, f"{name} says nothing on a new workspace"


@pytest.mark.parametrize("path", ["/w/acme/", "/w/acme/readiness"])
def test_another_workspaces_pages_are_404_in_the_browser(browser, live_server, team, path):  # noqa: F811
    page = log_in(browser, live_server.url, "gus")
    assert page.goto(live_server.url + path).status == 404
