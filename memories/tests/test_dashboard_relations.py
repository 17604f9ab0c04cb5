"""The dashboard's entities, links and neighbourhood: what people see of R, who may change it,
and that another workspace's entities are 404s like missing ones."""

import pytest
from django.contrib.auth import get_user_model

from memories.models import Entity, ProvenanceEvent
from memories.operations import memory_remember
from memories.services import entity_declare
from memories.tests.test_dashboard import member


@pytest.fixture
def curator(client, alice):
    member(client, "carol", alice.agent.workspace, "curator")
    return client


def test_the_memory_page_shows_entities_links_and_a_neighbourhood(curator, alice):
    hub = memory_remember(agent=alice.agent, text="The Zephyr renewal is due in March.").memory
    note = memory_remember(
        agent=alice.agent,
        text="Melanie approved the renewal price.",
        entities=[{"name": "Zephyr Logistics", "type": "customer"}],
        links=[{"to": hub.mem_id, "type": "supports"}],
    ).memory
    page = curator.get(f"/w/acme/m/{note.mem_id}").content.decode()
    assert "Zephyr Logistics" in page and "Melanie" in page
    assert 'aria-label="This memory and what it connects to"' in page
    assert "→ supports" in page and "agent:alice" in page
    assert f'href="/w/acme/m/{hub.mem_id}"' in page
    back = curator.get(f"/w/acme/m/{hub.mem_id}").content.decode()
    assert "← supports" in back


def test_entities_page_lists_filters_and_declares_for_curators_only(curator, alice):
    memory_remember(agent=alice.agent, text="Melanie called about invoices.")
    listed = curator.get("/w/acme/entities").content.decode()
    assert "Melanie" in listed and "Declare an entity" in listed
    assert "Melanie" not in curator.get("/w/acme/entities", {"query": "zzz"}).content.decode()
    bad = curator.post("/w/acme/entities", {"name": "Zephyr", "kind": "company"})
    assert bad.status_code == 200 and "is not an entity type" in bad.content.decode()
    assert not Entity.objects.filter(name="Zephyr").exists()
    made = curator.post(
        "/w/acme/entities", {"name": "Zephyr", "kind": "customer", "aliases": "ZL, Zeph"}
    )
    entity = Entity.objects.get(name="Zephyr")
    assert made.status_code == 302 and entity.declared and entity.aliases == ["ZL", "Zeph"]


def test_a_viewer_cannot_declare_or_merge(client, alice):
    member(client, "vic", alice.agent.workspace, "viewer")
    entity = entity_declare(
        workspace_id=alice.agent.workspace_id, name="Zephyr", kind="customer"
    ).entity
    assert "Declare an entity" not in client.get("/w/acme/entities").content.decode()
    assert client.post("/w/acme/entities", {"name": "X", "kind": "person"}).status_code == 403
    other = entity_declare(workspace_id=alice.agent.workspace_id, name="ZL", kind="customer").entity
    forged = client.post(
        f"/w/acme/e/{other.entity_id}", {"into": entity.entity_id, "reason": "forged"}
    )
    assert forged.status_code == 403
    assert Entity.objects.get(pk=other.pk).merged_into is None


def test_a_curator_merges_with_a_reason_and_undoes_it(curator, alice):
    memory_remember(
        agent=alice.agent, text="ZL paid.", entities=[{"name": "ZL", "type": "customer"}]
    )
    zl = Entity.objects.get(name="ZL")
    zephyr = entity_declare(
        workspace_id=alice.agent.workspace_id, name="Zephyr Logistics", kind="customer"
    ).entity
    no_reason = curator.post(f"/w/acme/e/{zl.entity_id}", {"into": "Zephyr Logistics"})
    assert no_reason.status_code == 200 and "A reason is required" in no_reason.content.decode()
    unknown = curator.post(f"/w/acme/e/{zl.entity_id}", {"into": "Nobody", "reason": "r"})
    assert "no entity has that name" in unknown.content.decode()
    merged = curator.post(
        f"/w/acme/e/{zl.entity_id}", {"into": "Zephyr Logistics", "reason": "same company"}
    )
    assert merged.status_code == 302
    assert Entity.objects.get(pk=zl.pk).merged_into_id == zephyr.pk
    page = curator.get(f"/w/acme/e/{zephyr.entity_id}").content.decode()
    assert "ZL paid." in page  # its mentions count as Zephyr's
    undone = curator.post(f"/w/acme/e/{zl.entity_id}", {"unmerge": "1", "reason": "two firms"})
    assert undone.status_code == 302 and Entity.objects.get(pk=zl.pk).merged_into is None
    assert list(
        ProvenanceEvent.objects.filter(subject_entity=zl).values_list("action", "user__username")
    ) == [("merge", "carol"), ("unmerge", "carol")]


