import pytest
from django.db import connection

from memories.models import Memory, ProvenanceEvent
from memories.operations import memory_remember, memory_remember_bulk, memory_search
from memories.selectors.reader import Reader
from memories.services import content_hash

URL = "/api/v1/memories/bulk"
TEXTS = [
    "Caroline: I went to an LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I painted a sunrise over the lake last Tuesday.",
    "Zephyr Logistics renews its support contract every March.",
]


def post(actor, memories):
    return actor.client.post(URL, {"memories": memories}, format="json")


def test_bulk_stores_each_memory_with_provenance_and_scores(alice):
    response = post(alice, [{"text": text} for text in TEXTS])

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["stored"] == 3 and body["existing"] == 0
    assert [r["status"] for r in body["results"]] == ["stored"] * 3
    memories = Memory.objects.filter(mem_id__in=[r["mem_id"] for r in body["results"]])
    assert sorted(m.text for m in memories) == sorted(TEXTS)
    for memory in memories:
        assert len(memory.embedding) == 384
        # The defaults: the scorer fills the calibrated dimensions (s, t, r) of facts only; A
        # is the engine's asymmetry score, only where a record exists (none here).
        assert memory.stare_origins == {
            "s": "scorer",
            "t": "scorer",
            "a": None,
            "r": "scorer",
            "e": None,
        }
        assert all(0 <= memory.stare_scores[d] <= 1 for d in "str")
        assert memory.e_score is None
    assert ProvenanceEvent.objects.filter(memory__in=memories, action="remember").count() == 3


def test_the_same_batch_sent_twice_stores_nothing_new(alice):
    first = post(alice, [{"text": text} for text in TEXTS]).json()

    again = post(alice, [{"text": text} for text in TEXTS])

    assert again.status_code == 200
    body = again.json()
    assert body["stored"] == 0 and body["existing"] == 3
    assert [r["mem_id"] for r in body["results"]] == [r["mem_id"] for r in first["results"]]
    assert Memory.objects.filter(workspace=alice.agent.workspace).count() == 3


def test_repeats_within_a_batch_are_stored_once(alice):
    body = post(alice, [{"text": TEXTS[0]}, {"text": TEXTS[1]}, {"text": TEXTS[0]}]).json()

    assert [r["status"] for r in body["results"]] == ["stored", "stored", "existing"]
    assert body["results"][2]["mem_id"] == body["results"][0]["mem_id"]


def test_an_idempotency_key_identifies_the_memory(alice):
    first = post(alice, [{"text": "Draft one.", "idempotency_key": "k-1"}]).json()

    again = post(alice, [{"text": "Draft one, edited.", "idempotency_key": "k-1"}]).json()

    assert again["results"][0]["status"] == "existing"
    assert again["results"][0]["mem_id"] == first["results"][0]["mem_id"]
    assert Memory.objects.get(mem_id=first["results"][0]["mem_id"]).text == "Draft one."


def test_a_memory_remembered_singly_counts_as_stored(alice):
    memory = memory_remember(agent=alice.agent, text=TEXTS[2]).memory

    body = post(alice, [{"text": TEXTS[2]}, {"text": TEXTS[2], "scope": "team:accounts"}]).json()

    assert body["results"][0] == {
        **body["results"][0],
        "status": "existing",
        "mem_id": memory.mem_id,
    }
    assert body["results"][1]["status"] == "stored"  # another scope is another memory


