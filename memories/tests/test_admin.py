from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memories.models import Memory, ProvenanceEvent
from memories.operations import memory_remember

CHANGELIST = "/admin/memories/memory/"


@pytest.fixture
def admin_client(client, db):
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    client.user = user
    return client


def act(client, action, memories, **extra):
    data = {"action": action, "_selected_action": [m.pk for m in memories], **extra}
    return client.post(CHANGELIST, data, follow=True)


def test_an_action_asks_for_a_reason_then_goes_through_the_services(admin_client, alice):
    memory = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory

    asked = act(admin_client, "feedback_demote", [memory])
    assert asked.status_code == 200 and b'name="reason"' in asked.content
    memory.refresh_from_db()
    assert memory.significance == 0.8  # nothing yet

    act(admin_client, "feedback_demote", [memory], apply="1", reason="stale since the merger")

    memory.refresh_from_db()
    assert memory.significance == 0.4
    event = ProvenanceEvent.objects.get(memory=memory, action="demote")
    assert event.user == admin_client.user and event.reason == "stale since the merger"
    assert event.old_values == {"significance": 0.8} and event.new_values == {"significance": 0.4}


def test_an_empty_reason_is_a_form_error_and_nothing_changes(admin_client, alice):
    memory = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory

    response = act(admin_client, "feedback_pin", [memory], apply="1", reason="   ")

    assert response.status_code == 200
    assert b"A reason is required: say why." in response.content
    memory.refresh_from_db()
    assert not memory.pinned
    assert not ProvenanceEvent.objects.filter(memory=memory, action="pin").exists()


def test_forget_is_all_or_nothing(admin_client, alice):
    first = memory_remember(agent=alice.agent, text="One.").memory
    second = memory_remember(agent=alice.agent, text="Two.").memory
    act(admin_client, "feedback_forget", [second], apply="1", reason="wrong")

    response = act(admin_client, "feedback_forget", [first, second], apply="1", reason="again")

    assert b"Nothing changed" in response.content
    first.refresh_from_db()
    assert first.status == "active"


def test_pin_unpin_and_important_for_many_at_once(admin_client, alice, charlie):
    mine = [memory_remember(agent=alice.agent, text=f"Note {n}.").memory for n in range(3)]
    theirs = memory_remember(agent=charlie.agent, text="Globex note.").memory

    act(admin_client, "feedback_important", [*mine, theirs], apply="1", reason="key facts")

    assert {m.significance for m in Memory.objects.all()} == {0.9}
    assert ProvenanceEvent.objects.filter(action="important").count() == 4


def test_the_changelist_runs_a_bounded_number_of_queries(
    admin_client, alice, django_assert_max_num_queries
):
    for n in range(3):
        memory_remember(agent=alice.agent, text=f"Note {n}.")
    admin_client.get(CHANGELIST)
    with django_assert_max_num_queries(12) as few:
        assert admin_client.get(CHANGELIST).status_code == 200
    baseline = len(few.captured_queries)
    assert baseline > 0
    for n in range(30):
        memory_remember(agent=alice.agent, text=f"More {n}.")
    with django_assert_max_num_queries(baseline):
        assert admin_client.get(CHANGELIST).status_code == 200


def test_filters_and_the_detail_page(admin_client, alice):
    now = timezone.now()
    old = memory_remember(
        agent=alice.agent,
        text="The old office.",
        valid_from=now - timedelta(days=9),
        valid_until=now - timedelta(days=1),
    ).memory
    current = memory_remember(agent=alice.agent, text="The new office.", category="decision").memory

    expired = admin_client.get(CHANGELIST, {"validity": "expired"}).content.decode()
    decisions = admin_client.get(CHANGELIST, {"category__exact": "decision"}).content.decode()
    detail = admin_client.get(f"{CHANGELIST}{current.pk}/change/")

    assert old.mem_id in expired and current.mem_id not in expired
    assert current.mem_id in decisions and old.mem_id not in decisions
    assert detail.status_code == 200
    assert b"384 dimensions" in detail.content and b"remember" in detail.content


def test_a_staff_member_who_may_only_view_cannot_curate(client, alice):
    from django.contrib.auth.models import Permission

    memory = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory
    staff = get_user_model().objects.create_user("sam", password="pw", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_memory"))
    client.force_login(staff)

    changelist = client.get(CHANGELIST)
    assert changelist.status_code == 200 and b"feedback_pin" not in changelist.content
    act(client, "feedback_pin", [memory], apply="1", reason="mine")

    memory.refresh_from_db()
    assert not memory.pinned
    assert not ProvenanceEvent.objects.filter(memory=memory, action="pin").exists()


def test_agents_scopes_and_workspaces_cannot_be_moved_or_deleted(admin_client, alice, charlie):
    agent = alice.agent
    form = admin_client.get(f"/admin/memories/agent/{agent.pk}/change/").content.decode()

    assert "team:accounts" in form and "globex" not in form.split('id="id_scopes')[1][:2000]
    assert admin_client.get(f"/admin/memories/agent/{agent.pk}/delete/").status_code == 403
    assert (
        admin_client.get(f"/admin/memories/workspace/{agent.workspace_id}/delete/").status_code
        == 403
    )
    assert (
        admin_client.get(f"/admin/memories/scope/{agent.private_scope_id}/delete/").status_code
        == 403
    )


@pytest.mark.parametrize(
    "path",
    [
        "/admin/memories/provenanceevent/",
        "/admin/memories/agent/",
        "/admin/memories/scope/",
        "/admin/memories/workspace/",
        "/admin/memories/membership/",
    ],
)
def test_the_other_pages_load(admin_client, alice, path):
    memory_remember(agent=alice.agent, text="Zephyr renews in March.")
    assert admin_client.get(path).status_code == 200
