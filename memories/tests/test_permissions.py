"""One permission gate (issue 37, finding 1): who may do what is decided once, by
``require_role`` and its table ``ROLE_FOR``, inside every service a team member changes state
through, and Django's own permissions never widen it.

- Every model registered in the admin: a staff user holding every Django permission whose only
  role is viewer of one workspace gets nothing (the admins not scoped by workspace are a 403;
  the scoped ones show none of their objects), so the two attacks found (``is_superuser``
  posted to the user admin, a worker schedule running ``pathlib.Path.touch``) fail.
- Every public service that takes a team member (``user`` or ``by``): a viewer is refused
  (Forbidden), a user of another workspace is told nothing exists (NotFound), and nothing is
  written. A new such service fails the test until it is in the table below.
- The table of roles and actions in the docs is ``ROLE_FOR``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import RequestFactory
from django.urls import reverse
from django_q.models import Schedule

import memories.services as services_package
from consolidation.models import ConsolidationRun, SupersessionProposal
from consolidation.services import consolidation_start, proposal_decide, proposal_undo
from meaning_memory.testing import make_member
from memories.errors import Forbidden, NotFound
from memories.models import (
    Agent,
    Divergence,
    Entity,
    Membership,
    Memory,
    ProvenanceEvent,
    Workspace,
)
from memories.operations import memory_remember
from memories.selectors.permissions import ROLE_FOR
from memories.services import (
    agent_create,
    agent_reactivate,
    agent_revoke,
    entities_declare,
    entity_declare,
    entity_merge,
    entity_retype,
    entity_split,
    entity_unmerge,
    membership_remove,
    membership_set,
    memories_erase,
    memories_erase_by_user,
    memory_curate_by_user,
    memory_feedback_by_user,
    memory_forget_by_user,
    memory_restore,
    supersede,
    supersession_undo,
)
from memories.services.divergence import divergence_close

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def world(alice, bob, charlie):
    """Acme (alice and bob share team:accounts) with memories, two entities, an admin and a
    revoked agent; globex (charlie) with a memory and a worker schedule."""
    workspace = alice.agent.workspace
    first = memory_remember(
        agent=alice.agent,
        text="Zephyr renews in March.",
        scope="team:accounts",
        entities=[{"name": "Zephyr", "type": "customer"}],
    ).memory
    second = memory_remember(
        agent=bob.agent,
        text="ZL renews in June.",
        scope="team:accounts",
        entities=[{"name": "ZL", "type": "customer"}],
    ).memory
    memory_remember(agent=charlie.agent, text="Globex's private plan.")
    ada = make_member("ada", workspace, "admin")
    revoked, _ = agent_create(workspace_slug=workspace.slug, name="old-bot")
    Agent.objects.filter(pk=revoked.pk).update(is_active=False)
    Schedule.objects.create(func="math.floor", args="1", name="harmless")
    return {
        "workspace": workspace,
        "first": first,
        "second": second,
        "zephyr": Entity.objects.get(workspace=workspace, name="Zephyr"),
        "zl": Entity.objects.get(workspace=workspace, name="ZL"),
        "ada": Membership.objects.get(user=ada),
        "revoked": revoked,
        "alice": alice,
    }


def _staff_with_every_permission(username: str, workspace: Workspace | None, role: str):
    user = make_member(username, workspace, role, is_staff=True)
    user.user_permissions.set(Permission.objects.all())
    return get_user_model().objects.get(pk=user.pk)  # permissions read afresh


# --- The admin -------------------------------------------------------------------------------


def test_every_admin_model_gives_a_viewer_with_every_permission_nothing(world, client):
    vera = _staff_with_every_permission("vera", world["workspace"], "viewer")
    client.force_login(vera)
    request = RequestFactory().get("/admin/")
    request.user = vera
    guarded = {
        m for m, a in admin.site._registry.items() if not getattr(a, "workspace_scoped", False)
    }
    # The models the attacks used are among the superuser-only ones.
    assert {get_user_model(), Group, Schedule} <= guarded

    for model, model_admin in admin.site._registry.items():
        info = (model._meta.app_label, model._meta.model_name)
        changelist = client.get(reverse("admin:{}_{}_changelist".format(*info)))
        some = list(model._default_manager.all()[:3])
        if model in guarded:
            assert changelist.status_code == 403, model
            assert client.get(reverse("admin:{}_{}_add".format(*info))).status_code == 403
            for obj in some:
                page = client.get(reverse("admin:{}_{}_change".format(*info), args=[obj.pk]))
                assert page.status_code == 403, (model, obj)
        else:
            # A viewer curates nothing, administers nothing: none of its objects are theirs.
            assert not model_admin.get_queryset(request).exists(), model
            for obj in some:
                page = client.get(reverse("admin:{}_{}_change".format(*info), args=[obj.pk]))
                assert page.status_code in (302, 403), (model, obj)  # "does not exist"
    index = client.get("/admin/").content.decode()
    assert "/admin/auth/user/" not in index and "/admin/django_q/" not in index


def test_a_staff_user_cannot_make_themselves_superuser(world, client):
    vera = _staff_with_every_permission("vera", world["workspace"], "admin")
    client.force_login(vera)

    answer = client.post(
        f"/admin/auth/user/{vera.pk}/change/",
        {"username": "vera", "is_active": "on", "is_staff": "on", "is_superuser": "on"},
    )

    assert answer.status_code == 403
    vera.refresh_from_db()
    assert not vera.is_superuser
    # And so, still, another workspace is not theirs.
    assert "Globex's private plan" not in client.get("/admin/memories/memory/").content.decode()


def test_a_staff_user_cannot_schedule_a_function_for_the_worker(world, client, tmp_path):
    vera = _staff_with_every_permission("vera", world["workspace"], "admin")
    client.force_login(vera)
    target = tmp_path / "touched"
    before = Schedule.objects.count()

    answer = client.post(
        "/admin/django_q/schedule/add/",
        {
            "name": "mine",
            "func": "pathlib.Path.touch",
            "args": repr(str(target)),
            "schedule_type": "O",
            "repeats": "-1",
            "next_run_0": "2026-01-01",
            "next_run_1": "00:00:00",
        },
    )

    assert answer.status_code == 403
    assert Schedule.objects.count() == before
    assert not Schedule.objects.filter(func="pathlib.Path.touch").exists()


def test_a_superuser_keeps_the_whole_admin(world, client):
    boss = get_user_model().objects.create_superuser("boss", password="pw")
    client.force_login(boss)
    for path in ("/admin/auth/user/", "/admin/auth/group/", "/admin/django_q/schedule/"):
        assert client.get(path).status_code == 200, path


# --- The services ----------------------------------------------------------------------------

#: Each public service a team member changes state through, called on acme's objects.
CALLS = {
    "memory_feedback_by_user": lambda w, u: memory_feedback_by_user(
        user=u, memory_pk=w["first"].pk, action="important", reason="r"
    ),
    "memory_forget_by_user": lambda w, u: memory_forget_by_user(
        user=u, memory_pk=w["first"].pk, reason="r"
    ),
    "memory_curate_by_user": lambda w, u: memory_curate_by_user(
        user=u, memory_pk=w["first"].pk, action="pin", reason="r"
    ),
    "memory_restore": lambda w, u: memory_restore(merged=w["first"], reason="r", user=u),
    "supersede": lambda w, u: supersede(old=w["first"], new=w["second"], user=u, reason="r"),
    "supersession_undo": lambda w, u: supersession_undo(memory=w["first"], user=u, reason="r"),
    "memories_erase_by_user": lambda w, u: memories_erase_by_user(
        user=u, workspace=w["workspace"], by="memory", value=w["first"].mem_id, reason="r"
    ),
    "memories_erase": lambda w, u: memories_erase(
        workspace=w["workspace"], by="memory", value=w["first"].mem_id, reason="r", user=u
    ),
    "membership_set": lambda w, u: membership_set(
        by=u, workspace=w["workspace"], username=u.get_username(), role="admin"
    ),
    "membership_remove": lambda w, u: membership_remove(
        by=u, workspace=w["workspace"], membership_id=w["ada"].pk
    ),
    "entity_declare": lambda w, u: entity_declare(
        workspace_id=w["workspace"].pk, name="Initech", kind="customer", user=u
    ),
    "entities_declare": lambda w, u: entities_declare(
        workspace_id=w["workspace"].pk, items=[{"name": "Initech", "type": "customer"}], user=u
    ),
    "entity_merge": lambda w, u: entity_merge(
        user=u, entity=w["zl"], into=w["zephyr"], reason="the same customer"
    ),
    "entity_unmerge": lambda w, u: entity_unmerge(user=u, entity=w["zl"], reason="r"),
    "entity_retype": lambda w, u: entity_retype(
        user=u, entity=w["zl"], kind="organization", reason="a guess"
    ),
    "entity_split": lambda w, u: entity_split(
        user=u, entity=w["zl"], kind="product", memories=["0" * 16], reason="another thing"
    ),
    "agent_create": lambda w, u: agent_create(
        workspace_slug=w["workspace"].slug, name="new-bot", by=u
    ),
    "agent_revoke": lambda w, u: agent_revoke(
        user=u, workspace=w["workspace"], agent_id=w["alice"].agent.pk
    ),
    "agent_reactivate": lambda w, u: agent_reactivate(
        user=u, workspace=w["workspace"], agent_id=w["revoked"].pk
    ),
    "divergence_close": lambda w, u: divergence_close(
        divergence=Divergence(workspace=w["workspace"], first=w["first"], second=w["second"]),
        user=u,
        status="dismissed",
        reason="r",
    ),
    "consolidation_start": lambda w, u: consolidation_start(
        workspace=w["workspace"], trigger="api", user=u
    ),
    "proposal_decide": lambda w, u: proposal_decide(
        proposal=SupersessionProposal(
            workspace=w["workspace"], older=w["first"], newer=w["second"]
        ),
        user=u,
        accept=True,
        reason="r",
    ),
    "proposal_undo": lambda w, u: proposal_undo(
        proposal=SupersessionProposal(
            workspace=w["workspace"], older=w["first"], newer=w["second"]
        ),
        user=u,
        reason="r",
    ),
}

#: Public functions that take ``user`` or ``by`` but are not a team member's change.
NOT_A_MEMBERS_CHANGE = {
    "provenance_event": "builds the event a service records; writes nothing itself",
    "store_relations": "the links of a memory being written; ``user`` is its writer's name",
    "erase_selection": "reads which memories an erasure would take; ``by`` is how they are chosen",
    "memories_erase_by_agent": "an agent's erasure of what it sees; ``by`` is how it chooses",
}


def _public_services_taking_a_member() -> set[str]:
    modules = [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(services_package.__path__, "memories.services.")
    ]
    modules += [importlib.import_module("consolidation.services")]
    found = set()
    for module in modules:
        for name, function in vars(module).items():
            if (
                inspect.isfunction(function)
                and function.__module__ == module.__name__
                and not name.startswith("_")
                and {"user", "by"} & set(inspect.signature(function).parameters)
            ):
                found.add(name)
    return found


def test_every_service_a_member_changes_state_through_is_gated_here():
    assert _public_services_taking_a_member() - set(NOT_A_MEMBERS_CHANGE) == set(CALLS)


def _state() -> dict:
    return {
        "events": ProvenanceEvent.objects.count(),
        "memberships": sorted(Membership.objects.values_list("user_id", "role")),
        "agents": sorted(Agent.objects.values_list("name", "is_active")),
        "entities": sorted(Entity.objects.values_list("name", "kind", "declared", "merged_into")),
        "memories": sorted(Memory.objects.values_list("mem_id", "status", "significance")),
        "runs": ConsolidationRun.objects.count(),
    }


@pytest.mark.parametrize("service", sorted(CALLS))
def test_a_viewer_is_refused_and_an_outsider_sees_nothing(world, charlie, service):
    vic = make_member("vic", world["workspace"], "viewer")
    olga = make_member("olga", charlie.agent.workspace, "admin")  # admin, of globex
    before = _state()

    with pytest.raises(Forbidden):
        CALLS[service](world, vic)
    with pytest.raises(NotFound):
        CALLS[service](world, olga)

    assert _state() == before


def test_a_curator_may_what_the_table_gives_curators(world):
    carol = make_member("carol", world["workspace"], "curator")
    memory_curate_by_user(user=carol, memory_pk=world["first"].pk, action="pin", reason="r")
    entity_merge(user=carol, entity=world["zl"], into=world["zephyr"], reason="same")
    with pytest.raises(Forbidden):  # managing members is an admin's
        CALLS["membership_remove"](world, carol)
    with pytest.raises(Forbidden):  # and so is erasing
        CALLS["memories_erase_by_user"](world, carol)


# --- The table in the docs -------------------------------------------------------------------


def test_the_docs_table_of_roles_and_actions_is_the_gates():
    text = (ROOT / "docs" / "SECURITY.md").read_text()
    rows = re.findall(r"^\| ([a-z ]+) \| (viewer|curator|admin) \|", text, re.M)
    assert dict(rows) == {action: str(role) for action, role in ROLE_FOR.items()}
    assert "docs/SECURITY.md" in (ROOT / "README.md").read_text()