def test_one_bad_item_refuses_the_batch_and_stores_nothing(alice):
    response = post(
        alice,
        [
            {"text": TEXTS[0]},
            {"text": "", "significance": 1.5},
            {"text": TEXTS[1], "stare_scores": {"x": 0.5}},
            "not an object",
        ],
    )

    assert response.status_code == 400
    errors = response.json()
    assert errors["memories[1].text"] == ["must not be empty."]
    assert errors["memories[1].significance"] == ["must be between 0 and 1 (got 1.5)."]
    assert "memories[2].stare_scores.x" in errors
    assert errors["memories[3]"] == ["must be a JSON object."]
    assert not Memory.objects.filter(workspace=alice.agent.workspace).exists()


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"memories": []}, "memories", "must hold 1 to 1000 memories (got 0)."),
        ({"memories": "x"}, "memories", "must be a list of memories"),
        ({"memories": [{"text": "a"}], "extra": 1}, "extra", "is not a known field."),
    ],
)
def test_bad_bodies(alice, body, field, message):
    response = alice.client.post(URL, body, format="json")
    assert response.status_code == 400
    assert message in response.json()[field][0]


def test_a_batch_over_the_limit_is_refused(alice, settings):
    settings.MM_BULK_MAX_ITEMS = 2
    response = post(alice, [{"text": text} for text in TEXTS])
    assert response.status_code == 400
    assert response.json() == {"memories": ["must hold 1 to 2 memories (got 3)."]}


def test_writer_scores_are_never_overwritten(alice):
    [result] = memory_remember_bulk(
        agent=alice.agent, items=[{"text": TEXTS[0], "stare_scores": {"s": 0.1, "a": 0.9}}]
    )

    memory = result.memory
    assert memory.s_score == 0.1 and memory.s_origin == "writer"
    assert memory.a_score == 0.9 and memory.a_origin == "writer"
    assert memory.t_origin == "scorer" and memory.r_origin == "scorer"
    assert memory.e_score is None


def test_uncalibrated_categories_stay_empty_by_default(alice):
    [result] = memory_remember_bulk(
        agent=alice.agent,
        items=[{"text": "Always run the migrations first.", "category": "procedure"}],
    )
    # The scorer's dimensions stay empty; A is the engine's asymmetry score, not the scorer's.
    assert {d: v for d, v in result.memory.stare_scores.items() if d != "a"} == dict.fromkeys(
        "ster"
    )
    assert result.memory.a_origin == ""  # no record yet: no A score


def test_skip_variables_change_what_is_filled(alice, settings):
    settings.MM_STARE_AUTO_SKIP_DIMS = "t,a,e"
    settings.MM_STARE_AUTO_SKIP_CATEGORIES = "fact"
    fact, procedure = memory_remember_bulk(
        agent=alice.agent,
        items=[
            {"text": TEXTS[0]},
            {"text": "Always run the migrations first.", "category": "procedure"},
        ],
    )

    assert {d: v for d, v in fact.memory.stare_scores.items() if d != "a"} == dict.fromkeys("ster")
    assert procedure.memory.stare_origins == {
        "s": "scorer",
        "t": None,
        "a": None,
        "r": "scorer",
        "e": None,
    }


def test_a_skip_list_that_asks_for_an_unfitted_dimension_is_a_configuration_error(alice, settings):
    from django.core.exceptions import ImproperlyConfigured

    from memories.checks import check_scorer

    settings.MM_STARE_AUTO_SKIP_DIMS = "a"
    assert [e.id for e in check_scorer(None)] == ["memories.E005"]
    with pytest.raises(ImproperlyConfigured, match="no model for e"):
        memory_remember_bulk(agent=alice.agent, items=[{"text": TEXTS[0]}])
    settings.MM_STARE_AUTO_SKIP_DIMS = "s,x"
    assert "'x' is not a STARE dimension" in check_scorer(None)[0].msg


def test_filters_work_on_scorer_scores_and_exclude_unscored(alice):
    memory_remember_bulk(agent=alice.agent, items=[{"text": text} for text in TEXTS])
    memory_remember(agent=alice.agent, text="Caroline went to a support group, unscored.")

    hits = memory_search(Reader.of_agent(alice.agent), query="support group", min_s_score=0.0)

    assert hits and all(hit.memory.s_origin == "scorer" for hit in hits)
    assert "unscored" not in " ".join(hit.memory.text for hit in hits)


