"""Revoking an agent's token: one service, recorded, for the dashboard and the admin alike."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.errors import Forbidden, NotFound, ValidationFailed
from memories.models import Membership, ProvenanceEvent
from memories.operations import memory_remember
from memories.selectors import supersession_chain
from memories.services import agent_authenticate, agent_revoke
from memories.tests.test_dashboard import member


def user(name, workspace=None, role=None, **flags):
    created = get_user_model().objects.create_user(name, password="pw", **flags)
    if workspace is not None:
        Membership.objects.create(user=created, workspace=workspace, role=role)
    return created


def test_revoking_stops_the_token_and_records_who_and_why(alice):
    carol = user("carol", alice.agent.workspace, "curator")
    token_works = agent_authenticate(alice.token) is not None

    agent_revoke(
        user=carol, workspace=alice.agent.workspace, agent_id=alice.agent.pk, reason="leaked"
    )

    assert token_works and agent_authenticate(alice.token) is None
    event = ProvenanceEvent.objects.get(action="revoke")
    assert (event.subject_agent, event.user, event.memory) == (alice.agent, carol, None)
    assert event.old_values == {"is_active": True} and event.new_values == {"is_active": False}
    assert event.reason == "leaked" and event.workspace_id == alice.agent.workspace_id


def test_another_workspace_gets_not_found_a_viewer_forbidden_and_nothing_changes(alice, charlie):
    carol = user("carol", alice.agent.workspace, "curator")
    vic = user("vic", alice.agent.workspace, "viewer")

    with pytest.raises(NotFound):  # charlie's agent, asked through acme
        agent_revoke(user=carol, workspace=alice.agent.workspace, agent_id=charlie.agent.pk)
    with pytest.raises(NotFound):  # acme's agent, asked through globex by a non-member
        agent_revoke(user=carol, workspace=charlie.agent.workspace, agent_id=alice.agent.pk)
    with pytest.raises(Forbidden):  # a viewer sees acme's agents; the role is too low
        agent_revoke(user=vic, workspace=alice.agent.workspace, agent_id=alice.agent.pk)

    assert agent_authenticate(alice.token) and agent_authenticate(charlie.token)
    assert not ProvenanceEvent.objects.filter(action="revoke").exists()


def test_revoking_twice_is_an_error_that_records_nothing_more(alice):
    carol = user("carol", alice.agent.workspace, "curator")
    agent_revoke(user=carol, workspace=alice.agent.workspace, agent_id=alice.agent.pk)

    with pytest.raises(ValidationFailed) as raised:
        agent_revoke(user=carol, workspace=alice.agent.workspace, agent_id=alice.agent.pk)

    assert "already revoked" in raised.value.errors["agent"][0]
    assert ProvenanceEvent.objects.filter(action="revoke").count() == 1


def test_the_dashboard_revokes_through_the_service_and_shows_it(client, alice):
    member(client, "carol", alice.agent.workspace, "curator")

    client.post("/w/acme/agents", {"revoke": alice.agent.pk})
    again = client.post("/w/acme/agents", {"revoke": alice.agent.pk}, follow=True)
    overview = client.get("/w/acme/").content.decode()

    assert ProvenanceEvent.objects.filter(action="revoke", subject_agent=alice.agent).count() == 1
    assert "already revoked" in again.content.decode()
    assert "revoke" in overview and "agent alice" in overview


def test_the_admin_revokes_through_the_service(client, alice):
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(root)

    client.post(
        "/admin/memories/agent/",
        {"action": "revoke", "_selected_action": [alice.agent.pk]},
        follow=True,
    )
    form = client.get(f"/admin/memories/agent/{alice.agent.pk}/change/").content.decode()

    event = ProvenanceEvent.objects.get(action="revoke")
    assert event.subject_agent == alice.agent and event.user == root
    assert agent_authenticate(alice.token) is None
    assert 'name="is_active"' not in form  # read-only: a token is revoked by the action


def test_the_supersession_chain_is_read_in_two_queries_however_long(alice):
    memories = [memory_remember(agent=alice.agent, text="Closes at 17:00.").memory]
    for hour in range(18, 24):
        memories.append(
            memory_remember(
                agent=alice.agent, text=f"Closes at {hour}:00.", supersedes=memories[-1].mem_id
            ).memory
        )
    middle = memories[3]

    with CaptureQueriesContext(connection) as queries:
        newer, older = supersession_chain(middle)

    assert len(queries) == 2
    assert [m.pk for m in newer] == [m.pk for m in memories[4:]]
    assert [m.pk for m in older] == [m.pk for m in reversed(memories[:3])]


def test_a_revoked_agent_is_reactivated_with_a_new_token_and_the_old_one_stays_dead(client, alice):
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(root)
    changelist = "/admin/memories/agent/"
    client.post(changelist, {"action": "revoke", "_selected_action": [alice.agent.pk]})
    assert agent_authenticate(alice.token) is None

    shown = client.post(
        changelist, {"action": "reactivate", "_selected_action": [alice.agent.pk]}, follow=True
    ).content.decode()
    again = client.post(
        changelist, {"action": "reactivate", "_selected_action": [alice.agent.pk]}, follow=True
    )

    # The revoked token never works again; the new one, shown once, does.
    assert agent_authenticate(alice.token) is None
    assert alice.client.post("/api/v1/search", {"query": "x"}, format="json").status_code == 401
    (token,) = re.findall(r"New token of alice \(shown once\): (mm_[A-Za-z0-9_-]+)", shown)
    assert agent_authenticate(token) == alice.agent
    event = ProvenanceEvent.objects.get(action="restore", subject_agent=alice.agent)
    assert event.user == root
    assert event.new_values == {"token_prefix": token[:10], "is_active": True}
    assert token not in str(event.new_values) + str(event.old_values) + event.reason
    assert "Nothing changed: agent: the token of alice is not revoked." in again.content.decode()


def test_the_workspace_of_a_token_is_that_of_its_active_agent(alice, charlie):
    from memories.services import hash_token, workspace_of_token_hash

    assert workspace_of_token_hash(hash_token(alice.token)) == alice.agent.workspace_id
    assert workspace_of_token_hash(hash_token(charlie.token)) == charlie.agent.workspace_id
    assert workspace_of_token_hash(hash_token("mm_not-a-token")) is None
    alice.agent.is_active = False
    alice.agent.save(update_fields=["is_active"])
    assert workspace_of_token_hash(hash_token(alice.token)) is None
