import pytest
from django.contrib.auth import get_user_model

from memories import services
from memories.models import Membership, Memory, ProvenanceEvent
from memories.operations import memory_remember

RENEWAL = "Zephyr Logistics renews its support contract every March."


def member(client, name, workspace, role):
    user = get_user_model().objects.create_user(name, password="pw")
    Membership.objects.create(user=user, workspace=workspace, role=role)
    client.force_login(user)
    return user


@pytest.fixture
def curator(client, alice):
    member(client, "carol", alice.agent.workspace, "curator")
    return client


@pytest.fixture
def viewer(client, alice):
    member(client, "vic", alice.agent.workspace, "viewer")
    return client


def test_anonymous_users_are_sent_to_log_in(client, db):
    response = client.get("/w/acme/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_log_in_and_land_on_the_first_workspace(client, alice):
    user = get_user_model().objects.create_user("carol", password="pw")
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="viewer")

    response = client.post("/accounts/login/", {"username": "carol", "password": "pw"}, follow=True)

    assert response.redirect_chain[-1][0] == "/w/acme/"
    assert b"You are viewer" in response.content


def test_curator_searches_demotes_with_a_reason_and_sees_the_history(curator, alice):
    memory = memory_remember(agent=alice.agent, text=RENEWAL, category="commitment").memory
    memory_remember(agent=alice.agent, text="Zephyr's contact is Dana.", category="fact")

    page = curator.get("/w/acme/search", {"query": "Zephyr contract", "category": "commitment"})
    assert RENEWAL.encode() in page.content and b"Dana" not in page.content
    # Why it is there, in words: the sources that found it and the pieces that placed it.
    why = page.content.decode()
    assert "found by vector and keyword; placed by fusion → neighbour →" in why
    assert "pieces:" not in why and "{&#x27;found_by" not in why

    curator.post(
        f"/w/acme/m/{memory.mem_id}/feedback",
        {"action": "demote", "reason": "budget moved to April"},
    )
    detail = curator.get(f"/w/acme/m/{memory.mem_id}").content.decode()

    memory.refresh_from_db()
    assert memory.significance == 0.4
    assert "budget moved to April" in detail and "user:carol" in detail
    event = ProvenanceEvent.objects.get(memory=memory, action="demote")
    assert event.user.username == "carol"


def test_pin_shows_as_protected_in_the_compiled_file_page(curator, alice):
    memory = memory_remember(agent=alice.agent, text=RENEWAL, significance=0.1).memory

    curator.post(f"/w/acme/m/{memory.mem_id}/feedback", {"action": "pin", "reason": "key"})
    page = curator.get("/w/acme/compiled").content.decode()

    row = page[page.index('<table class="included">') :]
    row = row[row.index(f'href="/w/acme/m/{memory.mem_id}"') :]
    row = row[: row.index("</tr>")]
    assert RENEWAL in row  # each line's text, not a bare id
    assert '<td>0.1</td><td class="wide">0.1</td><td>protected</td>' in row
    download = curator.get("/w/acme/compiled", {"download": "1"})
    assert download["Content-Disposition"] == 'attachment; filename="MEMORY-acme.md"'
    assert RENEWAL in download.content.decode()


def test_an_empty_reason_changes_nothing(curator, alice):
    memory = memory_remember(agent=alice.agent, text=RENEWAL).memory

    response = curator.post(
        f"/w/acme/m/{memory.mem_id}/feedback", {"action": "pin", "reason": "  "}, follow=True
    )

    assert b"A reason is required: say why." in response.content
    memory.refresh_from_db()
    assert not memory.pinned


def test_a_viewer_sees_no_feedback_and_a_forged_post_is_refused(viewer, alice):
    memory = memory_remember(agent=alice.agent, text=RENEWAL).memory

    page = viewer.get(f"/w/acme/m/{memory.mem_id}")
    forged = viewer.post(f"/w/acme/m/{memory.mem_id}/feedback", {"action": "pin", "reason": "x"})

    assert page.status_code == 200 and b'class="inline feedback"' not in page.content
    assert forged.status_code == 403
    memory.refresh_from_db()
    assert not memory.pinned


