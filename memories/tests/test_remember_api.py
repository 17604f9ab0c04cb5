import json

import pytest

from memories.models import Memory, ProvenanceEvent

URL = "/api/v1/memories"


def test_remember_returns_the_stored_memory(alice):
    response = alice.client.post(
        URL,
        {"text": "Zephyr Logistics renews every March.", "stare_scores": {"s": 0.9, "t": 0.4}},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert len(body["mem_id"]) == 16
    assert body["significance"] == 0.8
    assert body["category"] == "fact" and body["memory_type"] == "semantic"
    assert body["source"] == "alice" and body["scope"] == "private:alice"
    assert {k: v for k, v in body["stare_scores"].items() if k != "a"} == {
        "s": 0.9,
        "t": 0.4,
        "r": None,
        "e": None,
    }
    # A is the engine's asymmetry score (memories.asymmetry.score), given only where a record
    # exists: a new workspace has none, so A stays empty rather than a guess.
    assert body["stare_scores"]["a"] is None
    assert body["stare_origins"]["s"] == "writer" and body["stare_origins"]["a"] is None
    assert [e["action"] for e in body["provenance"]] == ["remember"]
    memory = Memory.objects.get(mem_id=body["mem_id"])
    assert memory.embedding_model == "all-MiniLM-L6-v2-onnx-int8"
    assert len(memory.embedding) == 384


def test_remember_keeps_every_optional_field(alice):
    response = alice.client.post(
        URL,
        {
            "text": "We decided to move the launch to April.",
            "category": "decision",
            "memory_type": "episodic",
            "significance": 0.95,
            "valid_from": "2026-01-01T00:00:00Z",
            "valid_until": "2026-06-01T00:00:00Z",
            "observed_at": "2025-12-30T10:00:00Z",
            "created_at": "2025-12-31T10:00:00Z",
            "source": "standup notes",
            "scope": "team:accounts",
            "session": "s-1",
            "thread": "launch",
            "metadata": {"ticket": 42},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["category"] == "decision" and body["memory_type"] == "episodic"
    assert body["significance"] == 0.95 and body["source"] == "standup notes"
    assert body["scope"] == "team:accounts"
    assert body["valid_from"].startswith("2026-01-01T00:00:00")
    assert body["created_at"].startswith("2025-12-31T10:00:00")
    assert body["valid_until"].startswith("2026-06-01T00:00:00")
    assert body["observed_at"].startswith("2025-12-30T10:00:00")
    assert (body["session"], body["thread"]) == ("s-1", "launch")
    assert body["metadata"] == {"ticket": 42}


def test_detail_shows_scores_and_provenance(alice):
    mem_id = alice.client.post(URL, {"text": "Dana prefers email."}, format="json").json()["mem_id"]
    response = alice.client.get(f"{URL}/{mem_id}")
    assert response.status_code == 200
    assert response.json()["provenance"][0]["actor"] == "agent:alice"


def test_token_is_required(db, alice):
    from rest_framework.test import APIClient

    response = APIClient().post(URL, {"text": "x"}, format="json")
    assert response.status_code in (401, 403)
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Bearer mm_not-a-token")
    assert bad.post(URL, {"text": "x"}, format="json").status_code == 401
    assert Memory.objects.count() == 0


BAD_INPUTS = [
    ({"text": "x", "significance": 1.5}, "significance", "between 0 and 1"),
    ({"text": "x", "significance": -0.1}, "significance", "between 0 and 1"),
    ({"text": "x", "significance": "high"}, "significance", "must be a number"),
    ({"text": "x", "stare_scores": {"s": 2}}, "stare_scores.s", "between 0 and 1"),
    ({"text": "x", "stare_scores": {"q": 0.5}}, "stare_scores.q", "not a known field"),
    ({"text": "x", "valid_from": "next tuesday"}, "valid_from", "ISO 8601"),
    ({"text": "x", "observed_at": "2026-13-45"}, "observed_at", "ISO 8601"),
    (
        {"text": "x", "valid_from": "2026-05-01T00:00:00Z", "valid_until": "2026-04-01T00:00:00Z"},
        "valid_until",
        "after valid_from",
    ),
    (
        {"text": "x", "valid_from": "2026-05-01T00:00:00Z", "valid_until": "2026-05-01T00:00:00Z"},
        "valid_until",
        "after valid_from",
    ),
    ({"text": "x", "created_at": "2999-01-01T00:00:00Z"}, "created_at", "future"),
    ({"text": "x", "category": "gossip"}, "category", "not one of"),
    ({"text": "x", "memory_type": "dream"}, "memory_type", "not one of"),
    ({"text": ""}, "text", "must not be empty"),
    ({"text": "   "}, "text", "must not be empty"),
    ({}, "text", "required"),
    ({"text": "y" * 10_001}, "text", "at most 10000 characters"),
    ({"text": "x", "supersedes": "0123456789abcdef"}, "supersedes", "no memory"),
    ({"text": "x", "scope": "team:secret"}, "scope", "not a scope this agent belongs to"),
    ({"text": "x", "signifcance": 0.5}, "signifcance", "not a known field"),
    ({"text": "", "signifcance": 0.5}, "text", "must not be empty"),
    ({"text": "nul \u0000 byte"}, "text", "NUL"),
    ({"text": "x", "metadata": {"note": "a\u0000b"}}, "metadata", "NUL"),
    ({"text": "x", "metadata": {"deep": [{"k\u0000ey": 1}]}}, "metadata", "NUL"),
    ({"text": "x", "source": "lone \ud800 surrogate"}, "source", "Surrogate"),
    ({"text": "x", "metadata": {"k": "lone \udfff"}}, "metadata", "lone surrogates"),
]


NAMES_NOTHING = ("supersedes", "scope")


@pytest.mark.parametrize(
    ("body", "field", "rule"), BAD_INPUTS, ids=[f"{b[1]}-{i}" for i, b in enumerate(BAD_INPUTS)]
)
def test_bad_input_is_refused_and_nothing_is_written(alice, body, field, rule):
    before = (Memory.objects.count(), ProvenanceEvent.objects.count())
    # json.dumps escapes what the test client's renderer cannot encode (a lone surrogate).
    response = alice.client.post(URL, json.dumps(body), content_type="application/json")
    # A well-formed reference to nothing the agent sees is a 404 with the same body.
    assert response.status_code == (404 if field in NAMES_NOTHING else 400)
    errors = response.json()
    assert field in errors, errors
    assert rule in " ".join(errors[field])
    assert (Memory.objects.count(), ProvenanceEvent.objects.count()) == before


def test_a_body_that_is_not_json_is_refused(alice):
    response = alice.client.post(URL, "{not json", content_type="application/json")
    assert response.status_code == 400
    assert "body" in response.json()
    assert Memory.objects.count() == 0


def test_every_error_is_reported_at_once(alice):
    response = alice.client.post(
        URL, {"text": "x", "significance": 3, "category": "nope", "colour": "red"}, format="json"
    )
    assert response.status_code == 400
    assert {"significance", "category", "colour"} <= set(response.json())


def test_database_refuses_out_of_range_values_written_around_the_service(alice):
    from django.db import IntegrityError, transaction

    mem_id = alice.client.post(URL, {"text": "x"}, format="json").json()["mem_id"]
    for update in ({"significance": 1.2}, {"s_score": -0.5}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Memory.objects.filter(mem_id=mem_id).update(**update)