def test_sessions_chain_episodes_within_the_batch(alice):
    results = memory_remember_bulk(
        agent=alice.agent,
        items=[{"text": f"Turn {n} of the call.", "session": "call-1"} for n in range(3)],
    )

    first, second, third = (r.memory for r in results)
    second.refresh_from_db()
    third.refresh_from_db()
    assert first.episode_text == ""
    assert second.episode_text == "Turn 0 of the call." and second.follows_id == first.pk
    assert third.episode_text == "Turn 0 of the call.\nTurn 1 of the call."
    assert third.follows_id == second.pk and third.episode_embedding is not None


def test_another_workspace_cannot_claim_a_key_or_see_the_memories(alice, charlie):
    post(alice, [{"text": TEXTS[0], "idempotency_key": "shared-key"}])

    body = post(charlie, [{"text": TEXTS[0], "idempotency_key": "shared-key"}]).json()

    assert body["results"][0]["status"] == "stored"  # keys are per scope
    assert Memory.objects.filter(workspace=charlie.agent.workspace).count() == 1


def test_a_key_of_alices_private_memory_tells_bob_nothing(alice, bob):
    """Finding 8 of the hardening issue: the key's answer revealed that a memory Bob cannot see
    exists. Keys are per scope: Bob's write under the same key is simply stored, in his scope."""
    alices = post(alice, [{"text": TEXTS[0], "idempotency_key": "mine"}]).json()["results"][0]

    response = post(bob, [{"text": TEXTS[1], "idempotency_key": "mine"}])
    single = bob.client.post(
        "/api/v1/memories", {"text": TEXTS[2], "idempotency_key": "mine"}, format="json"
    )

    assert response.status_code == 201, response.json()
    bobs = response.json()["results"][0]
    assert bobs["status"] == "stored" and bobs["mem_id"] != alices["mem_id"]
    assert "cannot see" not in response.content.decode()
    # Bob's single write finds his own memory under the key, never Alice's.
    assert single.status_code == 200 and single.json()["mem_id"] == bobs["mem_id"]
    assert Memory.objects.get(mem_id=alices["mem_id"]).text == TEXTS[0]


def test_a_key_is_shared_within_a_shared_scope(alice, bob):
    """Two agents writing to the scope they share under one key store one memory."""
    shared = alice.agent.scopes.exclude(pk=alice.agent.private_scope_id).first()
    assert shared is not None and bob.agent.scopes.filter(pk=shared.pk).exists()
    body = {"text": TEXTS[0], "idempotency_key": "team-1", "scope": shared.name}

    first = alice.client.post("/api/v1/memories", body, format="json")
    again = post(bob, [{**body, "text": TEXTS[1]}]).json()["results"][0]

    assert first.status_code == 201
    assert again["status"] == "existing" and again["mem_id"] == first.json()["mem_id"]


def test_one_batch_may_use_a_key_in_two_scopes(alice):
    shared = alice.agent.scopes.exclude(pk=alice.agent.private_scope_id).first()
    body = post(
        alice,
        [
            {"text": TEXTS[0], "idempotency_key": "k"},
            {"text": TEXTS[1], "idempotency_key": "k", "scope": shared.name},
            {"text": TEXTS[2], "idempotency_key": "k"},
        ],
    ).json()

    assert [r["status"] for r in body["results"]] == ["stored", "stored", "existing"]
    assert body["results"][2]["mem_id"] == body["results"][0]["mem_id"]


def test_the_content_hash_of_the_migration_is_the_services(alice):
    memory = memory_remember(agent=alice.agent, text="Ünïcode — and a: colon", source="a:b").memory
    from importlib import import_module

    fill = import_module("memories.migrations.0010_memory_idempotency").FILL
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET content_hash = '' WHERE id = %s", [memory.pk])
        cursor.execute(fill)
    memory.refresh_from_db()
    assert memory.content_hash == content_hash(
        scope_id=memory.scope_id, source="a:b", text=memory.text
    )


