"""The learned ranking (``MM_SEARCH_LEARNED``): a search's candidates re-ordered by the shipped
logistic model, each feature's share in the hit's explanation, nothing added that the search
did not read, and nothing read that the reader may not see."""

import json
import math

import pytest
from django.utils import timezone

from meaning_memory.testing import by_mem_id, mem_ids, searched
from memories.operations import memory_remember, memory_search
from memories.search.learned import FEATURES, MODEL_PATH, model_from, shipped_model
from memories.selectors.reader import Reader


@pytest.fixture(autouse=True)
def _learned(settings):
    settings.MM_SEARCH_LEARNED = True
    settings.MM_ENTITY_EXTRACTION = False  # the features do not read entities


def remember(actor, text, **fields):
    return memory_remember(agent=actor.agent, text=text, **fields).memory


def search(actor, **body):
    return searched(actor, **{"limit": 20, **body})


order, by_id = mem_ids, by_mem_id


def test_every_hit_explains_the_model_and_its_shares_add_up_to_its_score(alice):
    for text in (
        "Maria: I went to the pottery class yesterday.",
        "John: Pottery sounds fun, what did you make?",
        "Maria: A bowl for my mother, she loves it.",
    ):
        remember(alice, text, session="s1")
    hits = search(alice, query="What did Maria make in the pottery class?")
    assert len(hits) == 3
    model = shipped_model()
    for hit in hits:
        learned = hit["explanation"]["learned"]
        assert learned["model"] == model.version
        assert list(learned["features"]) == list(model.names)
        total = sum(learned["features"].values()) + model.intercept
        assert learned["score"] == pytest.approx(total, abs=1e-4)
    relevance = [hit["explanation"]["relevance"] for hit in hits]
    assert max(relevance) == pytest.approx(1.0) and min(relevance) == pytest.approx(0.0)


def test_off_the_search_is_the_formula_s(alice, settings):
    for text in ("Maria: I went to Paris last May.", "Maria: Paris is lovely."):
        remember(alice, text)
    settings.MM_SEARCH_LEARNED = False
    hits = search(alice, query="When did Maria go to Paris?")
    assert hits and all("learned" not in hit["explanation"] for hit in hits)


def test_a_question_that_asks_when_prefers_the_line_that_says_when(alice, settings):
    undated = remember(alice, "Maria: I went to Paris with my sister, we loved it.")
    dated = remember(alice, "Maria: My sister and I went to Paris last May.")
    for n in range(4):
        remember(alice, f"John: The office plants need water, note {n}.")
    query = "When did Maria go to Paris?"
    hits = by_id(search(alice, query=query))
    assert order(search(alice, query=query))[0] == dated.mem_id
    assert hits[dated.mem_id]["explanation"]["learned"]["features"]["says_when_asked"] > 0
    assert hits[undated.mem_id]["explanation"]["learned"]["features"]["says_when_asked"] < 0
    # A question that does not ask when gives the phrase of time no such share.
    other = by_id(search(alice, query="What did Maria do in Paris?"))
    assert other[dated.mem_id]["explanation"]["learned"]["features"]["says_when_asked"] < 0


def test_a_session_named_like_no_session_is_still_its_own(alice):
    """A memory without a session is a session of its own, whatever another's is named."""
    from memories.search.learned import features

    lone = remember(alice, "Maria: Zephyr renewal, on its own.")
    remember(alice, f"Maria: Zephyr renewal, in a session named #{lone.pk}.", session=f"#{lone.pk}")
    hits = memory_search(Reader.of_agent(alice.agent), query="Zephyr renewal", every_candidate=True)
    column = FEATURES.index("session_candidates_log")
    assert len(hits) == 2 and (features(hits, "Zephyr renewal")[:, column] == 0).all()


def test_it_re_orders_what_the_search_read_and_filters_and_the_limit_hold(alice):
    for n in range(6):
        remember(alice, f"Zephyr renewal note {n}.", category="fact", session="s1")
    decision = remember(alice, "Zephyr renewal decision.", category="decision", session="s1")
    remember(alice, "Lunch menu for Friday.", category="fact")
    assert len(search(alice, query="renewal", limit=3)) == 3
    decisions = search(alice, query="renewal", category="decision")
    assert order(decisions) == [decision.mem_id]
    every = memory_search(
        Reader.of_agent(alice.agent), query="renewal", limit=3, every_candidate=True
    )
    assert len(every) == 8 and len({hit.memory.pk for hit in every}) == 8
    assert all(not hit.learned for hit in every)  # before any re-ordering


