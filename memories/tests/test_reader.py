"""The reader as a type: made only by its two constructors, an agent's scopes or a member's
whole workspace, the member's role checked for what the reader is for."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from memories.errors import Forbidden, NotFound
from memories.models import Membership
from memories.selectors.reader import Reader
from memories.selectors.visibility import visible_scope_ids


def test_a_reader_is_made_by_its_constructors_only(alice):
    with pytest.raises(TypeError, match="of_agent or Reader.of_member"):
        Reader(workspace=alice.agent.workspace, scope_ids=None)


def test_an_agent_reads_its_scopes_and_a_member_the_workspace(alice, charlie):
    agent = Reader.of_agent(alice.agent)
    assert agent.scope_ids == tuple(visible_scope_ids(alice.agent)) and agent.agent == alice.agent
    assert agent.workspace_id == alice.agent.workspace_id and not agent.may("read")
    user = get_user_model().objects.create_user("vera", password="pw")
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="viewer")
    member = Reader.of_member(user, alice.agent.workspace.slug)
    assert member.scope_ids is None and member.role == "viewer" and member.user == user
    assert member.may("read") and not member.may("curate")
    with pytest.raises(Forbidden):
        Reader.of_member(user, alice.agent.workspace, "erase")
    with pytest.raises(Forbidden):
        member.require("curate")
    # Another workspace is one that does not exist; so is any workspace to no one logged in.
    with pytest.raises(NotFound):
        Reader.of_member(user, charlie.agent.workspace.slug)
    with pytest.raises(NotFound):
        Reader.of_member(AnonymousUser(), alice.agent.workspace.slug)
    with pytest.raises(NotFound):
        agent.require("read")
