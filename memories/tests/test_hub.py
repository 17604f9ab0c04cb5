"""An entity's page as the team's hub (what is true now, what changed and its undo, what is
promised and ahead, who else, which conversations) and a conversation's page; both 404 for
another workspace's, and a viewer sees and may post no curator control."""

from datetime import timedelta

import pytest
from django.utils import timezone

from meaning_memory.testing import make_actor
from memories.models import Memory, ProvenanceEvent
from memories.operations import memory_remember
from memories.services import entity_declare
from memories.tests.test_dashboard import member

SESSION = "orion/call 1 · ünïcode"
SPEAKERS = (
    "Ana Ruiz", "Ben Okoro", "Cleo Marsh", "Dev Patel", "Eli Stone", "Fay Lindqvist",
    "Gus Moreau", "Hana Sato", "Ivo Brandt", "Jae Kim", "Kofi Mensah", "Lena Vogel",
)  # fmt: skip


@pytest.fixture
def orion(alice):
    """Orion Health, a customer: a fact superseded by a plain correction, a current plan, a
    commitment, a renewal dated ahead, Priya speaking in a call, and a note of another
    customer's."""
    workspace = alice.agent.workspace_id
    entity = entity_declare(workspace_id=workspace, name="Orion Health", kind="customer").entity
    entity_declare(workspace_id=workspace, name="Priya Raman", kind="person")
    old = memory_remember(
        agent=alice.agent, text="Orion Health renews in March.", session=SESSION
    ).memory
    new = memory_remember(
        agent=alice.agent,
        text="Orion Health renewal moved from March to June.",
        supersedes=old.mem_id,
        session=SESSION,
    ).memory
    plan = memory_remember(
        agent=alice.agent,
        text="Priya Raman says Orion Health is on the Enterprise plan.",
        session=SESSION,
        entities=[{"name": "Priya Raman", "type": "person"}],
    ).memory
    promise = memory_remember(
        agent=alice.agent,
        text="We promised Orion Health a data residency review.",
        category="commitment",
    ).memory
    ahead = memory_remember(
        agent=alice.agent,
        text="The new Orion Health contract starts.",
        valid_from=(timezone.now() + timedelta(days=40)).isoformat(),
    ).memory
    other = memory_remember(agent=alice.agent, text="Kestrel pays by card.").memory
    return {"entity": entity, "old": old, "new": new, "plan": plan, "promise": promise,
            "ahead": ahead, "other": other}  # fmt: skip


def section(page: str, heading: str) -> str:
    """The page's text from a heading to the next one of its level."""
    start = page.index(f"<h2>{heading}")
    rest = page[start + 4 :]
    return rest[: rest.find("<h2") if "<h2" in rest else len(rest)]


def test_the_hub_says_what_is_true_now_what_changed_and_what_is_ahead(client, alice, orion):
    member(client, "carol", alice.agent.workspace, "curator")
    page = client.get(f"/w/acme/e/{orion['entity'].entity_id}").content.decode()
    now_true = section(page, "True now")
    assert orion["new"].text in now_true and orion["plan"].text in now_true
    assert orion["old"].text not in now_true and orion["ahead"].text not in now_true
    changed = section(page, "What changed")
    assert orion["old"].text in changed and orion["new"].text in changed
    assert "agent:alice" in changed and "Undo (curator)" in changed
    assert orion["promise"].text in section(page, "Promised")
    assert orion["ahead"].text in section(page, "Ahead")
    related = section(page, "People and related")
    assert "Priya Raman" in related and "person" in related
    conversations = section(page, "Conversations")
    assert "/w/acme/s/orion/call%201%20%C2%B7%20%C3%BCn%C3%AFcode" in conversations
    assert orion["other"].text not in page
    timeline = page[page.index('id="timeline"') :]
    assert orion["old"].text in timeline and "superseded" in timeline


def test_a_curator_undoes_a_supersession_from_the_customers_page(client, alice, orion):
    member(client, "carol", alice.agent.workspace, "curator")
    url = f"/w/acme/e/{orion['entity'].entity_id}"
    missing = client.post(url, {"undo": orion["old"].mem_id, "reason": "  "})
    said = section(missing.content.decode(), "What changed")
    assert missing.status_code == 200 and "A reason is required: say why." in said
    orion["old"].refresh_from_db()
    assert orion["old"].status == Memory.Status.SUPERSEDED
    done = client.post(url, {"undo": orion["old"].mem_id, "reason": "June was a typo."})
    assert done.status_code == 302
    orion["old"].refresh_from_db()
    assert orion["old"].status == Memory.Status.ACTIVE and orion["old"].superseded_by is None
    restored = ProvenanceEvent.objects.get(memory=orion["old"], action="restore")
    assert "June was a typo." in restored.reason and restored.user.username == "carol"
    page = client.get(url).content.decode()
    assert "undone: true again" in section(page, "What changed")
    assert orion["old"].text in section(page, "True now")
    again = client.post(url, {"undo": orion["old"].mem_id, "reason": "twice"})
    assert again.status_code == 200
    assert "is active, not superseded" in section(again.content.decode(), "What changed")


