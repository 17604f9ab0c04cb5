import gc
import itertools
import tracemalloc
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from memories.errors import ValidationFailed
from memories.models import Memory
from memories.operations import memory_remember, memory_search
from memories.selectors.reader import Reader

RENEWAL = (
    "Zephyr Logistics renews its support contract every March; the renewal decides "
    "next year's budget."
)
QUERY = "When does Zephyr renew its contract?"

PEOPLE = ["Maya", "Jonas", "Ines", "Kwame", "Lena", "Omar", "Sofia", "Theo", "Yuki", "Ravi"]
THINGS = [
    "the garden shed",
    "a sourdough starter",
    "the office plants",
    "a jazz playlist",
    "the hiking trip",
    "the chess club",
    "a new bicycle",
    "the pottery class",
    "the book club",
    "a birthday cake",
    "the photo album",
    "the camping stove",
    "a watercolour set",
    "the marathon training",
    "the piano lessons",
    "a vegetable soup",
    "the aquarium",
    "the guitar strings",
    "a knitting pattern",
    "the bird feeder",
]
VERBS = [
    "repaired",
    "talked about",
    "planned",
    "photographed",
    "painted",
    "cleaned",
    "organised",
    "recommended",
]


def unrelated_texts(n: int) -> list[str]:
    combos = itertools.product(PEOPLE, VERBS, THINGS)
    return [
        f"{who} {verb} {thing} on a quiet afternoon."
        for who, verb, thing in itertools.islice(combos, n)
    ]


@pytest.fixture
def zephyr_workspace(alice):
    renewal = memory_remember(
        agent=alice.agent, text=RENEWAL, stare_scores={"s": 0.9, "t": 0.4}
    ).memory
    memory_remember(agent=alice.agent, text="Zephyr Logistics' main contact is Dana Whitfield.")
    memory_remember(agent=alice.agent, text="Zephyr Logistics ships from a warehouse in Rotterdam.")
    for text in unrelated_texts(200):
        memory_remember(agent=alice.agent, text=text)
    return renewal


