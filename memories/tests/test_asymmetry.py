"""Asymmetry: perspective and attribution on every memory, the cues that fill them, the search
filters, sources' records and the A score, on real PostgreSQL with the real embedder."""

from urllib.parse import quote

import pytest

from memories.asymmetry.cues import clarity, read_cues
from memories.models import Entity, Memory, ProvenanceEvent, SourceRecord
from memories.operations import memory_remember, memory_remember_bulk, memory_search
from memories.selectors.reader import Reader
from memories.selectors.sources import WRITER, source_records
from memories.services import memory_feedback, memory_forget
from memories.services.asymmetry import asymmetry_refresh

URL = "/api/v1/memories"


def remember(actor, text, **fields):
    response = actor.client.post(URL, {"text": text, **fields}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


# --- Fields and cues -----------------------------------------------------------------------------


def test_the_writer_s_perspective_and_attribution_are_kept_and_shown(alice):
    body = remember(
        alice,
        "The renewal moves to April.",
        perspective="external",
        attributed_to="Maria Lopez",
        source_kind="stated",
        sig_self=0.3,
        sig_external=0.9,
        scope="team:accounts",
    )
    assert body["perspective"] == "external"
    assert body["source_kind"] == "stated"
    assert body["attributed_to"]["name"] == "Maria Lopez"
    assert body["attributed_to"]["type"] == "person"
    assert body["sig_self"] == 0.3 and body["sig_external"] == 0.9
    # Significance, not given, is the larger of what it means to the writer and to others.
    assert body["significance"] == 0.9
    assert body["attribution"] == {
        "perspective": {"origin": "writer"},
        "attributed_to": {"origin": "writer"},
        "source_kind": {"origin": "writer"},
    }
    memory = Memory.objects.get(mem_id=body["mem_id"])
    entity = Entity.objects.get(pk=memory.attributed_to_id)
    assert entity.workspace_id == alice.agent.workspace_id and entity.origin == "writer"
    # The same name again is the same entity, and by its id too.
    again = remember(alice, "It stays in April.", attributed_to="maria lopez")
    assert again["attributed_to"]["entity_id"] == entity.entity_id
    by_id = remember(alice, "April it is.", attributed_to=entity.entity_id)
    assert by_id["attributed_to"]["entity_id"] == entity.entity_id


def test_perspective_defaults_to_the_scope(alice):
    assert remember(alice, "My own note.")["perspective"] == "self"
    shared = remember(alice, "A note for the team.", scope="team:accounts")
    assert shared["perspective"] == "team"
    assert shared["attribution"]["perspective"] == {"origin": "scope"}


@pytest.mark.parametrize(
    ("text", "kind", "name"),
    [
        ("According to Maria Lopez, the renewal is in March.", "stated", "Maria Lopez"),
        ("Yesterday Tom Baker said the office closes early.", "stated", "Tom Baker"),
        ("I heard from Dana Scott that the budget was cut.", "hearsay", "Dana Scott"),
        ("Apparently the budget was cut.", "hearsay", ""),
        ("I think the customer will churn.", "inferred", ""),
        ("The API returned a 502 for the billing endpoint.", "tool", ""),
        ("I checked the invoice: it was paid on May 3.", "observed", ""),
    ],
)
def test_cues_fill_what_the_writer_did_not_say(alice, text, kind, name):
    body = remember(alice, text)
    assert body["source_kind"] == kind
    assert body["attribution"]["source_kind"]["origin"] == "cue"
    assert body["attribution"]["source_kind"]["words"]
    if name:
        assert body["attributed_to"]["name"] == name
        assert body["attribution"]["attributed_to"]["origin"] == "cue"
        entity = Entity.objects.get(entity_id=body["attributed_to"]["entity_id"])
        assert entity.origin == "extraction"
    else:
        assert body["attributed_to"] is None


def test_a_text_without_cues_says_nothing_and_the_writer_wins_over_cues(alice):
    plain = remember(alice, "The renewal is in March.")
    assert plain["source_kind"] is None and plain["attributed_to"] is None
    assert "source_kind" not in plain["attribution"]
    given = remember(alice, "I think the renewal is in March.", source_kind="observed")
    assert given["source_kind"] == "observed"
    assert given["attribution"]["source_kind"] == {"origin": "writer"}


def test_clarity_orders_the_kinds_of_source():
    assert clarity("observed", False) > clarity("tool", False) > clarity("stated", True)
    assert clarity("stated", True) > clarity("stated", False) > clarity("inferred", False)
    assert clarity("inferred", False) > clarity("hearsay", False)
    assert read_cues("The renewal is in March.") is None


# --- Bad input -----------------------------------------------------------------------------------


def test_bad_perspective_source_kind_and_significances_are_400s_naming_the_rule(alice):
    response = alice.client.post(
        URL,
        {
            "text": "x",
            "perspective": "boss",
            "source_kind": "rumour",
            "sig_self": 1.5,
            "sig_external": -0.1,
        },
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert "self, user, team, external" in body["perspective"][0]
    assert "custom:<name>" in body["perspective"][0]
    assert "observed, stated, tool, inferred, hearsay" in body["source_kind"][0]
    assert set(body) >= {"sig_self", "sig_external"}
    assert not Memory.objects.exists()
    custom = remember(alice, "For the auditors.", perspective="custom:auditors")
    assert custom["perspective"] == "custom:auditors"


def test_attributed_to_another_workspace_s_entity_is_a_404_like_a_missing_one(alice, charlie):
    theirs = remember(charlie, "Their note.", attributed_to="Greta Globex")
    entity_id = theirs["attributed_to"]["entity_id"]
    for reference in (entity_id, "0123456789abcdef"):
        response = alice.client.post(
            URL, {"text": "Mine.", "attributed_to": reference}, format="json"
        )
        assert response.status_code == 404
        assert response.json() == {"detail": f"no entity {reference!r} is known to this agent."}
    assert not Memory.objects.filter(workspace=alice.agent.workspace).exists()
    response = alice.client.post(
        f"{URL}/bulk",
        {"memories": [{"text": "One."}, {"text": "Two.", "attributed_to": entity_id}]},
        format="json",
    )
    assert response.status_code == 404
    assert response.json()["detail"].startswith("memories[1].attributed_to:")
    assert not Memory.objects.filter(workspace=alice.agent.workspace).exists()


# --- Search filters ------------------------------------------------------------------------------


def test_search_filters_by_perspective_attribution_and_source_kind(alice, bob):
    agent = alice.agent
    memory_remember(
        agent=agent, text="Zephyr renews in March, for the customer.", perspective="external"
    )
    memory_remember(agent=agent, text="Zephyr renews in March, my own reminder.")
    stated = memory_remember(
        agent=agent, text="According to Maria Lopez, Zephyr renews in March.", scope="team:accounts"
    ).memory
    memory_remember(agent=agent, text="I think Zephyr renews in March.")
    query = "When does Zephyr renew?"

    def found(who=agent, **filters):
        return {h.memory.text for h in memory_search(Reader.of_agent(who), **filters, query=query)}

    assert found(perspective="external") == {"Zephyr renews in March, for the customer."}
    assert found(source_kind="inferred") == {"I think Zephyr renews in March."}
    by_name = found(attributed_to="maria lopez")
    assert by_name == {stated.text}
    entity_id = Entity.objects.get(pk=stated.attributed_to_id).entity_id
    assert found(attributed_to=entity_id) == by_name
    hits = memory_search(Reader.of_agent(agent), query=query, attributed_to=entity_id)
    assert hits[0].relations["attributed_to"][0]["name"] == "Maria Lopez"
    # Bob sees the shared memory, so he knows of Maria; an unknown name is refused by name.
    assert found(who=bob.agent, attributed_to="Maria Lopez") == by_name
    response = alice.client.post(
        "/api/v1/search", {"query": query, "attributed_to": "Nobody Known"}, format="json"
    )
    assert response.status_code == 404 and "attributed_to" in response.json()
    response = alice.client.post(
        "/api/v1/search", {"query": query, "perspective": "boss"}, format="json"
    )
    assert response.status_code == 400 and "perspective" in response.json()
    response = alice.client.post(
        "/api/v1/search", {"query": query, "source_kind": "inferred"}, format="json"
    )
    assert response.status_code == 200
    [hit] = response.json()["results"]
    assert hit["source_kind"] == "inferred" and hit["attribution"]["source_kind"]["origin"] == "cue"
    assert hit["perspective"] == "self"


# --- Sources' records ----------------------------------------------------------------------------


def _written(agent, source, count, scope="team:accounts"):
    return [
        memory_remember(
            agent=agent,
            text=f"{source} reports figure {n} for the quarter.",
            source=source,
            scope=scope,
        ).memory
        for n in range(count)
    ]


def test_a_source_s_record_follows_feedback_given_after_the_fact(alice):
    agent = alice.agent
    good = _written(agent, "ledger", 4)
    bad = _written(agent, "rumours", 4)
    records = source_records(Reader.of_engine(agent.workspace))
    assert records.sources[(WRITER, "ledger")].estimate == pytest.approx(0.5)
    for memory in good:
        memory_feedback(agent=agent, mem_id=memory.mem_id, action="important", reason="checked")
    for memory in bad:
        memory_feedback(agent=agent, mem_id=memory.mem_id, action="demote", reason="was wrong")
    records = source_records(Reader.of_engine(agent.workspace))
    ledger, rumours = records.sources[(WRITER, "ledger")], records.sources[(WRITER, "rumours")]
    assert (ledger.right, ledger.wrong, rumours.right, rumours.wrong) == (4, 0, 0, 4)
    assert records.prior == pytest.approx(0.5)
    # Shrunk toward the prior: four memories do not make a source certain.
    assert ledger.estimate == pytest.approx((4 + 5 * 0.5) / (4 + 5))
    assert rumours.estimate == pytest.approx(1 - ledger.estimate)
    # Later feedback moves it back; a forgotten memory stops counting.
    memory_feedback(agent=agent, mem_id=good[0].mem_id, action="demote", reason="recounted")
    memory_forget(agent=agent, mem_id=good[1].mem_id, reason="a duplicate")
    ledger = source_records(Reader.of_engine(agent.workspace)).sources[(WRITER, "ledger")]
    assert (ledger.memories, ledger.right, ledger.wrong) == (3, 2, 0)


def test_superseded_by_another_source_counts_against_the_older_memory(alice):
    agent = alice.agent
    old = memory_remember(
        agent=agent, text="The plan is Basic.", source="crm", scope="team:accounts"
    ).memory
    memory_remember(
        agent=agent,
        text="The plan is Pro.",
        source="billing",
        scope="team:accounts",
        supersedes=old.mem_id,
    )
    same = memory_remember(
        agent=agent, text="The owner is Ana.", source="crm", scope="team:accounts"
    ).memory
    memory_remember(
        agent=agent,
        text="The owner is Ben.",
        source="crm",
        scope="team:accounts",
        supersedes=same.mem_id,
    )
    crm = source_records(Reader.of_engine(agent.workspace)).sources[(WRITER, "crm")]
    assert (crm.memories, crm.right, crm.wrong) == (3, 0, 1)


def test_a_reader_s_records_count_only_the_memories_it_sees(alice, bob):
    _written(alice.agent, "diary", 2, scope="private")
    _written(alice.agent, "ledger", 2)
    assert (WRITER, "diary") in source_records(Reader.of_engine(alice.agent.workspace)).sources
    mine = alice.client.get("/api/v1/sources").json()
    assert {r["key"] for r in mine["results"]} == {"diary", "ledger"}
    theirs = bob.client.get("/api/v1/sources").json()
    assert {r["key"] for r in theirs["results"]} == {"ledger"}
    assert bob.client.get("/api/v1/sources/writer/diary").status_code == 404
    assert alice.client.get("/api/v1/sources/writer/diary").status_code == 200


def test_sources_api_lists_records_and_shows_the_events_behind_one(alice, charlie):
    agent = alice.agent
    good = _written(agent, "ledger desk", 3)
    memory_feedback(agent=agent, mem_id=good[0].mem_id, action="important", reason="audited")
    memory_feedback(agent=agent, mem_id=good[1].mem_id, action="demote", reason="typo in it")
    remember(alice, "According to Maria Lopez, the renewal is in March.", scope="team:accounts")
    body = alice.client.get("/api/v1/sources", {"kind": "writer"}).json()
    assert body["prior"] == pytest.approx(0.5) and body["prior_strength"] == 5.0
    first = body["results"][0]
    assert (first["key"], first["memories"], first["right"], first["wrong"]) == (
        "ledger desk",
        3,
        1,
        1,
    )
    entities = alice.client.get("/api/v1/sources", {"kind": "entity"}).json()["results"]
    assert [e["name"] for e in entities] == ["Maria Lopez"]
    detail = alice.client.get(f"/api/v1/sources/writer/{quote('ledger desk')}").json()
    assert [(e["action"], e["effect"], e["reason"]) for e in detail["events"]] == [
        ("demote", "wrong", "typo in it"),
        ("important", "right", "audited"),
    ]
    entity = alice.client.get(f"/api/v1/sources/entity/{entities[0]['key']}")
    assert entity.status_code == 200 and entity.json()["name"] == "Maria Lopez"
    # Another workspace, an unknown source, an unknown kind, bad paging: refused.
    assert charlie.client.get(f"/api/v1/sources/writer/{quote('ledger desk')}").status_code == 404
    assert charlie.client.get(f"/api/v1/sources/entity/{entities[0]['key']}").status_code == 404
    assert alice.client.get("/api/v1/sources/writer/nobody").status_code == 404
    assert alice.client.get("/api/v1/sources/team/ledger").status_code == 404
    response = alice.client.get("/api/v1/sources", {"kind": "team", "page_size": 0})
    assert response.status_code == 400 and set(response.json()) == {"kind", "page_size"}


# --- The A score ---------------------------------------------------------------------------------


def test_a_scores_follow_the_sources_records_after_a_refresh(alice):
    agent = alice.agent
    for memory in _written(agent, "ledger", 6):
        memory_feedback(agent=agent, mem_id=memory.mem_id, action="important", reason="checked")
    for memory in _written(agent, "rumours", 6):
        memory_feedback(agent=agent, mem_id=memory.mem_id, action="demote", reason="was wrong")
    before = memory_remember(agent=agent, text="ledger says revenue grew.", source="ledger").memory
    # No record was kept yet (the records are the last refresh's): nothing is known, no score.
    assert (before.a_score, before.a_origin) == (None, "")
    result = asymmetry_refresh(workspace_id=agent.workspace_id)
    assert result.sources >= 2 and result.rescored > 0
    before.refresh_from_db()
    assert before.a_origin == "asymmetry" and 0 <= before.a_score <= 1
    assert SourceRecord.objects.filter(workspace_id=agent.workspace_id, kind="prior").exists()
    # Every score the refresh changed is in its memory's history, by no one, with why.
    event = ProvenanceEvent.objects.get(memory=before, action="rescore")
    assert event.old_values == {"a_score": None} and event.new_values["a_score"] == before.a_score
    assert event.agent is None and event.user is None and "sources' records" in event.reason
    assert ProvenanceEvent.objects.filter(action="rescore").count() == result.rescored
    again = asymmetry_refresh(workspace_id=agent.workspace_id)  # nothing changed: no event
    assert ProvenanceEvent.objects.filter(action="rescore").count() == result.rescored
    assert again.rescored == 0
    reliable = memory_remember(
        agent=agent, text="Revenue grew this quarter.", source="ledger"
    ).memory
    doubtful = memory_remember(
        agent=agent, text="Revenue grew this quarter!", source="rumours"
    ).memory
    assert reliable.a_score > doubtful.a_score
    stored = Memory.objects.get(pk=reliable.pk)
    assert stored.a_score == reliable.a_score and stored.a_origin == "asymmetry"
    # A score the writer gave is never replaced.
    given = memory_remember(agent=agent, text="Mine.", stare_scores={"a": 0.2}).memory
    asymmetry_refresh(workspace_id=agent.workspace_id)
    given.refresh_from_db()
    assert (given.a_score, given.a_origin) == (0.2, "writer")


def test_bulk_writes_carry_attribution_and_a_scores(alice):
    results = memory_remember_bulk(
        agent=alice.agent,
        items=[
            {"text": "According to Maria Lopez, the office moves.", "scope": "team:accounts"},
            {"text": "The office moves.", "attributed_to": "maria lopez", "perspective": "user"},
        ],
    )
    first, second = (Memory.objects.get(pk=r.memory.pk) for r in results)
    assert first.attributed_to_id == second.attributed_to_id is not None
    assert first.source_kind == "stated" and second.perspective == "user"
    # Maria Lopez has no record in this workspace: no A score, rather than the model's prior.
    assert first.a_score is second.a_score is None
    assert first.a_origin == second.a_origin == ""


def test_with_asymmetry_ranking_on_the_a_score_scales_the_score(alice, settings):
    agent = alice.agent
    # Equally relevant (the same words), among others that are not; the newer first on a tie.
    trusted = memory_remember(agent=agent, text="Zephyr renews its contract every March.").memory
    doubtful = memory_remember(agent=agent, text="Zephyr renews its contract every March.").memory
    for text in ("The Lisbon office opens at eight.", "Dana prefers invoices by email."):
        memory_remember(agent=agent, text=text)
    Memory.objects.filter(pk=doubtful.pk).update(a_score=0.1)
    Memory.objects.filter(pk=trusted.pk).update(a_score=0.9)
    query = "When does Zephyr renew its contract?"
    off = memory_search(Reader.of_agent(agent), query=query)
    assert off[0].memory.pk == doubtful.pk  # A does not rank while the switch is off
    assert "asymmetry_factor" not in off[0].explanation()
    assert off[0].explanation()["a_score"] == 0.1
    settings.MM_ASYMMETRY_RANKING = True
    on = memory_search(Reader.of_agent(agent), query=query)
    assert on[0].memory.pk == trusted.pk
    for hit in on:
        why = hit.explanation()
        a = 0.5 if why["a_score"] is None else why["a_score"]  # no score: neutral
        assert why["asymmetry_factor"] == pytest.approx(0.5 + 0.5 * a)
        assert why["score"] == pytest.approx(
            why["relevance"] * why["significance"] * why["age_factor"] * why["asymmetry_factor"],
            rel=1e-4,
        )


def test_a_stays_empty_until_a_record_has_the_minimum_of_verdicts(alice, settings):
    """No guessed score: below ``MM_ASYMMETRY_MIN_VERDICTS`` judged memories the model would
    answer its prior, so A stays empty; at the minimum the source's record gives one."""
    agent = alice.agent
    assert settings.MM_ASYMMETRY_MIN_VERDICTS == 3
    judged = _written(agent, "ledger", 3)
    for memory in judged[:2]:
        memory_feedback(agent=agent, mem_id=memory.mem_id, action="important", reason="checked")
    asymmetry_refresh(workspace_id=agent.workspace_id)
    two = memory_remember(agent=agent, text="ledger: invoices are due Friday.", source="ledger")
    assert (two.memory.a_score, two.memory.a_origin) == (None, "")
    assert Memory.objects.get(pk=two.memory.pk).a_score is None
    memory_feedback(agent=agent, mem_id=judged[2].mem_id, action="important", reason="checked")
    asymmetry_refresh(workspace_id=agent.workspace_id)
    three = memory_remember(agent=agent, text="ledger: invoices are due Monday.", source="ledger")
    assert three.memory.a_origin == "asymmetry" and 0 <= three.memory.a_score <= 1
    # The refresh gave the earlier memory its score too; a source with no record still has none.
    assert Memory.objects.get(pk=two.memory.pk).a_score is not None
    other = memory_remember(agent=agent, text="Invoices are due Friday.", source="rumours")
    assert other.memory.a_score is None