def test_another_workspace_is_a_404(client, alice, charlie):
    theirs = memory_remember(agent=charlie.agent, text="Globex secret.").memory
    mine = memory_remember(agent=alice.agent, text=RENEWAL).memory
    member(client, "carol", alice.agent.workspace, "curator")

    assert client.get("/w/globex/").status_code == 404
    assert client.get(f"/w/acme/m/{theirs.mem_id}").status_code == 404
    assert client.get(f"/w/globex/m/{mine.mem_id}").status_code == 404
    assert (
        client.post(
            f"/w/acme/m/{theirs.mem_id}/feedback", {"action": "pin", "reason": "x"}
        ).status_code
        == 404
    )


def test_out_of_range_filters_are_form_errors(curator, alice):
    page = curator.get("/w/acme/search", {"query": "Zephyr", "min_s_score": "2", "limit": "0"})

    assert page.status_code == 200
    content = page.content.decode()
    assert "must be between 0 and 1 (got 2.0)." in content
    assert "must be between 1 and 100 (got 0)." in content
    compiled = curator.get("/w/acme/compiled", {"budget": "5"})
    assert compiled.status_code == 200
    # The page says what the API says (the serializer's rule), and the browser gets the bounds.
    assert "must be between 200 and 200000 tokens (got 5)." in compiled.content.decode()
    assert 'min="200"' in compiled.content.decode()


def test_the_search_and_memory_pages_run_a_bounded_number_of_queries(
    curator, alice, django_assert_max_num_queries
):
    for n in range(3):
        memory_remember(agent=alice.agent, text=f"Zephyr note {n}.")
    curator.get("/w/acme/search", {"query": "Zephyr note"})  # statistics, Eligible line
    with django_assert_max_num_queries(20) as few:
        curator.get("/w/acme/search", {"query": "Zephyr note", "limit": "50"})
    search_baseline = len(few.captured_queries)
    assert search_baseline > 0
    for n in range(30):
        memory_remember(agent=alice.agent, text=f"Zephyr memo {n}.")
    with django_assert_max_num_queries(search_baseline):
        page = curator.get("/w/acme/search", {"query": "Zephyr note", "limit": "50"})
    assert page.content.count(b"/w/acme/m/") > 20  # every hit listed, linked to its page
    assert b'class="inline feedback"' not in page.content  # feedback is on the memory's page

    memory = Memory.objects.first()
    curator.post(f"/w/acme/m/{memory.mem_id}/feedback", {"action": "important", "reason": "r"})
    curator.get(f"/w/acme/m/{memory.mem_id}")
    with django_assert_max_num_queries(30) as one_event:
        assert curator.get(f"/w/acme/m/{memory.mem_id}").status_code == 200
    baseline = len(one_event.captured_queries)
    assert baseline > 0
    for n in range(5):
        curator.post(f"/w/acme/m/{memory.mem_id}/feedback", {"action": "demote", "reason": f"r{n}"})
    with django_assert_max_num_queries(baseline):
        assert curator.get(f"/w/acme/m/{memory.mem_id}").status_code == 200


def test_curators_create_agents_and_revoke_tokens(curator, alice):
    created = curator.post("/w/acme/agents", {"name": "scribe", "scopes": "team:accounts"})

    assert b"New token, shown once: <code>mm_" in created.content
    scribe = alice.agent.workspace.agents.get(name="scribe")
    assert list(scribe.scopes.values_list("name", flat=True)) == ["team:accounts"]
    curator.post("/w/acme/agents", {"revoke": scribe.pk})
    scribe.refresh_from_db()
    assert not scribe.is_active


def test_overview_counts_and_charts(curator, alice):
    memory_remember(agent=alice.agent, text=RENEWAL, category="commitment")
    page = curator.get("/w/acme/").content.decode()
    assert "1 memory." in page and "<svg" in page and "commitment" in page


def test_the_workspace_switcher_works_without_javascript(curator, alice):
    assert curator.get("/", {"ws": "acme"})["Location"] == "/w/acme/"
    assert curator.get("/", {"ws": "a/b c"}).status_code == 404
    assert curator.get("/", {"ws": "nope"}, follow=True).status_code == 404


def test_feedback_goes_back_only_to_this_site(curator, alice):
    memory = memory_remember(agent=alice.agent, text=RENEWAL).memory
    url = f"/w/acme/m/{memory.mem_id}/feedback"

    outside = curator.post(url, {"action": "pin", "reason": "r", "next": "//evil.example/x"})
    inside = curator.post(url, {"action": "unpin", "reason": "r", "next": "/w/acme/search?q=1"})

    assert outside["Location"] == f"/w/acme/m/{memory.mem_id}"
    assert inside["Location"] == "/w/acme/search?q=1"


