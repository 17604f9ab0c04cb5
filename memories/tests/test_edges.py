"""Issue 37's edges, each as an outsider found it: names of any length (finding 5), the login
brake and ``X-Forwarded-For`` (7), and the small ones (8): password reset, host errors under
``/api/``, bounded echoes, strict query parameters, workspace names that differ by case."""

from __future__ import annotations

import pytest

from meaning_memory.testing import make_actor
from memories.errors import ValidationFailed
from memories.models import Entity
from memories.rules import ENTITY_NAME_MAX
from memories.services import agent_create

LONG_CLAIM = "According to " + "Bob " * 60 + "it works."


# --- Names of any length (finding 5) ----------------------------------------------------------


def test_a_long_claimant_is_stored_not_a_500(alice):
    answer = alice.client.post("/api/v1/memories", {"text": LONG_CLAIM}, format="json")

    assert answer.status_code == 201, answer.content[:300]
    assert all(
        len(name) <= ENTITY_NAME_MAX for name in Entity.objects.values_list("name", flat=True)
    )


def test_a_long_claimant_does_not_fail_a_bulk(alice):
    answer = alice.client.post(
        "/api/v1/memories/bulk",
        {"memories": [{"text": LONG_CLAIM}, {"text": "Zephyr renews in March."}]},
        format="json",
    )

    assert answer.status_code == 201, answer.content[:300]
    assert len(answer.json()["results"]) == 2


@pytest.mark.parametrize(
    "name",
    [
        "ß" * ENTITY_NAME_MAX,  # casefolds to twice as long
        "ﬃ" * ENTITY_NAME_MAX,  # NFKC makes three letters of one
        "Zephyr " * 28 + "Logistics",  # 205 characters: over the limit, a 400
    ],
)
def test_an_entity_name_of_any_shape_is_a_201_or_a_400_naming_the_field(alice, name):
    given = alice.client.post(
        "/api/v1/memories",
        {"text": "A customer.", "entities": [{"name": name, "type": "customer"}]},
        format="json",
    )
    declared = alice.client.post(
        "/api/v1/entities", {"name": name, "type": "customer", "aliases": [name]}, format="json"
    )

    for answer in (given, declared):
        assert answer.status_code in (200, 201, 400), answer.content[:300]
        if answer.status_code == 400:
            assert "at most 200" in str(answer.json())
    for entity in Entity.objects.all():
        assert len(entity.name) <= ENTITY_NAME_MAX
        assert all(len(key) <= ENTITY_NAME_MAX for key in entity.keys)


# --- Workspace names (finding 8) ---------------------------------------------------------------


def test_two_workspaces_never_differ_only_by_case(db):
    make_actor("acme", "alice")

    with pytest.raises(ValidationFailed) as refused:
        agent_create(workspace_slug="ACME", name="mallory")

    assert "differs only by case from the workspace 'acme'" in refused.value.errors["workspace"][0]


def test_a_long_claimant_over_mcp_is_stored_not_an_internal_error(served, transactional_db):
    from memories.tests.test_mcp import over_http, text_of

    alice = make_actor("acme", "alice")

    async def work(session):
        return await session.call_tool("mm_remember", {"text": LONG_CLAIM})

    result = over_http(served, alice.token, work)

    assert not result.is_error, text_of(result)
    assert text_of(result).startswith("stored: ")


# --- Answers under /api/ (finding 8) -----------------------------------------------------------


def test_an_unknown_host_under_the_api_is_a_json_400(alice):
    answer = alice.client.get("/api/v1/memories", HTTP_HOST="evil.example")

    assert answer.status_code == 400
    assert answer["Content-Type"].startswith("application/json")
    assert answer.json() == {"detail": "Bad Request."}
    assert answer["X-Frame-Options"] == "DENY"  # the headers still come with it


