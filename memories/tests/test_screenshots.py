"""Every page of the dashboard, for a workspace that is empty and one that is full, at 1366 px
and at a phone's 390 px: each answers 200, none makes the phone scroll sideways (a wide table
scrolls within itself), an empty page says how to begin, and a screenshot of each goes to
``var/screenshots/pages/`` for a person to look at."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model

from consolidation.services import consolidation_execute, consolidation_start
from meaning_memory.testing import make_actor
from memories.models import Divergence, Entity, Membership, Memory, Thread
from memories.operations import memory_remember
from memories.services import memory_feedback
from memories.services.divergence import divergence_run
from memories.tests.test_browser import SCREENSHOTS, browser  # noqa: F401 (a fixture)

PAGES = SCREENSHOTS / "pages"
WIDTHS = {"wide": 1366, "phone": 390}
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
#: Pages of a workspace (``{ws}``), and those of one thing in it (``{memory}`` …: full only).
WORKSPACE_PAGES = {
    "overview": "/w/{ws}/",
    "search": "/w/{ws}/search?query=renewal",
    "memories": "/w/{ws}/memories",
    "entities": "/w/{ws}/entities",
    "graph": "/w/{ws}/graph",
    "divergences": "/w/{ws}/divergences",
    "sources": "/w/{ws}/sources",
    "consolidation": "/w/{ws}/consolidation",
    "merges": "/w/{ws}/consolidation/merges",
    "proposals": "/w/{ws}/consolidation/proposals",
    "threads": "/w/{ws}/threads",
    "compiled": "/w/{ws}/compiled",
    "agents": "/w/{ws}/agents",
    "members": "/w/{ws}/members",
    "erase": "/w/{ws}/erase?by=source&value=alice",
    "readiness": "/w/{ws}/readiness",
}
THING_PAGES = {
    "memory": "/w/{ws}/m/{memory}",
    "entity": "/w/{ws}/e/{entity}",
    "source": "/w/{ws}/sources/writer/alice",
    "thread": "/w/{ws}/threads/{thread}",
    "conversation": "/w/{ws}/s/{session}",
    "graph-entity": "/w/{ws}/graph?entity={entity}",
}
#: What an empty page shows instead of a bare heading (a way to begin).
EMPTY_SAYS = {
    "overview": "createagent",
    "memories": "createagent",
    "search": "No memories found",
    "entities": "No entities yet",
    "divergences": "No open divergences",
    "threads": "No open threads",
    "proposals": "meaning-memory consolidate --workspace empty",
    "graph": "No entity yet",
    "consolidation": "No consolidation run yet",
}


@pytest.fixture
def workspaces(transactional_db, settings):
    """``empty``: an agent, no memory. ``full``: memories of two agents over sessions, a
    pinned one, entities, a divergence, a thread and consolidation runs."""
    settings.MM_DIVERGENCE = True
    settings.MM_OPEN_THREADS = True
    make_actor("empty", "alice")
    alice = make_actor("full", "alice", scopes=["team:accounts"])
    bob = make_actor("full", "bob", scopes=["team:accounts"])
    ada = get_user_model().objects.create_user("ada", password="pw")
    for slug in ("empty", "full"):
        Membership.objects.create(user=ada, workspace_id=_workspace(slug), role="admin")
    stories = [
        "I started a pottery class at the studio; we shape a bowl for the kiln.",
        "My first pottery bowl cracked in the kiln at the studio.",
        "I will bring my glazed pottery bowl from the studio kiln to the show next week.",
    ]
    for i, text in enumerate(stories):
        memory_remember(
            agent=alice.agent,
            text=text,
            session=f"s{i}",
            memory_type="episodic",
            created_at=START + timedelta(days=7 * i),
        )
    march = memory_remember(
        agent=alice.agent,
        text="Zephyr Logistics renews its support contract in March.",
        scope="team:accounts",
        category="commitment",
        entities=[{"name": "Zephyr Logistics", "type": "customer"}],
    ).memory
    memory_remember(
        agent=bob.agent,
        text="Zephyr Logistics renews its support contract in June.",
        scope="team:accounts",
        entities=[{"name": "Zephyr Logistics", "type": "customer"}],
    )
    memory_feedback(agent=alice.agent, mem_id=march.mem_id, action="pin", reason="key date")
    divergence_run(workspace=alice.agent.workspace)
    consolidation_execute(consolidation_start(workspace=alice.agent.workspace, trigger="command"))
    assert Divergence.objects.exists() and Thread.objects.exists()
    return {
        "memory": march.mem_id,
        "entity": Entity.objects.get(name="Zephyr Logistics").entity_id,
        "thread": Thread.objects.first().thread_id,
        "session": "s0",
    }


def _workspace(slug):
    from memories.models import Workspace

    return Workspace.objects.get(slug=slug).pk


def test_every_page_empty_and_full_at_both_widths(browser, live_server, workspaces):  # noqa: F811
    base = live_server.url
    PAGES.mkdir(parents=True, exist_ok=True)
    for width_name, width in WIDTHS.items():
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(f"{base}/accounts/login/")
        page.screenshot(path=str(PAGES / f"login-{width_name}.png"), full_page=True)
        page.fill("#id_username", "ada")
        page.fill("#id_password", "pw")
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/w/**")
        for state in ("empty", "full"):
            pages = dict(WORKSPACE_PAGES)
            if state == "full":
                pages |= THING_PAGES
            for name, path in pages.items():
                url = base + path.format(ws=state, **workspaces)
                answer = page.goto(url)
                assert answer.status == 200, (state, name, answer.status)
                page.screenshot(
                    path=str(PAGES / f"{state}-{name}-{width_name}.png"), full_page=True
                )
                overflow = page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 1, (
                    f"{state} {name} at {width}px scrolls sideways by {overflow}px"
                )
                if state == "empty" and name in EMPTY_SAYS:
                    assert EMPTY_SAYS[name] in page.inner_text("main"), (
                        name,
                        page.inner_text("main"),
                    )
        page.close()
    assert Memory.objects.filter(workspace__slug="empty").count() == 0


ADMIN_LISTS = [
    "memories/memory",
    "memories/provenanceevent",
    "memories/workspace",
    "memories/scope",
    "memories/agent",
    "memories/membership",
    "memories/entity",
    "memories/link",
    "consolidation/consolidationrun",
    "memories/thread",
    "consolidation/supersessionproposal",
]


def test_every_admin_list_fits_a_1400_px_screen(browser, live_server, workspaces):  # noqa: F811
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    base = live_server.url
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw")
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")
    page.screenshot(path=str(PAGES / "admin-index.png"), full_page=True)
    for model in ADMIN_LISTS:
        answer = page.goto(f"{base}/admin/{model}/")
        assert answer.status == 200, model
        page.screenshot(path=str(PAGES / f"admin-{model.replace('/', '-')}.png"), full_page=True)
        overflow = page.evaluate(
            "(() => { const box = document.querySelector('#changelist .results');"
            " return box ? box.scrollWidth - box.clientWidth : 0; })()"
        )
        assert overflow <= 0, f"{model}: the list is {overflow} px wider than its box"
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0, model
