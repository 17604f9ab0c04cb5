"""Divergence detection (built, off: MM_DIVERGENCE): the rules, a run over a workspace (what it
examines, what it flags, what it writes and never deletes), the optional model behind a local
server that speaks the chat-completions protocol, the REST list, the MCP tool, the command, and
the dashboard where curators resolve or dismiss; never across a workspace or into a scope the
reader cannot see."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from meaning_memory.testing import make_member
from memories.divergence.detectors import STRENGTH, assess, rules
from memories.divergence.slots import differ
from memories.errors import Forbidden
from memories.models import Divergence, DivergenceScan, Link, Memory, ProvenanceEvent
from memories.operations import memory_remember
from memories.services.divergence import divergence_close, divergence_run
from memories.tests.test_dashboard import member

SHARED = "team:accounts"


@pytest.fixture
def detection(settings):
    settings.MM_DIVERGENCE = True
    settings.MM_ENTITY_EXTRACTION = False  # only the entities each test names
    return settings


def remember(actor, text, *names, scope=SHARED, **fields):
    entities = [{"name": name, "type": "customer"} for name in names]
    return memory_remember(
        agent=actor.agent, text=text, entities=entities, scope=scope, **fields
    ).memory


# --- The rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "rule"),
    [
        ("Zephyr renews in March.", "Zephyr renews in June.", "attribute"),
        ("Zephyr is on the gold plan.", "Zephyr is on the silver plan.", "attribute"),
        ("Billing is owned by Dana.", "Billing is owned by Ravi.", "attribute"),
        (
            "The Zephyr deal is worth $40k a year.",
            "The Zephyr deal is worth $55k a year.",
            "slot",
        ),
        # Hedged on both sides: not two values asserted of one slot, but two figures that differ.
        (
            "Zephyr may raise prices by 5% this year.",
            "Zephyr may raise prices by 8% this year.",
            "number",
        ),
        ("Zephyr will renew the contract.", "Zephyr will not renew the contract.", "negation"),
        ("Zephyr accepted the new terms.", "Zephyr rejected the new terms.", "antonym"),
    ],
)
def test_each_rule_fires_on_a_disagreement_and_names_it(first, second, rule):
    fired = rules(first, second)
    assert fired and fired[0]["rule"] == rule, fired
    assert rules(first, first) == []  # a text never disagrees with itself


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Zephyr renews in March.", "The Zephyr renewal is due in March."),
        ("The Zephyr contract is worth $40k a year.", "Globex pays $55k for a different product."),
        ("Zephyr will not renew.", "Globex does not like the lunch menu."),  # nothing in common
    ],
)
def test_agreeing_or_unrelated_texts_fire_no_rule(first, second):
    assert rules(first, second) == []


def test_the_score_joins_similarity_and_the_strongest_rule():
    disagreeing = assess("Zephyr renews in March.", "Zephyr renews in June.", 0.8)
    assert disagreeing.score == pytest.approx((0.8 + 0.9) / 2)
    assert disagreeing.detector == "rules"
    agreeing = assess("Zephyr renews in March.", "Zephyr renews in March, confirmed.", 0.9)
    assert agreeing.score == pytest.approx(0.45) and agreeing.detector == "geometry"
    assert assess("a", "b", 0.5, model=0.9).score == pytest.approx((0.25 + 0.9) / 2)


def test_the_slot_rule_reads_two_values_of_one_slot_in_either_order():
    march, june = "Orion Health renews in March.", "Orion Health renews in June."
    assert differ(march, june) == {
        "reading": "written",
        "slot": "month",
        "values": [["march"], ["june"]],
    }
    assert differ(june, march)["values"] == [["june"], ["march"]]
    fired = {rule["rule"]: rule for rule in rules(march, june)}
    assert fired["slot"]["strength"] == STRENGTH["slot"]
    assert differ(march, march) is None


@pytest.mark.parametrize(
    ("first", "second", "slot", "values"),
    [
        # Spoken values: a time, a count of people, where a trip starts.
        (
            "Book a table for 4 people at 7 pm.",
            "Book a table for 4 people at 8 pm.",
            "time",
            [["7 pm"], ["8 pm"]],
        ),
        ("We need a cab for two people.", "We need a cab for three people.", "count (people)",
         [["two people"], ["three people"]]),
        ("I want to fly out from Denver.", "I want to fly out from Austin.", "place (origin)",
         [["Denver"], ["Austin"]]),
    ],
)  # fmt: skip
def test_the_slot_rule_reads_spoken_values_with_their_roles(first, second, slot, values):
    found = differ(first, second)
    assert found is not None and (found["slot"], found["values"]) == (slot, values), found


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # A licence fee and a support fee: two things, each its own value.
        (
            "Blue Ridge Savings Bank pays a licence fee of $40,000 a year.",
            "Blue Ridge Savings Bank pays a support fee of $8,000 a year.",
        ),
        # Offices in two cities: a place something is in has many values.
        ("Marlow & Finch has offices in Berlin.", "Marlow & Finch has offices in Paris."),
        # The firm's 200 lawyers and a pilot of 20 (a plan, of another group).
        (
            "Marlow & Finch is a law firm in London with 200 lawyers.",
            "Marlow & Finch will pilot the contract search feature with 20 lawyers.",
        ),
        # A hedge does not assert its value.
        ("Zephyr renews in March.", "Zephyr may renew in June."),
        # The same value said two ways.
        ("Zephyr renews in March.", "The Zephyr renewal is due in March."),
    ],
)
def test_the_slot_rule_leaves_values_of_different_things_or_not_asserted(first, second):
    assert differ(first, second) is None and differ(second, first) is None
    assert "slot" not in {rule["rule"] for rule in rules(first, second)}


# --- A run ---------------------------------------------------------------------------------------


def test_a_run_flags_a_disagreement_between_writers_and_deletes_nothing(alice, bob, detection):
    march = remember(alice, "Zephyr renews its support contract in March.", "Zephyr")
    june = remember(bob, "Zephyr renews its support contract in June.", "Zephyr")
    same_writer = remember(alice, "Zephyr renews its support contract in May.", "Zephyr")
    unrelated = remember(bob, "Globex renews its support contract in July.", "Globex")
    significance = dict(Memory.objects.values_list("mem_id", "significance"))

    result = divergence_run(workspace=alice.agent.workspace)

    # alice/alice is never examined (one writer); Globex shares no entity or link.
    found = {(p.first.mem_id, p.second.mem_id) for p in result.flagged}
    assert (march.mem_id, june.mem_id) in found and (june.mem_id, same_writer.mem_id) in found
    assert (march.mem_id, same_writer.mem_id) not in found
    assert not any(unrelated.mem_id in pair for pair in found)
    divergence = Divergence.objects.get(first=march, second=june)
    assert divergence.status == "open" and divergence.detector == "rules"
    assert divergence.evidence["rules"][0]["attribute"] == "month"
    assert divergence.evidence["rules"][0]["values"] == [["march"], ["june"]]
    link = divergence.link
    assert (link.kind, link.origin, link.source_id, link.target_memory_id) == (
        "contradicts",
        Link.Origin.DIVERGENCE,
        june.pk,
        march.pk,
    )
    for memory in (march, june):
        event = ProvenanceEvent.objects.get(
            memory=memory, action="diverge", new_values__divergence_id=divergence.divergence_id
        )
        assert event.new_values["with"] == (june if memory == march else march).mem_id
    # Nothing deleted, no significance changed, every memory still active.
    assert dict(Memory.objects.values_list("mem_id", "significance")) == significance
    assert set(Memory.objects.values_list("status", flat=True)) == {"active"}

    # The next run starts after the last memory read: nothing new, nothing examined.
    again = divergence_run(workspace=alice.agent.workspace)
    assert (again.memories, again.pairs, again.flagged) == (0, 0, [])
    # Reading everything again examines no recorded pair twice.
    full = divergence_run(workspace=alice.agent.workspace, full=True)
    assert full.flagged == [] and Divergence.objects.count() == len(found)
    assert DivergenceScan.objects.get().through_id == unrelated.pk


def test_a_dry_run_writes_nothing(alice, bob, detection):
    remember(alice, "Zephyr renews its support contract in March.", "Zephyr")
    remember(bob, "Zephyr renews its support contract in June.", "Zephyr")
    events = ProvenanceEvent.objects.count()
    result = divergence_run(workspace=alice.agent.workspace, dry_run=True)
    assert len(result.flagged) == 1
    assert not Divergence.objects.exists() and not Link.objects.filter(kind="contradicts").exists()
    assert ProvenanceEvent.objects.count() == events
    assert not DivergenceScan.objects.exists()


def test_a_pair_another_run_recorded_meanwhile_is_left_as_it_was(alice, bob, detection):
    from memories.services.divergence import FoundPair, _flag

    first = remember(alice, "Zephyr renews its support contract in March.", "Zephyr")
    second = remember(bob, "Zephyr renews its support contract in June.", "Zephyr")
    found = FoundPair(first, second, assess(first.text, second.text, 0.9))
    _flag(alice.agent.workspace, found)
    _flag(alice.agent.workspace, found)  # as a second run at the same moment would
    assert Divergence.objects.count() == 1
    assert Link.objects.filter(kind="contradicts").count() == 1
    assert ProvenanceEvent.objects.filter(action="diverge").count() == 2


def test_a_link_makes_two_memories_about_the_same_thing_too(alice, bob, detection):
    first = remember(alice, "The support contract renews in March.")
    second = remember(
        bob,
        "The support contract renews in June.",
        links=[{"to": first.mem_id, "type": "relates_to"}],
    )
    result = divergence_run(workspace=alice.agent.workspace)
    assert [(p.first, p.second) for p in result.flagged] == [(first, second)]


def test_off_it_refuses_naming_the_setting_everywhere(alice, settings):
    settings.MM_DIVERGENCE = False
    with pytest.raises(Forbidden, match="MM_DIVERGENCE"):
        divergence_run(workspace=alice.agent.workspace)
    response = alice.client.get("/api/v1/divergences")
    assert response.status_code == 403 and "MM_DIVERGENCE" in response.json()["detail"]
    with pytest.raises(CommandError, match="MM_DIVERGENCE"):
        call_command("divergence", "--workspace", "acme", stdout=StringIO(), stderr=StringIO())


# --- The model, behind a local server that speaks the protocol ----------------------------------


class ChatHandler(BaseHTTPRequestHandler):
    answers: list = []
    asked: list = []

    def do_POST(self):  # noqa: N802 (the standard library's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ChatHandler.asked.append((self.path, self.headers.get("Authorization"), body))
        content = ChatHandler.answers.pop(0)
        payload = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def chat_server(detection):
    server = HTTPServer(("127.0.0.1", 0), ChatHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    ChatHandler.answers, ChatHandler.asked = [], []
    detection.MM_DIVERGENCE_MODEL_URL = f"http://127.0.0.1:{server.server_port}/v1"
    detection.MM_DIVERGENCE_MODEL_API_KEY = "sk-test"
    yield ChatHandler
    server.shutdown()


def test_a_configured_model_is_asked_and_its_answer_kept(alice, bob, chat_server):
    remember(alice, "Zephyr's account owner is the Berlin office.", "Zephyr")
    remember(bob, "Zephyr's account is looked after from Lisbon.", "Zephyr")
    chat_server.answers = ['{"contradiction": 0.92, "reason": "Berlin and Lisbon differ."}']
    result = divergence_run(workspace=alice.agent.workspace)
    path, authorization, body = chat_server.asked[0]
    assert path == "/v1/chat/completions" and authorization == "Bearer sk-test"
    assert body["messages"][1]["content"].startswith("Statement 1: Zephyr's account owner")
    assert len(result.flagged) == 1  # no rule fires: the model decided
    divergence = Divergence.objects.get()
    assert divergence.detector == "model" and divergence.evidence["model"] == 0.92
    assert divergence.evidence["rules"][-1] == {
        "rule": "model",
        "reason": "Berlin and Lisbon differ.",
    }


def test_a_model_answer_that_is_not_the_protocols_is_a_clear_error(alice, bob, chat_server):
    remember(alice, "Zephyr's account owner is the Berlin office.", "Zephyr")
    remember(bob, "Zephyr's account is looked after from Lisbon.", "Zephyr")
    chat_server.answers = ["I think they disagree."]
    with pytest.raises(CommandError, match="unexpected body"):
        call_command("divergence", "--workspace", "acme", stdout=StringIO(), stderr=StringIO())
    assert not Divergence.objects.exists()


# --- REST, MCP, the command ----------------------------------------------------------------------


@pytest.fixture
def flagged(alice, bob, charlie, detection):
    """Two divergences in acme (one with alice's private memory) and one in globex."""
    march = remember(alice, "Zephyr renews its support contract in March.", "Zephyr")
    remember(bob, "Zephyr renews its support contract in June.", "Zephyr")
    private = remember(
        alice, "Zephyr renews its support contract in April.", "Zephyr", scope="private:alice"
    )
    other = remember(charlie, "Globex renews in May.", "Globex", scope="private:charlie")
    memory_remember(
        agent=charlie.agent,
        text="Globex renews in August.",
        source="crm",
        entities=[{"name": "Globex", "type": "customer"}],
    )
    divergence_run(workspace=alice.agent.workspace)
    divergence_run(workspace=charlie.agent.workspace)
    return {"march": march, "private": private, "other": other}


def test_the_list_and_a_divergence_over_rest_show_only_what_the_reader_sees(
    alice, bob, charlie, flagged
):
    theirs = Divergence.objects.get(workspace=charlie.agent.workspace)
    with_private = Divergence.objects.filter(first=flagged["private"]) | Divergence.objects.filter(
        second=flagged["private"]
    )
    assert with_private.count() == 1
    hers = alice.client.get("/api/v1/divergences").json()
    assert hers["count"] == 2
    his = bob.client.get("/api/v1/divergences").json()
    assert his["count"] == 1  # the one between the two shared memories
    listed = his["results"][0]
    assert [m["text"] for m in listed["memories"]] == [
        "Zephyr renews its support contract in March.",
        "Zephyr renews its support contract in June.",
    ]
    assert listed["status"] == "open" and listed["evidence"]["rules"][0]["rule"] == "attribute"
    one = bob.client.get(f"/api/v1/divergences/{listed['divergence_id']}")
    assert one.status_code == 200 and one.json() == listed
    hidden = [d.divergence_id for d in with_private] + [theirs.divergence_id, "ffffffffffffffff"]
    for divergence_id in hidden:
        response = bob.client.get(f"/api/v1/divergences/{divergence_id}")
        assert response.status_code == 404 and response.json() == {
            "detail": f"no divergence {divergence_id!r}"
        }
    assert alice.client.get(f"/api/v1/divergences/{theirs.divergence_id}").status_code == 404
    assert alice.client.get("/api/v1/divergences", {"status": "resolved"}).json()["count"] == 0


@pytest.mark.parametrize(
    ("query", "field"),
    [({"status": "closed"}, "status"), ({"page_size": "0"}, "page_size"), ({"nope": "1"}, "nope")],
)
def test_bad_list_arguments_are_400s_naming_the_field(alice, detection, query, field):
    response = alice.client.get("/api/v1/divergences", query)
    assert response.status_code == 400 and field in response.json(), response.json()


def test_mcp_lists_divergences_and_refuses_when_off(bob, flagged, settings):
    from memories.mcp.tools import divergences

    result = divergences(bob.agent, {"status": "open"})
    assert not result.is_error
    assert len(result.structured_content["results"]) == 1
    assert "March" in result.content[0].text and "≠" in result.content[0].text
    settings.MM_DIVERGENCE = False
    with pytest.raises(Forbidden, match="MM_DIVERGENCE"):
        divergences(bob.agent, {})


def test_the_command_reports_what_it_read_and_flagged(alice, bob, detection):
    remember(alice, "Zephyr renews its support contract in March.", "Zephyr")
    remember(bob, "Zephyr renews its support contract in June.", "Zephyr")
    out = StringIO()
    call_command("divergence", "--workspace", "acme", "--dry-run", stdout=out, stderr=StringIO())
    assert (
        "2 memories read, 1 pairs examined" in out.getvalue() and "1 would flag" in out.getvalue()
    )
    out = StringIO()
    call_command("divergence", "--workspace", "acme", "--json", stdout=out, stderr=StringIO())
    summary = json.loads(out.getvalue())
    assert summary["memories"] == 2 and len(summary["flagged"]) == 1
    with pytest.raises(CommandError, match="no workspace 'nowhere'"):
        call_command("divergence", "--workspace", "nowhere", stdout=StringIO(), stderr=StringIO())


# --- Curators: resolve, dismiss ------------------------------------------------------------------


def test_curators_resolve_and_dismiss_on_the_dashboard(
    client, alice, bob, flagged, django_user_model
):
    carol = member(client, "carol", alice.agent.workspace, "curator")
    shared = Divergence.objects.get(first=flagged["march"], second__source="bob")
    page = client.get("/w/acme/divergences").content.decode()
    assert shared.divergence_id in page and "Resolve" in page and "Dismiss" in page

    empty = client.post(
        "/w/acme/divergences",
        {"divergence": shared.divergence_id, "status": "resolved", "reason": ""},
    )
    assert empty.status_code == 200 and "A reason is required" in empty.content.decode()
    assert Divergence.objects.get(pk=shared.pk).status == "open"

    done = client.post(
        "/w/acme/divergences",
        {"divergence": shared.divergence_id, "status": "resolved", "reason": "Bob checked the CRM"},
    )
    assert done.status_code == 302
    shared.refresh_from_db()
    assert (shared.status, shared.reason, shared.closed_by) == (
        "resolved",
        "Bob checked the CRM",
        carol,
    )
    assert shared.link.removed_at is None  # a real disagreement keeps its link
    assert (
        ProvenanceEvent.objects.filter(action="resolve", reason="Bob checked the CRM").count() == 2
    )
    again = client.post(
        "/w/acme/divergences",
        {"divergence": shared.divergence_id, "status": "dismissed", "reason": "x"},
    )
    assert "already resolved" in again.content.decode()

    other = Divergence.objects.filter(workspace=alice.agent.workspace, status="open").first()
    client.post(
        "/w/acme/divergences",
        {"divergence": other.divergence_id, "status": "dismissed", "reason": "Different contracts"},
    )
    other.refresh_from_db()
    assert other.status == "dismissed" and other.link.removed_at is not None
    assert Link.objects.filter(pk=other.link_id).exists()  # removed, not deleted
    resolved = client.get("/w/acme/divergences", {"status": "resolved"}).content.decode()
    assert "Bob checked the CRM" in resolved


def test_viewers_and_other_workspaces_cannot_close_a_divergence(client, alice, charlie, flagged):
    theirs = Divergence.objects.get(workspace=charlie.agent.workspace)
    ours = Divergence.objects.filter(workspace=alice.agent.workspace).first()
    member(client, "vic", alice.agent.workspace, "viewer")
    forged = client.post(
        "/w/acme/divergences",
        {"divergence": ours.divergence_id, "status": "resolved", "reason": "x"},
    )
    assert forged.status_code == 403
    assert 'value="resolved"' not in client.get("/w/acme/divergences").content.decode()
    client.logout()
    member(client, "carol", alice.agent.workspace, "curator")
    for divergence_id in (theirs.divergence_id, "ffffffffffffffff", ""):
        response = client.post(
            "/w/acme/divergences",
            {"divergence": divergence_id, "status": "resolved", "reason": "x"},
        )
        assert response.status_code == 404
    assert Divergence.objects.get(pk=theirs.pk).status == "open"
    assert client.get("/w/globex/divergences").status_code == 404
    assert client.get("/w/acme/divergences", {"status": "bogus"}).status_code == 404


def test_the_page_says_when_detection_is_off(client, alice, settings):
    settings.MM_DIVERGENCE = False
    member(client, "carol", alice.agent.workspace, "curator")
    page = client.get("/w/acme/divergences").content.decode()
    assert "Divergence detection is off" in page and "MM_DIVERGENCE" in page


def test_closing_checks_its_arguments(alice, bob, detection):
    remember(alice, "Zephyr renews its support contract in March.", "Zephyr")
    remember(bob, "Zephyr renews its support contract in June.", "Zephyr")
    divergence_run(workspace=alice.agent.workspace)
    divergence = Divergence.objects.get()
    from memories.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as caught:
        divergence_close(
            divergence=divergence,
            user=make_member("carol", alice.agent.workspace),
            status="open",
            reason=" ",
        )
    assert set(caught.value.errors) == {"status", "reason"}