def search(actor, **body):
    response = actor.client.post("/api/v1/search", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_renewal_memory_ranks_first(alice, zephyr_workspace):
    assert Memory.objects.filter(workspace=alice.agent.workspace).count() == 203
    body = search(alice, query=QUERY)
    results = body["results"]
    assert results[0]["mem_id"] == zephyr_workspace.mem_id
    assert len(results) == 10
    top = results[0]["explanation"]
    assert top["score"] == pytest.approx(
        top["relevance"] * top["significance"] * top["age_factor"], rel=1e-4
    )
    assert set(top) >= {
        "similarity",
        "keyword_rank",
        "relevance",
        "significance",
        "age_factor",
        "age_days",
        "score",
    }
    table = body["table"].splitlines()
    assert table[0] == "| # | mem_id | Sig | Eligible | Category | Date | Text |"
    assert table[2].startswith(f"| 1 | {zephyr_workspace.mem_id} | 0.80 | yes | fact | ")
    assert table[2].endswith("the renewal decides... |")
    assert len(table) == 12


def test_min_s_score_returns_only_the_scored_memory(alice, zephyr_workspace):
    results = search(alice, query=QUERY, min_s_score=0.8)["results"]
    assert [r["mem_id"] for r in results] == [zephyr_workspace.mem_id]
    assert search(alice, query=QUERY, min_s_score=0.95)["results"] == []
    assert (
        search(alice, query=QUERY, min_t_score=0.4)["results"][0]["mem_id"]
        == zephyr_workspace.mem_id
    )
    # min_e_score and min_a_score, on dimensions no one filled here (no source has a record, so
    # the engine gives no A), exclude them all: no score never passes.
    assert search(alice, query=QUERY, min_e_score=0.0)["results"] == []
    assert search(alice, query=QUERY, min_a_score=0.0)["results"] == []


def test_significance_and_age_never_lift_off_topic_memories(alice, zephyr_workspace):
    """The gate: a fresh, maximally significant but unrelated memory stays below an old,
    unimportant relevant one."""
    long_ago = timezone.now() - timedelta(days=720)
    old = memory_remember(
        agent=alice.agent,
        text="Zephyr's contract renewal happens in March.",
        significance=0.05,
        created_at=long_ago,
    ).memory
    Memory.objects.exclude(pk=old.pk).filter(text__contains="afternoon").update(significance=1.0)
    ids = [r["mem_id"] for r in search(alice, query=QUERY, limit=5)["results"]]
    assert old.mem_id in ids[:3]
    texts = Memory.objects.filter(mem_id__in=ids[:3]).values_list("text", flat=True)
    assert all("Zephyr" in t for t in texts)


def test_every_hit_explains_its_place_by_the_formula(alice, settings):
    """Relevance, the gate and the order, checked from each hit's own figures. The workspace is
    smaller than the candidate lists and the page, so every candidate is on the page and the
    z-scores can be computed again from the hits. The formula's order: the learned ranking
    (``test_learned_search``) off."""
    settings.MM_SEARCH_LEARNED = False
    memory_remember(agent=alice.agent, text=RENEWAL)
    memory_remember(agent=alice.agent, text="Zephyr Logistics' main contact is Dana Whitfield.")
    memory_remember(agent=alice.agent, text="Zephyr Logistics ships from a warehouse in Rotterdam.")
    for text in unrelated_texts(20):
        memory_remember(agent=alice.agent, text=text, significance=0.95)
    w, ratio = settings.MM_SEARCH_KEYWORD_WEIGHT, settings.MM_SEARCH_GATE_RATIO
    hits = memory_search(Reader.of_agent(alice.agent), query=QUERY, limit=30)
    assert len(hits) == 23

    def z(values):
        values = np.array(values)
        return (values - values.mean()) / values.std()

    similarity_z = z([hit.similarity for hit in hits])
    keyword_z = z([hit.keyword_rank for hit in hits])
    episode_z = z([hit.episode_similarity for hit in hits])
    fused = (1 - w) * similarity_z + w * keyword_z
    fused += settings.MM_SEARCH_EPISODE_VECTOR_WEIGHT * episode_z
    relevance = (fused - fused.min()) / (fused.max() - fused.min())  # no episodes: no neighbours
    for hit, expected_fused, expected in zip(hits, fused, relevance, strict=True):
        assert hit.episode_similarity == hit.similarity  # no episode: its own vector
        assert hit.neighbour == 0
        assert hit.fused == pytest.approx(expected_fused)
        assert hit.relevance == pytest.approx(expected)
        assert hit.score == pytest.approx(hit.relevance * hit.memory.significance * hit.age_factor)
    passed = [hit for hit in hits if hit.gated]
    assert passed and hits[: len(passed)] == passed  # those that pass the gate come first
    assert [h.score for h in passed] == sorted((h.score for h in passed), reverse=True)
    rest = [h.relevance for h in hits[len(passed) :]]
    assert rest  # off-topic memories fill the page after them
    assert rest == sorted(rest, reverse=True)
    assert max(hit.relevance for hit in hits) == pytest.approx(1.0)
    assert all(hit.relevance >= ratio for hit in passed)
    assert all(hit.relevance < ratio for hit in hits[len(passed) :])
    assert hits[0].memory.text == RENEWAL  # more significant noise does not lift it
    assert all("Zephyr" not in hit.memory.text for hit in hits[3:])


def test_half_life_changes_the_ranking_exactly_as_the_formula_says(alice, settings):
    text = "The Orion launch checklist lives in the team wiki."
    now = timezone.now()
    recent = memory_remember(
        agent=alice.agent, text=text, significance=0.5, created_at=now - timedelta(days=10)
    ).memory
    old = memory_remember(
        agent=alice.agent, text=text, significance=1.0, created_at=now - timedelta(days=200)
    ).memory

    def ranked(half_life):
        settings.MM_S1_HALF_LIFE_DAYS = half_life
        hits = memory_search(
            Reader.of_agent(alice.agent), query="Where is the Orion checklist?", now=now
        )
        for hit in hits:
            age = (now - hit.memory.created_at).total_seconds() / 86400
            assert hit.age_factor == pytest.approx(0.5 ** (age / half_life))
            assert hit.score == pytest.approx(
                hit.relevance * hit.memory.significance * 0.5 ** (age / half_life)
            )
        return [hit.memory.pk for hit in hits]

    # 90 days: 0.5 × 0.5^(10/90) = 0.463  >  1.0 × 0.5^(200/90) = 0.214
    assert ranked(90) == [recent.pk, old.pk]
    # 1000 days: 0.5 × 0.5^(10/1000) = 0.497  <  1.0 × 0.5^(200/1000) = 0.871
    assert ranked(1000) == [old.pk, recent.pk]
    # 140 days is close to the crossover (0.5 × 0.952 = 0.476 vs 0.372): still recent first
    assert ranked(140) == [recent.pk, old.pk]


def test_as_of_and_currently_valid(alice):
    now = timezone.now()
    future = memory_remember(
        agent=alice.agent,
        text="The Berlin office opens its doors.",
        valid_from=now + timedelta(days=30),
    ).memory
    expired = memory_remember(
        agent=alice.agent,
        text="The Berlin office runs a pilot.",
        valid_from=now - timedelta(days=60),
        valid_until=now - timedelta(days=30),
    ).memory
    always = memory_remember(agent=alice.agent, text="The Berlin office is on Torstrasse.").memory

    def ids(**body):
        return {r["mem_id"] for r in search(alice, query="Berlin office", **body)["results"]}

    assert ids() == {always.mem_id}
    assert ids(currently_valid=True) == {always.mem_id}
    assert ids(currently_valid=False) == {expired.mem_id}
    assert ids(as_of=(now - timedelta(days=45)).isoformat()) == {expired.mem_id, always.mem_id}
    assert ids(as_of=(now + timedelta(days=40)).isoformat()) == {future.mem_id, always.mem_id}
    assert ids(as_of=(now - timedelta(days=400)).isoformat()) == {always.mem_id}


def test_category_type_and_source_filters(alice):
    decision = memory_remember(
        agent=alice.agent,
        text="We chose Postgres for billing.",
        category="decision",
        source="architecture review",
    ).memory
    memory_remember(
        agent=alice.agent, text="Postgres billing tables are partitioned.", memory_type="procedural"
    )

    def ids(**body):
        return [r["mem_id"] for r in search(alice, query="Postgres billing", **body)["results"]]

    assert ids(category="decision") == [decision.mem_id]
    assert ids(source="architecture review") == [decision.mem_id]
    assert decision.mem_id not in ids(memory_type="procedural")
    assert len(ids(memory_type="procedural")) == 1


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({}, "query", "required"),
        ({"query": "  "}, "query", "must not be empty"),
        ({"query": "x", "limit": 0}, "limit", "between 1 and 100"),
        ({"query": "x", "limit": 1000}, "limit", "between 1 and 100"),
        ({"query": "x", "as_of": "yesterday"}, "as_of", "ISO 8601"),
        ({"query": "x", "min_s_score": 1.5}, "min_s_score", "between 0 and 1"),
        ({"query": "x", "category": "gossip"}, "category", "not one of"),
        ({"query": "x", "currently_valid": "maybe"}, "currently_valid", "true or false"),
        ({"query": "x", "colour": "red"}, "colour", "not a known field"),
        ({"query": "x", "colour": "red", "limit": 0}, "limit", "between 1 and 100"),
        ({"query": " ", "colour": "red"}, "query", "must not be empty"),
    ],
)
def test_bad_search_input(alice, body, field, rule):
    response = alice.client.post("/api/v1/search", body, format="json")
    assert response.status_code == 400
    assert rule in " ".join(response.json()[field]), response.json()