def test_agents_page_refuses_bad_and_foreign_revocations(client, alice, charlie):
    member(client, "carol", alice.agent.workspace, "curator")

    assert client.post("/w/acme/agents", {"revoke": "abc"}).status_code == 404
    assert client.post("/w/acme/agents", {"revoke": ""}).status_code == 404
    assert client.post("/w/acme/agents", {"revoke": str(charlie.agent.pk)}).status_code == 404
    charlie.agent.refresh_from_db()
    assert charlie.agent.is_active
    long_name = client.post("/w/acme/agents", {"name": "x" * 120})
    assert b"Ensure this value has at most 112 characters" in long_name.content


def test_a_viewer_cannot_manage_agents(viewer, alice):
    assert viewer.post("/w/acme/agents", {"name": "sneaky"}).status_code == 403
    assert viewer.post("/w/acme/agents", {"revoke": str(alice.agent.pk)}).status_code == 403
    alice.agent.refresh_from_db()
    assert alice.agent.is_active and not alice.agent.workspace.agents.filter(name="sneaky")


@pytest.mark.parametrize(
    "path",
    [
        "/w/globex/",
        "/w/globex/search",
        "/w/globex/compiled",
        "/w/globex/agents",
        "/w/acme/m/%00",
        "/w/acme/m/nothex",
    ],
)
def test_pages_of_another_workspace_or_bad_ids_are_404(curator, charlie, path):
    assert curator.get(path).status_code == 404


def test_the_memory_page_shows_the_whole_supersession_chain(curator, alice):
    first = memory_remember(agent=alice.agent, text="Closes at 17:00.").memory
    second = memory_remember(
        agent=alice.agent, text="Closes at 18:00.", supersedes=first.mem_id
    ).memory
    third = memory_remember(
        agent=alice.agent, text="Closes at 19:00.", supersedes=second.mem_id
    ).memory

    page = curator.get(f"/w/acme/m/{first.mem_id}").content.decode()
    latest = curator.get(f"/w/acme/m/{third.mem_id}").content.decode()

    assert page.index(second.mem_id) < page.index(third.mem_id)
    assert f'Superseded by <a href="/w/acme/m/{third.mem_id}"' in page
    assert f'Supersedes <a href="/w/acme/m/{first.mem_id}"' in latest
    first.refresh_from_db()  # its window closed where the next began, said in words
    until = first.valid_until.strftime("%Y-%m-%d %H:%M")
    assert f'aria-label="Validity: valid until {until}"' in page


def test_the_overview_chart_has_every_week_and_a_search_needs_a_query(curator, alice):
    memory_remember(agent=alice.agent, text=RENEWAL, significance=1.0)

    page = curator.get("/w/acme/").content.decode()
    empty = curator.get("/w/acme/search", {"category": "fact"}).content.decode()

    weekly = page.split('aria-label="Memories written per week:')[1].split("</svg>")[0]
    assert weekly.count("<rect") == 12
    histogram = page.split('aria-label="Active memories by significance:')[1].split("</svg>")[0]
    assert "<title>0.9: 1</title>" in histogram
    assert "Type what you are looking for." in empty


def test_sources_page_lists_records_and_a_source_shows_the_events_behind_it(curator, alice):
    agent = alice.agent
    written = [
        memory_remember(
            agent=agent, text=f"Ledger figure {n}.", source="ledger", scope="team:accounts"
        ).memory
        for n in range(3)
    ]
    services.memory_feedback(
        agent=agent, mem_id=written[0].mem_id, action="important", reason="audited"
    )
    services.memory_feedback(agent=agent, mem_id=written[1].mem_id, action="demote", reason="typo")
    cued = memory_remember(
        agent=agent, text="According to Maria Lopez, the renewal is in May."
    ).memory

    page = curator.get("/w/acme/sources")
    assert page.status_code == 200
    body = page.content.decode()
    assert "ledger" in body and "Maria Lopez" in body and "prior" in body
    assert "does not change ranking" in body
    only = curator.get("/w/acme/sources", {"kind": "entity"}).content.decode()
    assert "Maria Lopez" in only and ">ledger<" not in only
    assert "No sources match" in curator.get("/w/acme/sources", {"query": "zzz"}).content.decode()

    detail = curator.get("/w/acme/sources/writer/ledger").content.decode()
    assert "audited" in detail and "typo" in detail and "wrong" in detail
    entity_id = cued.attributed_to.entity_id
    assert curator.get(f"/w/acme/sources/entity/{entity_id}").status_code == 200
    memory_page = curator.get(f"/w/acme/m/{cued.mem_id}").content.decode()
    assert "Maria Lopez" in memory_page and "cue: “According to Maria Lopez”" in memory_page
    assert f"/w/acme/sources/entity/{entity_id}" in memory_page


