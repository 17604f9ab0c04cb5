"""The first user sees something: a superuser sees every workspace as its admin, and a
workspace's admins add members (by username, with a role) from the dashboard."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from memories.models import Membership, Workspace

ROOT = Path(__file__).resolve().parents[2]


def user(name, **extra):
    return get_user_model().objects.create_user(name, password="pw", **extra)


@pytest.fixture
def acme_admin(client, alice):
    ada = user("ada")
    Membership.objects.create(user=ada, workspace=alice.agent.workspace, role="admin")
    client.force_login(ada)
    return client


def test_a_fresh_superuser_is_told_how_to_begin(client, db):
    root = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(root)
    page = client.get("/").content.decode()
    assert "No workspace yet" in page
    assert "meaning-memory createagent --workspace" in page


def test_a_superuser_sees_every_workspace_as_admin(client, alice, charlie):
    root = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(root)

    landing = client.get("/", follow=True)
    assert landing.redirect_chain[-1][0] == "/w/acme/"
    page = client.get("/w/globex/").content.decode()
    assert "globex (admin)" in page and "acme (admin)" in page
    assert client.get("/w/globex/members").status_code == 200
    assert client.get("/w/nowhere/").status_code == 404
    assert not Membership.objects.filter(user=root).exists()  # seen, not joined


def test_createagent_creates_the_workspace(transactional_db):
    import os

    from meaning_memory.testing import database_url

    token = subprocess.run(
        [sys.executable, "-m", "meaning_memory", "createagent", "--workspace", "newco"]
        + ["--name", "assistant", "-v0"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url()},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    workspace = Workspace.objects.get(slug="newco")
    assert token.startswith("mm_") and workspace.agents.get().name == "assistant"


def test_an_admin_adds_a_member_changes_the_role_and_removes_them(acme_admin, alice):
    bea = user("bea")
    added = acme_admin.post("/w/acme/members", {"username": "bea", "role": "curator"}, follow=True)
    assert "bea is a curator of acme" in added.content.decode()
    assert Membership.objects.get(user=bea, workspace=alice.agent.workspace).role == "curator"

    acme_admin.post("/w/acme/members", {"username": "bea", "role": "viewer"})
    membership = Membership.objects.get(user=bea)
    assert membership.role == "viewer"

    acme_admin.post("/w/acme/members", {"remove": str(membership.pk)})
    assert not Membership.objects.filter(user=bea).exists()


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"username": "nobody", "role": "viewer"}, "username", "no active user 'nobody'."),
        ({"username": "", "role": "viewer"}, "username", "This field is required."),
        ({"username": "bea", "role": "owner"}, "role", "Select a valid choice."),
    ],
)
def test_bad_input_names_the_field_and_changes_nothing(acme_admin, form, field, message):
    user("bea")
    before = Membership.objects.count()
    page = acme_admin.post("/w/acme/members", form)
    assert page.status_code == 200
    assert message in page.context["form"].errors[field][0]
    assert Membership.objects.count() == before


def test_the_last_admin_cannot_leave_or_step_down(acme_admin, alice):
    own = Membership.objects.get(user__username="ada")
    page = acme_admin.post("/w/acme/members", {"username": "ada", "role": "viewer"})
    assert "last admin" in page.context["form"].errors["role"][0]
    removed = acme_admin.post("/w/acme/members", {"remove": str(own.pk)}, follow=True)
    assert "last admin" in removed.content.decode()
    own.refresh_from_db()
    assert own.role == "admin"


@pytest.mark.parametrize("role", ["viewer", "curator"])
def test_only_admins_manage_members(client, alice, role):
    member = user("mo")
    Membership.objects.create(user=member, workspace=alice.agent.workspace, role=role)
    user("bea")
    client.force_login(member)
    page = client.get("/w/acme/members").content.decode()
    assert "mo" in page and "Add a member" not in page
    assert client.post("/w/acme/members", {"username": "bea", "role": "admin"}).status_code == 403
    own = Membership.objects.get(user=member)
    assert client.post("/w/acme/members", {"remove": str(own.pk)}).status_code == 403
    assert Membership.objects.filter(user__username="bea").count() == 0
    assert Membership.objects.filter(user=member).exists()


def test_another_workspace_is_a_404(client, alice, charlie):
    ada = user("ada")
    Membership.objects.create(user=ada, workspace=alice.agent.workspace, role="admin")
    gus = user("gus")
    globex = Workspace.objects.get(slug="globex")
    theirs = Membership.objects.create(user=gus, workspace=globex, role="admin")
    client.force_login(ada)
    assert client.get("/w/globex/members").status_code == 404
    assert client.post("/w/globex/members", {"username": "ada", "role": "admin"}).status_code == 404
    # Another workspace's membership id on one's own page: a 404 like an id that does not exist.
    assert client.post("/w/acme/members", {"remove": str(theirs.pk)}).status_code == 404
    assert client.post("/w/acme/members", {"remove": "99999999"}).status_code == 404
    assert client.post("/w/acme/members", {"remove": "x"}).status_code == 404
    assert Membership.objects.filter(workspace=globex).count() == 1
    assert not Membership.objects.filter(user=ada, workspace=globex).exists()
