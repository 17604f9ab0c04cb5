"""The admin lists consolidation's runs, threads and proposals, read-only, scoped to the staff
user's workspaces like every other list."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from consolidation.services import consolidation_execute, consolidation_start
from consolidation.tests.test_threads import story
from memories.models import Membership, Thread


def test_staff_see_their_workspaces_runs_and_threads_and_change_nothing(
    client, alice, charlie, settings
):
    settings.MM_OPEN_THREADS = True
    story(alice.agent)
    story(charlie.agent)
    runs = [
        consolidation_execute(consolidation_start(workspace=a.workspace, trigger="command"))
        for a in (alice.agent, charlie.agent)
    ]
    user = get_user_model().objects.create_user("sam", password="pw", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label__in=["consolidation", "memories"])
    )
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="curator")
    client.force_login(user)
    listed = client.get("/admin/consolidation/consolidationrun/").content.decode()
    assert runs[0].run_id in listed and runs[1].run_id not in listed
    ours = Thread.objects.filter(workspace=alice.agent.workspace).first()
    theirs = Thread.objects.filter(workspace=charlie.agent.workspace).first()
    threads = client.get("/admin/memories/thread/").content.decode()
    page = "/admin/memories/thread/{}/change/"
    assert page.format(ours.pk) in threads and page.format(theirs.pk) not in threads
    assert client.get(f"/admin/memories/thread/{theirs.pk}/change/").status_code == 302
    page = client.get(f"/admin/consolidation/consolidationrun/{runs[0].pk}/change/")
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert client.get("/admin/consolidation/supersessionproposal/").status_code == 200