def test_sources_pages_of_another_workspace_or_unknown_sources_are_404(curator, alice, charlie):
    memory_remember(agent=charlie.agent, text="Globex figure.", source="globex-ledger")
    assert curator.get("/w/globex/sources").status_code == 404
    assert curator.get("/w/acme/sources/writer/globex-ledger").status_code == 404
    assert curator.get("/w/acme/sources/writer/nobody").status_code == 404
    assert curator.get("/w/acme/sources/team/ledger").status_code == 404
    empty = curator.get("/w/acme/sources").content.decode()
    assert "No sources yet" in empty


def test_the_memories_page_browses_without_a_query(viewer, alice, bob):
    empty = viewer.get("/w/acme/memories").content.decode()
    assert "No memories yet" in empty and "createagent --workspace acme" in empty
    written = [
        memory_remember(agent=alice.agent, text=f"Warehouse note {n}.", significance=0.1 + n / 40)
        for n in range(30)
    ]
    memory_remember(agent=bob.agent, text="Bob's decision.", category="decision")
    first = viewer.get("/w/acme/memories").content.decode()
    assert "Page 1 of 2 (31 memories)" in first and "Bob&#x27;s decision." in first
    assert "Warehouse note 0." not in first  # the oldest is on the second page
    second = viewer.get("/w/acme/memories", {"page": 2}).content.decode()
    assert "Warehouse note 0." in second
    top = viewer.get("/w/acme/memories", {"ordering": "significance"}).content.decode()
    assert top.index("Warehouse note 29.") < top.index("Warehouse note 28.")
    decisions = viewer.get("/w/acme/memories", {"category": "decision"}).content.decode()
    assert "Bob&#x27;s decision." in decisions and "Warehouse" not in decisions
    assert "Page 1 of 1 (1 memory)" in decisions
    assert "category=decision&amp;page=" not in decisions  # one page: no links
    bad = viewer.get("/w/acme/memories", {"min_s_score": "2"}).content.decode()
    assert "must be between 0 and 1" in bad and "fix the filters" in bad
    forgotten = written[0].memory
    services.memory_forget(agent=alice.agent, mem_id=forgotten.mem_id, reason="wrong")
    assert "Warehouse note 0." not in viewer.get("/w/acme/memories", {"page": 2}).content.decode()
    assert viewer.get("/w/globex/memories").status_code == 404


def test_history_reads_as_changes_and_counts_leave_out_forgotten_memories(curator, alice):
    kept = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory
    gone = memory_remember(agent=alice.agent, text="A wrong note.").memory
    services.memory_feedback(agent=alice.agent, mem_id=kept.mem_id, action="pin", reason="key")
    services.memory_forget(agent=alice.agent, mem_id=gone.mem_id, reason="wrong")
    page = curator.get(f"/w/acme/m/{kept.mem_id}").content.decode()
    assert "pinned: no → yes" in page and "{&#x27;pinned&#x27;" not in page
    overview = curator.get("/w/acme/").content.decode()
    assert "Zephyr renews in March." in overview  # recent changes say what the memory says
    from memories.selectors import workspace_overview

    assert workspace_overview(alice.agent.workspace).total == 1
    found = curator.get("/w/acme/search", {"query": "Zephyr"}).content.decode()
    assert "pinned" in found and "📌" not in found


def test_charts_have_axes_values_and_titles_and_say_when_empty(viewer, alice):
    empty = viewer.get("/w/acme/").content.decode()
    assert (
        "Nothing to chart yet." in empty and "<svg" not in empty.split("Written per week")[1][:200]
    )
    for n in range(3):
        memory_remember(agent=alice.agent, text=f"Note {n}.", significance=0.85)
    page = viewer.get("/w/acme/").content.decode()
    chart = page.split("Significance of active memories")[1].split("</svg>")[0]
    assert "<title>Active memories by significance</title>" in chart
    assert "<title>0.8: 3</title>" in chart  # a bar's hover value
    assert ">3</text>" in chart and ">0</text>" in chart  # its value and the axis's ends