def test_search_runs_a_fixed_number_of_queries(alice, django_assert_max_num_queries):
    for text in unrelated_texts(30):
        memory_remember(agent=alice.agent, text=text)
    with django_assert_max_num_queries(12):
        search(alice, query="Maya cleaned the aquarium", limit=20)


def test_a_search_is_two_queries_once_statistics_are_read(alice, django_assert_num_queries):
    """The scopes and the query's words, then the search statement; no transaction, no SET."""
    for text in unrelated_texts(30):
        memory_remember(agent=alice.agent, text=text)
    # The first search reads the statistics and the Eligible column's boundary (kept for
    # MM_COMPILE_ELIGIBLE_TTL seconds).
    # The reader (its scopes) is made once per request, before the search.
    reader = Reader.of_agent(alice.agent)
    memory_search(reader, query="aquarium", limit=20)
    with django_assert_num_queries(2) as captured:
        hits = memory_search(reader, query="Maya cleaned the aquarium", limit=20)
    assert len(hits) == 20
    assert all(hit.memory.scope.name == "private:alice" for hit in hits)  # no query either
    assert not any("set_config" in query["sql"] for query in captured.captured_queries)


def test_connections_start_with_the_hnsw_search_settings(db, settings):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan')"
        )
        assert cursor.fetchone() == (str(settings.MM_HNSW_EF_SEARCH), "relaxed_order")