def test_reading_few_fields_of_the_candidates_changes_no_hit_and_shows_every_field(
    alice, django_assert_num_queries
):
    """The candidates are read with a few fields until the ranking keeps some: the same hits,
    figures and explanations as re-ordering candidates read whole, and what is shown whole."""
    from memories.search.learned import reranked

    other = remember(alice, "Zephyr renewal replaced.", category="fact")
    for n in range(12):
        remember(
            alice,
            f"Maria: the Zephyr renewal, note {n}, due last Friday.",
            session=f"s{n % 3}",
            metadata={"n": n},
        )
    memory_remember(agent=alice.agent, text="Zephyr renewal, corrected.", supersedes=other.mem_id)
    query, moment = "When is the Zephyr renewal due?", timezone.now()  # one age for both
    reader = Reader.of_agent(alice.agent)  # made once per request, before the search
    memory_search(reader, query=query, limit=5)  # statistics read once
    with django_assert_num_queries(2):
        hits = memory_search(reader, query=query, limit=5, now=moment)
        for hit in hits:  # every shown field there, with its scope and replacement: no query
            assert hit.row is None
            assert hit.memory.get_deferred_fields() == {
                "embedding",
                "episode_embedding",
                "search_vector",
            }
            assert hit.memory.scope.name == "private:alice"
            if hit.memory.superseded_by_id:
                assert hit.memory.superseded_by.mem_id
    every = memory_search(
        Reader.of_agent(alice.agent), query=query, limit=5, every_candidate=True, now=moment
    )
    whole = reranked(every, query=query, limit=5)
    assert [(h.memory.pk, h.relevance, h.score, h.gated, h.learned) for h in hits] == [
        (h.memory.pk, h.relevance, h.score, h.gated, h.learned) for h in whole
    ]
    assert [h.memory.metadata for h in hits] == [h.memory.metadata for h in whole]


def test_what_the_reader_may_not_see_changes_nothing_it_is_shown(alice, bob, charlie):
    shared = "team:accounts"
    seen = remember(alice, "Maria: The Zephyr renewal is due in March.", scope=shared, session="x")
    remember(alice, "Maria: Other renewal notes.", scope=shared, session="y")
    before = by_id(search(bob, query="When is the Zephyr renewal due?"))
    # Alice's private lines in the same session, and another workspace's, in the same words.
    private = [
        remember(alice, f"Maria: Zephyr renewal private note {n}, due last week.", session="x")
        for n in range(5)
    ]
    remember(charlie, "Maria: The Zephyr renewal is due in March.", session="x")
    after = by_id(search(bob, query="When is the Zephyr renewal due?"))
    assert set(after) == set(before)
    assert (
        after[seen.mem_id]["explanation"]["learned"]
        == before[seen.mem_id]["explanation"]["learned"]
    )
    assert not {m.mem_id for m in private} & set(after)
    hers = by_id(search(alice, query="When is the Zephyr renewal due?"))
    assert {m.mem_id for m in private} <= set(hers)
    assert (
        hers[seen.mem_id]["explanation"]["learned"] != after[seen.mem_id]["explanation"]["learned"]
    )
    theirs = search(charlie, query="When is the Zephyr renewal due?")
    assert len(theirs) == 1 and seen.mem_id not in by_id(theirs)


def test_with_the_graph_both_shares_are_explained(alice):
    for text in ("Maria: Zephyr renewal due in March.", "John: Zephyr renewal pricing."):
        remember(alice, text, entities=[{"name": "Zephyr", "type": "customer"}])
    hits = search(alice, query="renewal", expand="graph")
    assert len(hits) == 2
    assert all({"learned", "graph"} <= set(hit["explanation"]) for hit in hits)


@pytest.mark.parametrize(
    "query",
    ["  ¿Cuándo fue María a París?  ", "MARIA??", "when " * 50, "Zoë: 東京に行ったのはいつ？"],
)
def test_awkward_queries_are_ranked(alice, query):
    remember(alice, "Maria: I went to Tokyo last spring.")
    remember(alice, "Zoë: 東京に行ったのは去年です。")
    hits = search(alice, query=query)
    assert all("learned" in hit["explanation"] for hit in hits)


def test_the_shipped_model_says_what_fitted_it():
    data = json.loads(MODEL_PATH.read_text())
    model = shipped_model()
    assert list(model.names) == [name for name in FEATURES if name in model.names]
    assert len(model.weights) == len(model.names) and all(map(math.isfinite, model.weights))
    assert (model.scale > 0).all()
    fitted_on = data["fitted_on"]
    assert len(fitted_on["dataset_sha256"]) == 64
    assert fitted_on["questions"] > 0 and fitted_on["evidence_candidates"] > 0
    assert "--fit-model" in fitted_on["command"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"features": ["relevance", "no_such_feature"]}, "some of"),
        ({"features": ["similarity", "relevance"]}, "in that order"),
        ({"weights": [1.0, 2.0, 3.0]}, "one mean, scale and weight"),
        ({"scale": [1.0, 0.0]}, "scales above 0"),
        ({"scale": [-1.0, 1.0]}, "scales above 0"),
        ({"weights": [float("nan"), 0.0]}, "finite numbers"),
        ({"intercept": float("inf")}, "finite numbers"),
    ],
)
def test_a_model_that_does_not_fit_the_features_is_refused(change, message):
    data = {
        "version": "x",
        "features": ["relevance", "similarity"],
        "mean": [0.0, 0.0],
        "scale": [1.0, 1.0],
        "weights": [1.0, 0.0],
        "intercept": 0.0,
    }
    with pytest.raises(ValueError, match=message):
        model_from(data | change)