def test_an_echo_is_bounded(alice):
    long_id = "a" * 5_000

    for answer in (
        alice.client.get(f"/api/v1/memories/{long_id}"),
        alice.client.post(
            "/api/v1/memories", {"text": "x", "f" * 5_000: 1, "supersedes": long_id}, format="json"
        ),
        alice.client.get(f"/api/v1/entities/{long_id}"),
    ):
        assert 400 <= answer.status_code < 500
        assert len(answer.content) < 2_000, answer.content[:200]


@pytest.mark.parametrize(
    "query, field",
    [
        ("page=2.0", "page"),
        ("page=2e0", "page"),
        ("page=%202", "page"),
        ("page=1&page=2", "page"),
        ("type=customer&type=person", "type"),
    ],
)
def test_query_parameters_are_strict(alice, query, field):
    answer = alice.client.get(f"/api/v1/entities?{query}")

    assert answer.status_code == 400, answer.content
    assert field in answer.json()


def test_a_plain_integer_page_still_works(alice):
    assert alice.client.get("/api/v1/entities?page=1&page_size=5").status_code == 200


# --- Password reset (finding 8) ----------------------------------------------------------------


def test_without_email_there_is_no_password_reset(client, db):
    assert client.get("/accounts/password_reset/").status_code == 404
    assert client.post("/accounts/password_reset/", {"email": "a@example.com"}).status_code == 404


@pytest.fixture
def with_email(settings):
    import importlib

    from django.urls import clear_url_caches

    import meaning_memory.urls

    settings.EMAIL_HOST = "smtp.example.com"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    importlib.reload(meaning_memory.urls)
    clear_url_caches()
    yield
    settings.EMAIL_HOST = ""
    importlib.reload(meaning_memory.urls)
    clear_url_caches()


def test_with_email_a_reset_is_throttled_like_a_login(client, db, with_email, settings):
    from django.contrib.auth import get_user_model
    from django.core import mail

    get_user_model().objects.create_user("carol", email="carol@example.com", password="pw")
    answers = [
        client.post("/accounts/password_reset/", {"email": "carol@example.com"})
        for _ in range(settings.MM_LOGIN_MAX_FAILURES + 3)
    ]

    assert {a.status_code for a in answers} == {302}  # the same answer, sent or not
    assert len(mail.outbox) == settings.MM_LOGIN_MAX_FAILURES


# --- Numbers JSON cannot store (one set of rules) ---------------------------------------------


@pytest.mark.parametrize(
    "body, field",
    [
        ('{"text": "x", "metadata": {"x": 1e999}}', "metadata"),
        ('{"text": "x", "metadata": {"x": [1, -1e999]}}', "metadata"),
        ('{"text": "x", "significance": 1e999}', "significance"),
        ('{"text": "x", "stare_scores": {"s": -1e999}}', "stare_scores.s"),
    ],
)
def test_an_infinite_number_is_a_400_naming_the_field_not_a_500(alice, body, field):
    single = alice.client.post("/api/v1/memories", body, content_type="application/json")
    bulk = alice.client.post(
        "/api/v1/memories/bulk", f'{{"memories": [{body}]}}', content_type="application/json"
    )

    assert single.status_code == 400 and field in single.json()
    assert bulk.status_code == 400 and f"memories[0].{field}" in bulk.json()


# --- forget, wherever feedback is named (issue 38) --------------------------------------------


def test_forget_is_a_feedback_action_over_rest_as_it_is_named(alice):
    from memories.operations import memory_remember

    memory = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory
    url = f"/api/v1/memories/{memory.mem_id}/feedback"

    forgotten = alice.client.post(url, {"action": "forget", "reason": "wrong"}, format="json")
    again = alice.client.post(url, {"action": "forget", "reason": "wrong"}, format="json")
    unknown = alice.client.post(url, {"action": "shred", "reason": "x"}, format="json")

    assert forgotten.status_code == 200 and forgotten.json()["status"] == "forgotten"
    assert again.status_code == 409
    assert unknown.status_code == 400 and "forget" in unknown.json()["action"][0]