def prepared_searches(workspace_id: int) -> list[tuple[int, int]]:
    """(generic plans, custom plans) of each search statement prepared on this connection for
    the workspace."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE %s AND statement LIKE %s",
            ["%ORDER BY distance LIMIT%", f"%workspace_id = {workspace_id} AND%"],
        )
        return cursor.fetchall()


def test_a_search_statement_is_planned_once_per_connection_and_workspace(alice, charlie):
    memory_remember(agent=alice.agent, text="Maya cleaned the aquarium", metadata={"tank": 3})
    memory_remember(agent=charlie.agent, text="Maya cleaned the aquarium")
    for query in ("aquarium", "Maya", "who cleaned the aquarium?"):
        [hit] = memory_search(Reader.of_agent(alice.agent), query=query)
        assert hit.memory.metadata == {"tank": 3}  # converted from the database as the ORM does
        assert hit.memory.scope == alice.agent.private_scope
    [hit] = memory_search(Reader.of_agent(charlie.agent), query="aquarium")
    assert hit.memory.workspace_id == charlie.agent.workspace_id
    assert prepared_searches(alice.agent.workspace_id) == [(3, 0)]  # one plan, used three times
    assert prepared_searches(charlie.agent.workspace_id) == [(1, 0)]


def test_a_connection_keeps_at_most_the_configured_number_of_statements(alice, charlie, settings):
    settings.MM_SEARCH_PREPARED_MAX = 2  # the scopes query and one search statement
    memory_search(Reader.of_agent(alice.agent), query="aquarium")
    assert prepared_searches(alice.agent.workspace_id) == [(1, 0)]
    memory_search(Reader.of_agent(charlie.agent), query="aquarium")
    assert prepared_searches(alice.agent.workspace_id) == []  # dropped from the server too
    assert prepared_searches(charlie.agent.workspace_id) == [(1, 0)]


def test_search_without_prepared_statements_finds_the_same(alice, settings):
    """``MM_SEARCH_PREPARED=false``: the same statements, planned on every execution."""
    for text in unrelated_texts(30):
        memory_remember(agent=alice.agent, text=text)
    reader = Reader.of_agent(alice.agent)
    query = {"query": "Maya cleaned the aquarium", "limit": 20, "now": timezone.now()}
    prepared = memory_search(reader, **query)
    settings.MM_SEARCH_PREPARED = False
    planned = memory_search(reader, **query)
    assert prepared_searches(alice.agent.workspace_id) == [(1, 0)]  # not run prepared again
    assert [(h.memory.pk, h.score) for h in planned] == [(h.memory.pk, h.score) for h in prepared]


def test_a_connection_keeps_no_text_of_the_statements_it_did_not_prepare(alice):
    """psycopg counts every statement of a connection whose ``prepare_threshold`` is not None,
    keyed by its text with the values in: a served engine kept the megabytes of text of each
    bulk write's INSERT, on every pooled connection, and grew with every bulk write. Only the
    prepared statements of a search may stay."""
    from django.db import connection

    memory_remember(agent=alice.agent, text="Maya cleaned the aquarium")
    memory_search(Reader.of_agent(alice.agent), query="aquarium")  # prepares on this connection
    assert prepared_searches(alice.agent.workspace_id) == [(1, 0)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with connection.cursor() as cursor:
            for number in range(40):
                cursor.execute("SELECT length(%s)", [f"{number} " + "x" * 500_000])
                assert cursor.fetchone() == (len(str(number)) + 500_001,)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2_000_000, f"{kept:,} bytes kept after 20 MB of statements"
    [hit] = memory_search(
        Reader.of_agent(alice.agent), query="aquarium"
    )  # still prepared, and used
    assert prepared_searches(alice.agent.workspace_id) == [(2, 0)]


def test_more_candidates_than_ef_search_widens_it_for_that_query(transactional_db, alice, settings):
    for text in unrelated_texts(30):
        memory_remember(agent=alice.agent, text=text)
    expected = [
        h.memory.pk for h in memory_search(Reader.of_agent(alice.agent), query="aquarium", limit=25)
    ]
    connection_ef_search = str(settings.MM_HNSW_EF_SEARCH)
    settings.MM_HNSW_EF_SEARCH = 10  # below the 50 candidates: set_config for this query only
    hits = memory_search(Reader.of_agent(alice.agent), query="aquarium", limit=25)
    assert [h.memory.pk for h in hits] == expected
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search')")
        assert cursor.fetchone() == (connection_ef_search,)  # the connection's own again


def test_limit_above_the_candidate_count_still_fills_the_page(alice, settings):
    settings.MM_SEARCH_CANDIDATES = 5
    for text in unrelated_texts(30):
        memory_remember(agent=alice.agent, text=text)
    assert len(search(alice, query="Maya cleaned the aquarium", limit=25)["results"]) == 25


def test_vectors_of_another_model_are_not_compared(alice):
    """After a change of embedder, old vectors are not mixed with the new model's."""
    memory = memory_remember(
        agent=alice.agent, text="Quarterly revenue grew by eight percent."
    ).memory
    Memory.objects.filter(pk=memory.pk).update(embedding_model="some-older-model")
    hits = memory_search(Reader.of_agent(alice.agent), query="How much money came in?")
    assert hits == []  # no keyword in common, and its vector is not comparable
    hits = memory_search(Reader.of_agent(alice.agent), query="quarterly revenue")
    assert [h.memory.pk for h in hits] == [memory.pk]
    assert hits[0].similarity == 0.0 and hits[0].keyword_rank > 0
    assert hits[0].relevance == 1.0  # the only candidate