@pytest.mark.parametrize("target", ["other", "unknown", "foreign"])
def test_an_undo_of_a_memory_the_page_does_not_hold_is_a_404(client, alice, orion, target):
    """A memory that does not mention the customer, no memory, or another workspace's: 404,
    and nothing changes."""
    member(client, "carol", alice.agent.workspace, "curator")
    mem_id = {"other": orion["other"].mem_id, "unknown": "m_nonexistent"}.get(target)
    if target == "foreign":
        globex = make_actor("globex", "gina")
        entity_declare(workspace_id=globex.agent.workspace_id, name="Orion Health", kind="customer")
        first = memory_remember(agent=globex.agent, text="Orion Health renews in May.").memory
        memory_remember(
            agent=globex.agent, text="Orion Health renews in July.", supersedes=first.mem_id
        )
        mem_id = first.mem_id
    response = client.post(
        f"/w/acme/e/{orion['entity'].entity_id}", {"undo": mem_id, "reason": "forged"}
    )
    assert response.status_code == 404
    assert not ProvenanceEvent.objects.filter(action="restore").exists()


def test_a_viewer_sees_the_hub_without_controls_and_may_not_undo(client, alice, orion):
    member(client, "vic", alice.agent.workspace, "viewer")
    url = f"/w/acme/e/{orion['entity'].entity_id}"
    page = client.get(url).content.decode()
    assert orion["new"].text in page and "Undo (curator)" not in page
    forged = client.post(url, {"undo": orion["old"].mem_id, "reason": "forged"})
    assert forged.status_code == 403
    orion["old"].refresh_from_db()
    assert orion["old"].status == Memory.Status.SUPERSEDED


def test_the_conversation_page_is_the_sessions_timeline_with_its_speakers(client, alice, orion):
    member(client, "vic", alice.agent.workspace, "viewer")
    memory_page = client.get(f"/w/acme/m/{orion['plan'].mem_id}").content.decode()
    link = "/w/acme/s/orion/call%201%20%C2%B7%20%C3%BCn%C3%AFcode"
    assert f'href="{link}"' in memory_page
    page = client.get(link).content.decode()
    assert page.count("<h1>") == 1 and "ünïcode" in page
    timeline = page[page.index('id="timeline"') :]
    texts = [orion[k].text for k in ("old", "new", "plan")]
    assert [timeline.index(t) for t in texts] == sorted(timeline.index(t) for t in texts)
    assert orion["promise"].text not in page
    assert "Orion Health" in section(page, "People and related")
    assert orion["old"].text in section(page, "What changed")
    assert "Undo (curator)" not in page


@pytest.mark.parametrize("session", ["nope", "globex-call", " ", "s%2F..%2F"])
def test_another_workspaces_or_an_unknown_conversation_is_a_404(client, alice, orion, session):
    member(client, "carol", alice.agent.workspace, "curator")
    globex = make_actor("globex", "gina")
    memory_remember(agent=globex.agent, text="Globex's own call.", session="globex-call")
    assert client.get(f"/w/acme/s/{session}").status_code == 404
    assert client.get(f"/w/globex/s/{SESSION}").status_code == 404


def test_another_workspaces_entity_is_a_404(client, alice, orion):
    member(client, "carol", alice.agent.workspace, "curator")
    globex = make_actor("globex", "gina")
    theirs = entity_declare(
        workspace_id=globex.agent.workspace_id, name="Orion Health", kind="customer"
    ).entity
    assert client.get(f"/w/acme/e/{theirs.entity_id}").status_code == 404
    assert client.get(f"/w/globex/e/{orion['entity'].entity_id}").status_code == 404


def test_an_entity_with_no_memory_teaches_what_fills_the_page(client, alice):
    member(client, "carol", alice.agent.workspace, "curator")
    entity = entity_declare(
        workspace_id=alice.agent.workspace_id, name="Nobody Yet", kind="customer"
    ).entity
    page = client.get(f"/w/acme/e/{entity.entity_id}").content.decode()
    assert "No memory you can see mentions Nobody Yet yet" in page
    assert "Nothing has changed yet" in page and "Nothing is true now" in page


def test_a_search_hit_names_its_customer_and_conversation_and_date(client, alice, orion):
    member(client, "vic", alice.agent.workspace, "viewer")
    page = client.get("/w/acme/search", {"query": "Orion renewal June"}).content.decode()
    row = page[page.index(orion["new"].text) :]
    row = row[: row.index("</tr>")]
    assert f'href="/w/acme/e/{orion["entity"].entity_id}">Orion Health</a>' in row
    assert 'href="/w/acme/s/orion/call%201%20%C2%B7%20%C3%BCn%C3%AFcode"' in row
    assert orion["new"].created_at.strftime("%Y-%m-%d") in row
    assert "More filters" in page and 'class="filters"' in page