def test_remember_with_a_used_idempotency_key_returns_the_stored_memory(alice):
    body = {"text": "Dana prefers email.", "idempotency_key": "note-7"}

    first = alice.client.post("/api/v1/memories", body, format="json")
    again = alice.client.post("/api/v1/memories", {**body, "text": "Changed."}, format="json")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["mem_id"] == first.json()["mem_id"]
    assert again.json()["text"] == "Dana prefers email."
    assert Memory.objects.filter(workspace=alice.agent.workspace).count() == 1


def test_a_retried_batch_that_supersedes_comes_back_as_existing(alice):
    old = memory_remember(agent=alice.agent, text="The office closes at 17:00.").memory
    batch = [{"text": "The office closes at 18:00.", "supersedes": old.mem_id}]

    first = post(alice, batch).json()
    again = post(alice, batch)

    assert again.status_code == 200, again.json()
    assert again.json()["results"][0]["status"] == "existing"
    assert again.json()["results"][0]["mem_id"] == first["results"][0]["mem_id"]
    old.refresh_from_db()
    assert old.status == "superseded"


def test_a_retried_remember_that_supersedes_comes_back_by_its_key(alice):
    old = memory_remember(agent=alice.agent, text="The office closes at 17:00.").memory
    body = {"text": "It closes at 18:00.", "supersedes": old.mem_id, "idempotency_key": "r1"}

    first = alice.client.post("/api/v1/memories", body, format="json")
    again = alice.client.post("/api/v1/memories", body, format="json")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["mem_id"] == first.json()["mem_id"]


def test_superseding_a_superseded_memory_is_still_refused(alice):
    old = memory_remember(agent=alice.agent, text="The office closes at 17:00.").memory
    post(alice, [{"text": "The office closes at 18:00.", "supersedes": old.mem_id}])

    response = post(alice, [{"text": "No, at 19:00.", "supersedes": old.mem_id}])

    assert response.status_code == 400
    assert "is superseded, not active" in response.json()["memories[0].supersedes"][0]


def test_two_items_cannot_supersede_the_same_memory(alice):
    old = memory_remember(agent=alice.agent, text="The office closes at 17:00.").memory

    response = post(
        alice,
        [
            {"text": "It closes at 18:00.", "supersedes": old.mem_id},
            {"text": "It closes at 19:00.", "supersedes": old.mem_id},
        ],
    )

    assert response.status_code == 400
    assert response.json() == {
        "memories[1].supersedes": [f"memory {old.mem_id!r} is superseded by memories[0] already."]
    }


def test_the_memory_detail_shows_where_each_score_came_from(alice):
    body = post(alice, [{"text": TEXTS[0], "stare_scores": {"a": 0.4}}]).json()

    detail = alice.client.get(f"/api/v1/memories/{body['results'][0]['mem_id']}").json()

    assert detail["stare_origins"] == {
        "s": "scorer",
        "t": "scorer",
        "a": "writer",
        "r": "scorer",
        "e": None,
    }
    assert detail["provenance"][0]["new"]["stare_origins"] == detail["stare_origins"]


def test_a_body_that_is_a_list_is_refused(alice):
    response = alice.client.post(URL, [{"text": "a"}], format="json")
    assert response.status_code == 400
    assert response.json() == {"body": ["must be a JSON object."]}


def test_an_unknown_category_in_the_skip_list_is_a_configuration_error(settings):
    from memories.checks import check_scorer

    settings.MM_STARE_AUTO_SKIP_CATEGORIES = "fact,gossip"
    [error] = check_scorer(None)
    assert error.id == "memories.E005" and "'gossip' is not a category" in error.msg


def test_the_shipped_model_gives_the_recorded_scores():
    from memories.embeddings import get_embedder
    from memories.scorer import bundled_scorer, calibration

    example = calibration()["example"]
    vector = get_embedder().embed([example["text"]])

    predicted = bundled_scorer().predict([example["text"]], vector)

    assert {d: round(float(p[0]), 3) for d, p in predicted.items()} == {
        d: round(v, 3) for d, v in example["scores"].items()
    }