def test_words_most_memories_contain_do_not_select_keyword_candidates(alice, charlie, settings):
    from django.db import connection

    from memories.search import forget_statistics, keyword_queries

    for i in range(120):
        memory_remember(agent=alice.agent, text=f"Weekly status meeting number {i} went fine.")
    for i in range(30):
        memory_remember(agent=charlie.agent, text=f"Status report {i}: all fine.")
    rare = memory_remember(agent=alice.agent, text="The Zephyr status is green.").memory
    settings.MM_SEARCH_KEYWORD_SCAN_MAX = 50  # a word in more rows than this is common
    assert (
        keyword_queries("What is the Zephyr status?", Reader.of_agent(alice.agent))[1]
        == "'status' | 'zephyr'"
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    # A process reads the statistics once per few minutes, not per search: still the old ones.
    assert (
        keyword_queries("What is the Zephyr status?", Reader.of_agent(alice.agent))[1]
        == "'status' | 'zephyr'"
    )
    forget_statistics()
    ranked, matched = keyword_queries("What is the Zephyr status?", Reader.of_agent(alice.agent))
    assert set(ranked.replace("'", "").split(" | ")) == {"zephyr", "status"}
    assert matched == "'zephyr'"  # "status" is in nearly every memory
    # Every word common: the least common one alone ("meet" is in 120 memories, "status" in 121)
    assert keyword_queries("status meeting", Reader.of_agent(alice.agent))[1] == "'meet'"
    # In a workspace with 30 memories, no word can be in more than 50 of them.
    assert keyword_queries("status", Reader.of_agent(charlie.agent))[1] == "'status'"
    settings.MM_SEARCH_KEYWORD_SCAN_MAX = 1000  # more than the table holds: no word is common
    assert keyword_queries("What is the Zephyr status?", Reader.of_agent(alice.agent))[1] == ranked
    hits = memory_search(Reader.of_agent(alice.agent), query="What is the Zephyr status?", limit=3)
    assert hits[0].memory == rare
    assert hits[0].keyword_rank > 0  # ranked with every word of the query


def test_a_word_is_common_in_each_of_several_equal_workspaces(alice, charlie, settings):
    """Equal workspaces may get no most-common-values list: each then counts as average."""
    from django.db import connection

    from memories.search import forget_statistics, keyword_queries

    for i in range(60):
        project = ("Orion", "Vega") if i < 5 else ("Atlas", "Lyra")
        memory_remember(agent=alice.agent, text=f"Status of the {project[0]} project, week {i}.")
        memory_remember(agent=charlie.agent, text=f"Status of the {project[1]} project, week {i}.")
    settings.MM_SEARCH_KEYWORD_SCAN_MAX = 50
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    forget_statistics()
    for agent, name in ((alice.agent, "orion"), (charlie.agent, "vega")):  # in 5 of 60
        assert (
            keyword_queries(f"{name} status", Reader.of_agent(agent))[1] == f"'{name}'"
        )  # "status": in 60
    settings.MM_SEARCH_KEYWORD_SCAN_MAX = 70  # more than either workspace holds
    assert keyword_queries("orion status", Reader.of_agent(alice.agent))[1] == "'orion' | 'status'"


def test_words_with_quotes_and_backslashes_are_matched_literally(db):
    from django.db import connection

    from memories.search.words import tsquery

    for word in ("it's", "back\\slash", "'quoted'", "a|b&!c:*"):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT array_to_tsvector(ARRAY[%s]) @@ %s::tsquery", [word, tsquery([word])]
            )
            assert cursor.fetchone() == (True,), word