def test_marks_eligibility_validity_and_links_read_in_plain_words(client, alice, orion):
    """A legend beside the STARE marks (and the five scores on hover), "in the compiled file"
    rather than "yes", a window in words, and "the engine" once for an automatic link."""
    member(client, "vic", alice.agent.workspace, "viewer")
    search = client.get("/w/acme/search", {"query": "Orion renewal"}).content.decode()
    assert "What the STARE marks say" in search and 'title="[S' in search
    assert "in the compiled file" in search and "<td>yes</td>" not in search
    page = client.get(f"/w/acme/m/{orion['ahead'].mem_id}").content.decode()
    assert "Valid from " in page and ", with no end." in page and "from always" not in page
    supersedes = client.get(f"/w/acme/m/{orion['new'].mem_id}").content.decode()
    links = supersedes[supersedes.index('<table class="links">') :]
    assert "<td>the engine</td>" in links and ">engine<" not in links
    listing = client.get("/w/acme/memories").content.decode()
    assert "What the STARE marks say" in listing


def test_an_empty_page_says_how_to_turn_its_feature_on(client, alice, settings):
    """Divergences and threads, switched off, say which setting turns them on; proposals say
    what makes one and how to run consolidation."""
    settings.MM_DIVERGENCE = False
    settings.MM_OPEN_THREADS = False
    member(client, "vic", alice.agent.workspace, "viewer")
    assert "MM_DIVERGENCE=true" in client.get("/w/acme/divergences").content.decode()
    assert "MM_OPEN_THREADS=true" in client.get("/w/acme/threads").content.decode()
    proposals = client.get("/w/acme/consolidation/proposals").content.decode()
    assert "meaning-memory consolidate --workspace acme" in proposals


def test_true_now_is_grouped_by_what_each_memory_is_about(client, alice):
    """Each memory true now is in one group: the person or product most of them name beside
    the customer, or the customer itself; the counts add up, and a person's role is read from
    the notes (the newest that gives one)."""
    workspace = alice.agent.workspace_id
    orion = entity_declare(workspace_id=workspace, name="Orion Health", kind="customer").entity
    for name, kind in (("Dana Reyes", "person"), ("Vault Sync", "product")):
        entity_declare(workspace_id=workspace, name=name, kind=kind)
    texts = {
        "dana_role": "Dana Reyes, CTO of Orion Health, runs the SSO rollout.",
        "dana_pref": "Dana Reyes prefers a written summary after each call with Orion Health.",
        "dana_new": "At Orion Health, Dana Reyes is now their main contact for renewals.",
        "vault_1": "Orion Health uses Vault Sync for nightly exports.",
        "vault_2": "Vault Sync at Orion Health fails on files over 2 GB.",
        "itself_1": "Orion Health has 400 seats.",
        "itself_2": "Orion Health is headquartered in Leeds.",
        "once": "Orion Health asked about Kestrel Analytics once.",
    }
    mem = {key: memory_remember(agent=alice.agent, text=text).memory for key, text in texts.items()}
    member(client, "vera", alice.agent.workspace, "viewer")
    page = client.get(f"/w/acme/e/{orion.entity_id}").content.decode()
    now_true = section(page, "True now")
    cards = now_true.split('<div class="card">')[1:]
    titles = [card[: card.index("</h3>")] for card in cards]
    assert "Orion Health itself" in titles[0] and "(3)" in titles[0]
    assert "Dana Reyes" in titles[1] and "person" in titles[1] and "(3)" in titles[1]
    assert "Vault Sync" in titles[2] and "(2)" in titles[2]
    assert len(cards) == 3  # Kestrel, named once, is no group of its own
    for key, card in (("dana_pref", 1), ("vault_2", 2), ("once", 0), ("itself_1", 0)):
        assert mem[key].text in cards[card], key
    assert sum(card.count("<li>") for card in cards) == len(texts)
    related = section(page, "People and related")
    dana = related[related.index("Dana Reyes") :]
    assert dana.index("main contact") < dana.index("</a>")  # the newest note that says one
    assert "CTO" not in related  # an older role, said before
    vault = related[related.index("Vault Sync") :]
    assert 'class="role"' not in vault[: vault.index("</a>")]  # a product has no role


def test_the_hubs_statements_do_not_grow_with_what_it_lists(client, alice):
    """Commitments and dates ahead said by people: who said each is read with it, so twelve
    cost the page what one does."""
    workspace = alice.agent.workspace_id
    orion = entity_declare(workspace_id=workspace, name="Orion Health", kind="customer").entity
    member(client, "vera", alice.agent.workspace, "viewer")
    url = f"/w/acme/e/{orion.entity_id}"
    ahead = (timezone.now() + timedelta(days=30)).isoformat()

    def write(first: int, last: int) -> None:
        for i in range(first, last):
            for extra in ({"category": "commitment"}, {"valid_from": ahead}):
                memory_remember(
                    agent=alice.agent, text=f"Orion Health gets review {i} ({len(extra)}).",
                    attributed_to=SPEAKERS[i], **extra,
                )  # fmt: skip

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    write(0, 1)
    with CaptureQueriesContext(connection) as one:
        assert client.get(url).status_code == 200
    write(1, 12)
    with CaptureQueriesContext(connection) as twelve:
        page = client.get(url)
    assert f"said by {SPEAKERS[11]}" in page.content.decode()
    assert len(twelve.captured_queries) == len(one.captured_queries)
