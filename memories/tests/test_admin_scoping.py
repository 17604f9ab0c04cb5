"""The admin is scoped like the dashboard (issue 16, finding 2): a staff user with every
permission, curator of one workspace, neither sees nor changes another's memories, history,
agents, scopes, workspace or members. Only superusers see every workspace."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from memories.models import Agent, Membership, Memory, ProvenanceEvent, Scope
from memories.operations import memory_remember
from memories.services import agent_authenticate


@pytest.fixture
def sam(client, alice, charlie):
    """Staff, every permission of the memories app, curator of acme only."""
    user = get_user_model().objects.create_user("sam", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="memories"))
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="curator")
    client.force_login(user)
    return client


@pytest.fixture
def theirs(charlie):
    return memory_remember(agent=charlie.agent, text="Globex's private plan.").memory


@pytest.fixture
def ours(alice):
    return memory_remember(agent=alice.agent, text="Acme renews in March.").memory


def test_lists_show_only_the_staff_users_workspaces(sam, ours, theirs, charlie):
    for path in (
        "/admin/memories/memory/",
        "/admin/memories/provenanceevent/",
        "/admin/memories/agent/",
        "/admin/memories/scope/",
        "/admin/memories/workspace/",
    ):
        page = sam.get(path).content.decode()
        assert "globex" not in page, path  # not in the rows, not in the workspace filter
    listed = sam.get("/admin/memories/memory/").content.decode()
    assert ours.mem_id in listed and theirs.mem_id not in listed
    membership = Membership.objects.get(user__username="sam")
    members = sam.get("/admin/memories/membership/").content.decode()
    # A curator is not an admin of acme: no members to manage, not even their own row.
    assert f"/admin/memories/membership/{membership.pk}/change/" not in members


def test_another_workspaces_objects_do_not_exist_for_them(sam, theirs, charlie):
    scope = Scope.objects.get(workspace=charlie.agent.workspace, kind="private")
    event = ProvenanceEvent.objects.get(memory=theirs)
    for path in (
        f"/admin/memories/memory/{theirs.pk}/change/",
        f"/admin/memories/provenanceevent/{event.pk}/change/",
        f"/admin/memories/agent/{charlie.agent.pk}/change/",
        f"/admin/memories/scope/{scope.pk}/change/",
        f"/admin/memories/workspace/{charlie.agent.workspace.pk}/change/",
    ):
        response = sam.get(path, follow=True)
        assert "doesn’t exist" in response.content.decode(), path
        assert "Globex's private plan" not in response.content.decode()


def test_actions_on_another_workspace_change_nothing(sam, theirs, charlie):
    sam.post(
        "/admin/memories/memory/",
        {"action": "feedback_demote", "_selected_action": [theirs.pk], "apply": "1",
         "reason": "not yours"},
    )  # fmt: skip
    sam.post(
        "/admin/memories/agent/",
        {"action": "revoke", "_selected_action": [charlie.agent.pk]},
    )

    theirs.refresh_from_db()
    assert theirs.significance == 0.8
    assert agent_authenticate(charlie.token) is not None
    assert not ProvenanceEvent.objects.filter(action__in=["demote", "revoke"]).exists()


def test_in_their_own_workspace_they_curate(sam, ours):
    sam.post(
        "/admin/memories/memory/",
        {"action": "feedback_demote", "_selected_action": [ours.pk], "apply": "1",
         "reason": "stale"},
    )  # fmt: skip
    ours.refresh_from_db()
    assert ours.significance == 0.4


def test_a_curator_cannot_change_members_through_the_workspace_page(sam, alice):
    workspace = alice.agent.workspace
    membership = Membership.objects.get(user__username="sam")
    page = sam.get(f"/admin/memories/workspace/{workspace.pk}/change/").content.decode()
    assert 'name="memberships-0-role"' not in page  # shown, not editable
    assert 'value="0" id="id_memberships-MAX_NUM_FORMS"' in page  # none to add

    sam.post(
        f"/admin/memories/workspace/{workspace.pk}/change/",
        {
            "name": workspace.name,
            "memberships-TOTAL_FORMS": "1",
            "memberships-INITIAL_FORMS": "1",
            "memberships-0-id": str(membership.pk),
            "memberships-0-workspace": str(workspace.pk),
            "memberships-0-user": str(membership.user_id),
            "memberships-0-role": "admin",
        },
    )
    membership.refresh_from_db()
    assert membership.role == "curator"


def test_a_superuser_sees_every_workspace(client, ours, theirs):
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(root)
    listed = client.get("/admin/memories/memory/").content.decode()
    assert ours.mem_id in listed and theirs.mem_id in listed
    assert Agent.objects.count() == 2 and Memory.objects.count() == 2


def test_entities_and_links_are_listed_per_workspace(sam, alice, charlie):
    from memories.models import Entity, Link

    mine = memory_remember(
        agent=alice.agent,
        text="Acme renews in March.",
        entities=[{"name": "Acme Renewals", "type": "project"}],
    ).memory
    memory_remember(
        agent=charlie.agent,
        text="Globex plans.",
        entities=[{"name": "Globex Secret Project", "type": "project"}],
    )
    entities = sam.get("/admin/memories/entity/").content.decode()
    assert "Acme Renewals" in entities and "Globex Secret Project" not in entities
    links = sam.get("/admin/memories/link/").content.decode()
    assert mine.text in links and "Globex plans" not in links
    theirs = Entity.objects.get(name="Globex Secret Project")
    their_link = Link.objects.get(target_entity=theirs)
    for path in (
        f"/admin/memories/entity/{theirs.pk}/change/",
        f"/admin/memories/link/{their_link.pk}/change/",
    ):
        response = sam.get(path)
        assert response.status_code == 302 and response.url == "/admin/", path