def test_punctuation_in_a_query_is_not_syntax(alice):
    memory_remember(agent=alice.agent, text="O'Brien's backup path is C:\\temp\\backups.")
    hits = memory_search(Reader.of_agent(alice.agent), query="O'Brien's \\ 'backup' & | ! :* path?")
    assert hits and "O'Brien" in hits[0].memory.text


def test_a_team_member_searches_every_scope_of_the_workspace(alice, bob, charlie):
    private = memory_remember(
        agent=bob.agent, text="Bob's private note: Zephyr renews in March."
    ).memory
    shared = memory_remember(
        agent=alice.agent, text="Zephyr renews in March.", scope="team:accounts"
    ).memory
    memory_remember(agent=charlie.agent, text="Globex: Zephyr renews in March.")

    hits = memory_search(Reader.of_engine(alice.agent.workspace), query="Zephyr renew March")

    assert {hit.memory.mem_id for hit in hits} == {private.mem_id, shared.mem_id}
    assert all(hit.eligible == "yes" for hit in hits)
    assert {
        hit.memory.mem_id for hit in memory_search(Reader.of_agent(alice.agent), query="Zephyr")
    } == {shared.mem_id}


def test_a_far_future_as_of_is_not_an_error(alice):
    memory_remember(agent=alice.agent, text=RENEWAL)
    response = alice.client.post(
        "/api/v1/search", {"query": QUERY, "as_of": "3000-01-01T00:00:00Z"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["results"][0]["explanation"]["age_factor"] == 0.0


def test_the_search_checks_its_arguments_whoever_calls(alice):
    """Code that calls the search directly gets the input shape's rules, as the adapters do."""
    with pytest.raises(ValidationFailed) as raised:
        memory_search(
            Reader.of_agent(alice.agent), query=" ", limit=0, min_s_score=1.5, category="Fact"
        )
    assert set(raised.value.errors) == {"query", "limit", "min_s_score", "category"}
    with pytest.raises(ValidationFailed) as unknown:
        memory_search(Reader.of_agent(alice.agent), arguments={"query": "x", "exact": True})
    assert unknown.value.errors == {"exact": ["is not a known field."]}
    with pytest.raises(ValidationFailed) as not_an_object:
        memory_search(Reader.of_agent(alice.agent), arguments=["x"])
    assert not_an_object.value.errors == {"body": ["must be a JSON object."]}


def test_a_tiny_significance_on_an_ancient_memory_is_no_500(alice):
    """Found by the property-based test: 1e-30 × an age factor of 0.5^1000 rounds to zero,
    which PostgreSQL refuses ("value out of range: underflow") instead of returning 0."""
    ancient = memory_remember(
        agent=alice.agent,
        text="Zephyr renews in March.",
        significance=1e-30,
        created_at=timezone.now() - timedelta(days=648 * 365),
    ).memory
    memory_remember(agent=alice.agent, text="Zephyr pays by invoice.")
    memory_remember(agent=alice.agent, text="Zephyr's office is in Lyon.")

    response = alice.client.post("/api/v1/search", {"query": "Zephyr"}, format="json")

    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert ancient.mem_id in {hit["mem_id"] for hit in results}
