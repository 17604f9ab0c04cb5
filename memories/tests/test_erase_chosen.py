"""Erase a customer (issue 58): every memory that mentions an entity, or matches a metadata
filter, erased for good with a dry run first, over REST (what the agent sees), the command line
and the dashboard (a workspace admin), with the guarantees of any erasure: nothing of their words
left, a tombstone each that names no customer."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from meaning_memory.testing import make_member
from memories.models import Entity, Memory, ProvenanceEvent, Workspace
from memories.operations import memory_remember
from memories.services import entity_declare
from memories.tests.test_erase_scan import columns_with

ERASE = "/api/v1/memories/erase"
SHARED = "team:accounts"
MARKER = "Qorvexa"  # the customer's name: after the erasure, in no column of any table


@pytest.fixture
def customer(alice, bob):
    """Memories about a declared customer (by a link, by an alias, by attribution), others
    about another one, in alice's private scope and the shared one."""
    workspace = alice.agent.workspace
    entity_declare(
        workspace_id=workspace.pk, name=f"{MARKER} Health", kind="customer", aliases=[MARKER]
    )

    def write(agent, text, scope=SHARED, **fields):
        return memory_remember(agent=agent, text=text, scope=scope, **fields).memory

    about = [
        write(alice.agent, f"{MARKER} Health renews in March.", metadata={"customer": "q"}),
        write(bob.agent, f"{MARKER} asked for 80 seats.", metadata={"customer": "q", "seats": 80}),
        write(alice.agent, "The renewal call went well.", attributed_to=f"{MARKER} Health"),
        write(alice.agent, f"Private: {MARKER} may churn.", scope=""),
    ]
    others = [
        write(alice.agent, "Kestrel pays by card.", metadata={"customer": "kestrel"}),
        write(bob.agent, "The checklist lives in the shared drive."),
    ]
    return {"about": about, "others": others, "workspace": workspace}


def erase(actor, body):
    return actor.client.post(ERASE, body, format="json")


@pytest.mark.django_db(transaction=True)
def test_an_agent_erases_a_customer_by_name_after_a_dry_run(alice, customer):
    about = {m.mem_id for m in customer["about"]}
    preview = erase(alice, {"entity": MARKER, "dry_run": True})  # by its alias
    assert preview.status_code == 200, preview.json()
    assert preview.json()["dry_run"] is True
    assert set(preview.json()["erased"]) == about
    assert Memory.objects.count() == 6  # nothing changed
    done = erase(alice, {"entity": f"  {MARKER.lower()} health ", "reason": "asked by them"})
    assert done.status_code == 200, done.json()
    assert set(done.json()["erased"]) == about
    # Declared, and asked for, it goes too (with any other entity only these memories named).
    assert done.json()["entities_removed"] >= 1
    assert set(Memory.objects.values_list("mem_id", flat=True)) == {
        m.mem_id for m in customer["others"]
    }
    assert not Entity.objects.filter(name__icontains=MARKER).exists()
    tombstones = ProvenanceEvent.objects.filter(action="erase")
    assert {t.new_values["erased"] for t in tombstones} == about
    assert {t.new_values["by"] for t in tombstones} == {"entity"}
    assert columns_with(MARKER) == {}  # neither its words nor its name, tombstones included
    again = erase(alice, {"entity": MARKER, "dry_run": True})
    assert again.status_code == 404  # it is no longer known
    assert "entity" in again.json()


@pytest.mark.django_db
def test_an_agent_erases_by_metadata_filter(alice, customer):
    chosen = {"customer": "q", "seats": {"gte": 50}}
    preview = erase(alice, {"metadata": chosen, "dry_run": True})
    assert preview.json()["erased"] == [customer["about"][1].mem_id]
    done = erase(alice, {"metadata": {"customer": "q"}, "reason": "their request"})
    assert set(done.json()["erased"]) == {m.mem_id for m in customer["about"][:2]}
    tombstone = ProvenanceEvent.objects.filter(action="erase").first()
    assert tombstone.new_values["metadata_keys"] == ["customer"]  # keys, never values
    assert "q" not in json.dumps(tombstone.new_values["metadata_keys"])
    assert Memory.objects.filter(mem_id=customer["others"][0].mem_id).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"entity": MARKER}, "reason"),  # not a dry run: a reason is required
        ({"entity": MARKER, "reason": "   "}, "reason"),
        ({"reason": "x"}, "entity"),  # neither
        ({"entity": MARKER, "metadata": {"customer": "q"}, "reason": "x"}, "entity"),  # both
        ({"metadata": {"seats": {"gte": "many", "lt": []}}, "dry_run": True}, "metadata"),
        ({"metadata": {}, "dry_run": True}, "metadata"),
        ({"metadata": "customer=q", "dry_run": True}, "metadata"),
        ({"entity": MARKER, "dry_run": "yes please"}, "dry_run"),
        ({"entity": MARKER, "colour": "red", "reason": "x"}, "colour"),
        ({"entity": "Nobody Inc", "reason": "x"}, "entity"),
    ],
)
def test_bad_requests_name_the_field_and_erase_nothing(alice, customer, body, field):
    response = erase(alice, body)
    assert response.status_code in (400, 404), response.json()
    assert field in response.json(), response.json()
    assert Memory.objects.count() == 6
    assert not ProvenanceEvent.objects.filter(action="erase").exists()


