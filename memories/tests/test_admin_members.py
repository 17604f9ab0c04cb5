"""Members changed in the admin go through the members service, like the dashboard's members
page: the last admin of a workspace cannot be demoted or removed there either (a form error,
nothing saved), and handing the role over in one save works."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from memories.models import Membership

User = get_user_model()


@pytest.fixture
def ada(client, alice):
    """Staff with the members permissions, the only admin of acme."""
    user = User.objects.create_user("ada", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="memories"))
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="admin")
    client.force_login(user)
    return client


def inline(workspace, rows):
    """The workspace change form with its members' rows: (membership or None, user, role,
    delete)."""
    data = {
        "name": workspace.name,
        "memberships-TOTAL_FORMS": str(len(rows)),
        "memberships-INITIAL_FORMS": str(sum(1 for m, *_ in rows if m is not None)),
    }
    for n, (membership, user, role, delete) in enumerate(rows):
        prefix = f"memberships-{n}-"
        data |= {
            prefix + "id": str(membership.pk) if membership else "",
            prefix + "workspace": str(workspace.pk),
            prefix + "user": user.get_username(),
            prefix + "role": role,
        }
        if delete:
            data[prefix + "DELETE"] = "on"
    return data


def test_the_last_admin_cannot_demote_themselves_in_the_workspace_page(ada, alice):
    workspace = alice.agent.workspace
    mine = Membership.objects.get(user__username="ada")

    page = ada.post(
        f"/admin/memories/workspace/{workspace.pk}/change/",
        inline(workspace, [(mine, mine.user, "curator", False)]),
    )

    assert page.status_code == 200  # the form again, with the error
    assert "The workspace must keep an admin" in page.content.decode()
    mine.refresh_from_db()
    assert mine.role == "admin"


def test_handing_the_admin_role_over_in_one_save_works(ada, alice):
    workspace = alice.agent.workspace
    mine = Membership.objects.get(user__username="ada")
    bea = User.objects.create_user("bea", password="pw")

    page = ada.post(
        f"/admin/memories/workspace/{workspace.pk}/change/",
        inline(workspace, [(mine, mine.user, "viewer", False), (None, bea, "admin", False)]),
    )

    assert page.status_code == 302, page.content.decode()[:2000]
    roles = dict(
        Membership.objects.filter(workspace=workspace).values_list("user__username", "role")
    )
    assert roles == {"ada": "viewer", "bea": "admin"}


def test_the_members_page_refuses_to_demote_or_remove_the_last_admin(ada, alice):
    mine = Membership.objects.get(user__username="ada")
    url = f"/admin/memories/membership/{mine.pk}/"

    demoted = ada.post(url + "change/", {"role": "viewer"})
    deleted = ada.post(url + "delete/", {"post": "yes"})

    assert demoted.status_code == 200
    assert "ada is the workspace&#x27;s last admin; add another first." in demoted.content.decode()
    assert deleted.status_code == 403
    mine.refresh_from_db()
    assert mine.role == "admin"


def test_removing_members_in_bulk_never_takes_the_last_admin(ada, alice):
    workspace = alice.agent.workspace
    mine = Membership.objects.get(user__username="ada")
    cyd, dan = (
        Membership.objects.create(
            user=User.objects.create_user(name, password="pw"), workspace=workspace, role="viewer"
        )
        for name in ("cyd", "dan")
    )

    refused = ada.post(
        "/admin/memories/membership/",
        {"action": "delete_selected", "_selected_action": [mine.pk, cyd.pk], "post": "yes"},
    )
    assert refused.status_code == 403  # all or nothing: the last admin is among them
    assert Membership.objects.filter(workspace=workspace).count() == 3

    ada.post(
        "/admin/memories/membership/",
        {"action": "delete_selected", "_selected_action": [cyd.pk, dan.pk], "post": "yes"},
    )
    assert list(Membership.objects.filter(workspace=workspace)) == [mine]


def test_a_member_added_in_the_members_page_goes_through_the_service(ada, alice):
    bea = User.objects.create_user("bea", password="pw")
    gone = User.objects.create_user("gus", password="pw", is_active=False)
    workspace = alice.agent.workspace

    added = ada.post(
        "/admin/memories/membership/add/",
        {"user": "bea", "workspace": workspace.pk, "role": "curator"},
    )
    refused = ada.post(
        "/admin/memories/membership/add/",
        {"user": "gus", "workspace": workspace.pk, "role": "curator"},
    )

    assert added.status_code == 302
    assert Membership.objects.get(user=bea, workspace=workspace).role == "curator"
    assert refused.status_code == 200 and "gus is not an active user." in refused.content.decode()
    assert not Membership.objects.filter(user=gone).exists()
