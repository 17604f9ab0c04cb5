"""Input that crashed the engine (issue 16, finding 3) is a 400 naming the field, and nothing is
written: metadata nested hundreds deep, a body nested a hundred thousand deep, workspace names
that cannot be URLs or do not fit."""

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory, Workspace
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
