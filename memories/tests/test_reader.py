"""The reader as a type: made only by its constructors (an agent's scopes, a member's whole
workspace with the role checked for what the reader is for, the engine's whole workspace), and
the only place that works out what a reader sees."""

import ast
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from memories.errors import Forbidden, NotFound
from memories.models import Membership
from memories.selectors.reader import Reader
from memories.selectors.visibility import visible_scope_ids


def test_a_reader_is_made_by_its_constructors_only(alice):
    with pytest.raises(TypeError, match="Reader.of_agent, Reader.of_member or Reader.of_engine"):
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


def test_the_engine_reads_the_whole_workspace_as_no_one(alice):
    engine = Reader.of_engine(alice.agent.workspace)
    assert engine.scope_ids is None and engine.agent is None and engine.user is None
    assert not engine.may("read")
    with pytest.raises(NotFound):
        engine.require("read")


def test_sees_narrows_to_the_readers_workspace_and_scopes(alice, bob, charlie):
    from memories.models import Memory
    from memories.operations import memory_remember

    mine = memory_remember(agent=alice.agent, text="Alice's private note.").memory
    shared = memory_remember(agent=bob.agent, text="Shared note.", scope="team:accounts").memory
    theirs = memory_remember(agent=bob.agent, text="Bob's private note.").memory
    elsewhere = memory_remember(agent=charlie.agent, text="Another workspace's note.").memory
    every = Memory.objects.filter(pk__in=[m.pk for m in (mine, shared, theirs, elsewhere)])

    def seen(reader):
        return set(reader.sees(every).values_list("pk", flat=True))

    assert seen(Reader.of_agent(alice.agent)) == {mine.pk, shared.pk}
    assert seen(Reader.of_engine(alice.agent.workspace)) == {mine.pk, shared.pk, theirs.pk}


#: The one module that works out which scopes a reader sees.
VISIBILITY_USERS = {"memories/selectors/reader.py"}


def test_only_the_reader_works_out_what_one_sees():
    """``visible_scope_ids`` (an agent's scopes) is called by ``Reader.of_agent`` alone: every
    selector, service, adapter and check asks for a reader instead, so none can compute what a
    reader sees differently."""
    root = Path(__file__).resolve().parents[2]
    found = set()
    for package in ("memories", "consolidation", "readiness", "meaning_memory"):
        for path in (root / package).rglob("*.py"):
            relative = path.relative_to(root).as_posix()
            if "/tests/" in relative or "/migrations/" in relative:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(
                isinstance(node, ast.Name) and node.id == "visible_scope_ids"
                for node in ast.walk(tree)
            ):
                found.add(relative)
    assert found == VISIBILITY_USERS