def test_a_curator_corrects_an_entitys_type_with_a_reason(curator, alice):
    written = memory_remember(
        agent=alice.agent,
        text="Zephyr Logistics renewed.",
        entities=[{"name": "Zephyr Logistics", "type": "organization"}],
    ).memory
    zephyr = Entity.objects.get(name="Zephyr Logistics")
    path = f"/w/acme/e/{zephyr.entity_id}"
    assert "Correct its type" in curator.get(path).content.decode()
    assert "Type given by: writer." in curator.get(path).content.decode()

    for form, message in [
        ({"retype": "customer"}, "A reason is required"),
        ({"retype": "company", "reason": "r"}, "is not an entity type"),
        ({"retype": " organization ", "reason": "r"}, "is its type already (organization)"),
    ]:
        refused = curator.post(path, form)
        assert refused.status_code == 200 and message in refused.content.decode(), form
    assert Entity.objects.get(pk=zephyr.pk).kind == "organization"

    done = curator.post(path, {"retype": "customer", "reason": "they buy from us"})
    assert done.status_code == 302
    assert Entity.objects.get(pk=zephyr.pk).kind == "customer"
    page = curator.get(path).content.decode()
    assert "retype" in page and "type: organization → customer" in page
    assert "Type given by: curator." in page
    assert "they buy from us" in page and "Zephyr Logistics renewed." in page
    assert written.links_out.filter(target_entity=zephyr).exists()  # its mentions stay

    # One entity per name: a writer's other type for a declared name is the declared entity,
    # whose type stays the team's.
    declared = entity_declare(
        workspace_id=alice.agent.workspace_id, name="Acme Corp", kind="customer"
    ).entity
    called = memory_remember(
        agent=alice.agent,
        text="Acme Corp called.",
        entities=[{"name": "Acme Corp", "type": "organization"}],
    ).memory
    assert list(Entity.objects.filter(normalized="acme corp").values_list("pk", "kind")) == [
        (declared.pk, "customer")
    ]
    assert called.links_out.filter(target_entity=declared).exists()


def test_a_viewer_cannot_correct_a_type(client, alice):
    member(client, "vic", alice.agent.workspace, "viewer")
    entity = entity_declare(
        workspace_id=alice.agent.workspace_id, name="Zephyr", kind="customer"
    ).entity
    path = f"/w/acme/e/{entity.entity_id}"
    assert "Correct its type" not in client.get(path).content.decode()
    forged = client.post(path, {"retype": "person", "reason": "forged"})
    assert forged.status_code == 403 and Entity.objects.get(pk=entity.pk).kind == "customer"


def test_search_page_filters_by_entity_and_link(curator, alice):
    hub = memory_remember(agent=alice.agent, text="The renewal is due in March.").memory
    memory_remember(
        agent=alice.agent,
        text="Renewal pricing goes up.",
        links=[{"to": hub.mem_id, "type": "part_of"}],
    )
    page = curator.get("/w/acme/search", {"query": "renewal", "related_to": hub.mem_id})
    body = page.content.decode()
    assert "Renewal pricing goes up." in body and "The renewal is due in March." not in body
    bad = curator.get("/w/acme/search", {"query": "renewal", "min_r": "-1"}).content.decode()
    assert "must be 0 or more" in bad
    many = curator.get(
        "/w/acme/search", {"query": "renewal", "related_to": hub.mem_id, "link_types": "part_of"}
    )
    assert "Renewal pricing goes up." in many.content.decode()


@pytest.mark.parametrize("path", ["/w/acme/e/{id}", "/w/globex/entities", "/w/acme/e/nothex"])
def test_entities_of_another_workspace_are_404s(client, alice, charlie, path):
    member(client, "gus", charlie.agent.workspace, "curator")
    theirs = entity_declare(
        workspace_id=alice.agent.workspace_id, name="Zephyr", kind="customer"
    ).entity
    client.logout()
    member(client, "nina", alice.agent.workspace, "viewer")
    client.logout()
    gus = get_user_model().objects.get(username="gus")
    client.force_login(gus)
    if "globex" in path:  # gus's own workspace: fine; acme's is not
        assert client.get(path).status_code == 200
        assert client.get("/w/acme/entities").status_code == 404
    else:
        assert client.get(path.format(id=theirs.entity_id)).status_code == 404
