"""Input that crashed the engine (issue 16, finding 3) is a 400 naming the field, and nothing is
written: metadata nested hundreds deep, a body nested a hundred thousand deep, workspace names
that cannot be URLs or do not fit."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from memories.models import Membership, Memory, Workspace
from memories.rules import METADATA_MAX_BYTES, METADATA_MAX_DEPTH


def nested(depth):
    value = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_metadata_nested_hundreds_deep_is_a_400(alice):
    ok = alice.client.post(
        "/api/v1/memories",
        {"text": "Deep but allowed.", "metadata": nested(METADATA_MAX_DEPTH)},
        format="json",
    )
    too_deep = alice.client.post(
        "/api/v1/memories", {"text": "Too deep.", "metadata": nested(500)}, format="json"
    )
    in_bulk = alice.client.post(
        "/api/v1/memories/bulk",
        {"memories": [{"text": "Too deep.", "metadata": nested(METADATA_MAX_DEPTH + 1)}]},
        format="json",
    )

    assert ok.status_code == 201
    assert too_deep.status_code == 400
    assert too_deep.json() == {
        "metadata": [f"must not be nested more than {METADATA_MAX_DEPTH} levels deep."]
    }
    assert in_bulk.status_code == 400 and "memories[0].metadata" in in_bulk.json()
    assert Memory.objects.count() == 1


def test_metadata_over_the_size_limit_is_a_400(alice):
    response = alice.client.post(
        "/api/v1/memories",
        {"text": "Large.", "metadata": {"blob": "x" * METADATA_MAX_BYTES}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["metadata"][0].startswith(f"must be at most {METADATA_MAX_BYTES}")
    assert not Memory.objects.exists()


def test_a_body_nested_a_hundred_thousand_deep_is_a_json_400(alice):
    body = '{"text": "x", "metadata": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    response = alice.client.post("/api/v1/memories", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"body": ["is not valid JSON: nested too deeply."]}
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("slug", "message"),
    [
        ("über space", "letters, digits, hyphens and underscores only"),
        ("a/b", "letters, digits, hyphens and underscores only"),
        ("w" * 70, "at most 64 characters (got 70)"),
        ("", "must not be empty"),
    ],
)
def test_createagent_refuses_a_workspace_name_that_is_not_a_slug(db, slug, message):
    with pytest.raises(CommandError, match="workspace: ") as raised:
        call_command("createagent", "--workspace", slug, "--name", "scribe")
    assert message in str(raised.value)
    assert not Workspace.objects.exists()


def test_a_search_query_is_bounded_in_characters_and_in_distinct_words(alice, settings):
    """Finding 1: 10,000-character queries with 1,400 distinct words, sent in parallel, held
    the database. A query is at most MM_SEARCH_MAX_QUERY_CHARS long and reads at most
    MM_SEARCH_MAX_WORDS distinct words; beyond, a 400 on ``query`` naming the limit."""
    settings.MM_SEARCH_MAX_WORDS = 20
    long_query = "renewal " * 300  # 2,400 characters, one word
    many_words = " ".join(f"zephyr{n}x" for n in range(21))  # 21 distinct words, short

    too_long = alice.client.post("/api/v1/search", {"query": long_query}, format="json")
    too_many = alice.client.post("/api/v1/search", {"query": many_words}, format="json")
    enough = alice.client.post(
        "/api/v1/search", {"query": " ".join(many_words.split()[:20])}, format="json"
    )

    assert too_long.status_code == 400
    assert too_long.json() == {
        "query": ["must be at most 2,000 characters (got 2,400; MM_SEARCH_MAX_QUERY_CHARS)."]
    }
    assert too_many.status_code == 400
    assert too_many.json() == {
        "query": [
            "has 21 distinct words; a search reads at most 20 (MM_SEARCH_MAX_WORDS): "
            "ask in fewer words."
        ]
    }
    assert enough.status_code == 200


def test_workspaces_stored_with_slugs_that_are_not_urls_are_renamed(db, client, capsys):
    """Finding 3: a workspace stored as ``über space`` or ``a/b`` before slugs were checked made
    the dashboard fail for its members. Migration 0016 gives each a slug that fits (its name
    keeps what was typed), and the dashboard serves them again."""
    from importlib import import_module

    from django.apps import apps

    from memories.tests.test_dashboard import member

    umlaut = Workspace.objects.create(slug="über space", name="")
    slash = Workspace.objects.create(slug="a/b", name="a/b")
    taken = Workspace.objects.create(slug="a-b", name="taken")
    fine = Workspace.objects.create(slug="fine_one", name="Fine")
    member(client, "dora", umlaut, "viewer")
    Membership.objects.create(user=get_user_model().objects.get(username="dora"), workspace=slash)

    import_module("memories.migrations.0016_workspace_slugs_fit_urls").fit_slugs(apps, None)

    for workspace in (umlaut, slash, taken, fine):
        workspace.refresh_from_db()
    assert (umlaut.slug, umlaut.name) == ("ber-space", "über space")
    assert (slash.slug, slash.name) == (f"a-b-{slash.pk}", "a/b")
    assert (taken.slug, fine.slug) == ("a-b", "fine_one")
    assert "workspace 'a/b' is now" in capsys.readouterr().out
    home = client.get("/", follow=True)
    assert home.status_code == 200
    assert client.get(f"/w/{slash.slug}/").status_code == 200