@pytest.mark.django_db
def test_what_another_agent_or_workspace_cannot_see_is_neither_listed_nor_erased(
    alice, bob, charlie, customer
):
    private = customer["about"][3]
    preview = erase(bob, {"entity": MARKER, "dry_run": True}).json()
    assert private.mem_id not in preview["erased"]  # alice's private scope
    assert len(preview["erased"]) == 3
    erase(bob, {"entity": MARKER, "reason": "asked"})
    assert Memory.objects.filter(pk=private.pk).exists()
    assert Entity.objects.filter(name=f"{MARKER} Health").exists()  # still named
    # Another workspace: the entity is unknown (404 as for a name no one uses) and the filter
    # chooses nothing.
    unknown = erase(charlie, {"entity": MARKER, "reason": "x"})
    nobody = erase(charlie, {"entity": "Nobody Inc", "reason": "x"})
    assert unknown.status_code == nobody.status_code == 404
    assert unknown.json().keys() == nobody.json().keys()
    assert erase(charlie, {"metadata": {"customer": "q"}, "reason": "x"}).json()["count"] == 0
    assert Memory.objects.filter(pk=private.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_an_operator_erases_by_entity_or_metadata_on_the_command_line(customer):
    out = StringIO()
    call_command("erase", "--workspace", "acme", "--entity", MARKER, "--dry-run", stdout=out)
    listed = out.getvalue()
    assert "would erase 4 memories" in listed
    assert all(m.mem_id in listed for m in customer["about"])
    assert Memory.objects.count() == 6
    call_command(
        "erase",
        "--workspace",
        "acme",
        "--metadata",
        '{"customer": {"in": ["kestrel"]}}',
        "--reason",
        "their request",
        stdout=out,
    )
    assert "erased 1 memories" in out.getvalue()
    with pytest.raises(CommandError, match="value: must be a JSON object"):
        call_command("erase", "--workspace", "acme", "--metadata", "{customer", "--reason", "x")
    with pytest.raises(CommandError, match="value.seats.gte"):
        call_command(
            "erase", "--workspace", "acme", "--metadata", '{"seats": {"gte": []}}', "--dry-run"
        )
    with pytest.raises(CommandError, match="value: no entity 'Nobody'"):
        call_command("erase", "--workspace", "acme", "--entity", "Nobody", "--dry-run")
    call_command("erase", "--workspace", "acme", "--entity", MARKER, "--reason", "x", stdout=out)
    assert Memory.objects.count() == 1
    assert not Entity.objects.filter(name__icontains=MARKER).exists()


@pytest.mark.django_db
def test_a_workspace_admin_previews_and_erases_a_customer_on_the_dashboard(client, customer):
    workspace = Workspace.objects.get(slug="acme")
    curator = make_member("cora", workspace, role="curator")
    client.force_login(curator)
    assert client.get("/w/acme/erase", {"by": "entity", "value": MARKER}).status_code == 403
    admin = make_member("ada", workspace, role="admin")
    client.force_login(admin)
    page = client.get("/w/acme/erase", {"by": "entity", "value": MARKER})
    assert page.status_code == 200
    assert "4 memories would be erased" in page.content.decode()
    bad = client.get("/w/acme/erase", {"by": "metadata", "value": '{"seats": {"gte": []}}'})
    assert "seats.gte" in bad.content.decode()
    done = client.post(
        "/w/acme/erase",
        {"by": "metadata", "value": '{"customer": "q"}', "reason": "asked", "confirm": "on",
         "erase": "1"},
        follow=True,
    )  # fmt: skip
    assert "Erased 2 memories for good" in done.content.decode()
    assert Memory.objects.count() == 4
    other = Workspace.objects.create(slug="globex-two", name="Globex two")
    assert client.get(f"/w/{other.slug}/erase").status_code == 404
