"""Search as named pieces (``memories.search.recipe``, ``memories.search.statement``): each
candidate source, the session cap and the recipe on their own, and every hit naming the pieces
that placed it."""

import pytest

from meaning_memory.testing import by_mem_id, mem_ids, searched
from memories.operations import memory_remember, memory_search
from memories.search import statement
from memories.search.recipe import SOURCES, Recipe
from memories.selectors.reader import Reader


@pytest.fixture(autouse=True)
def _plain(settings):
    settings.MM_ENTITY_EXTRACTION = False


def remember(actor, text, **fields):
    return memory_remember(agent=actor.agent, text=text, **fields).memory


def candidates(actor, query, recipe, **filters):
    """Every candidate the statement of ``recipe`` reads for ``query``, by mem_id."""
    hits = memory_search(
        Reader.of_agent(actor.agent),
        query=query,
        limit=1,
        recipe=recipe,
        every_candidate=True,
        **filters,
    )
    return {hit.memory.mem_id: hit for hit in hits}


def conversation(actor, **fields):
    """A session whose answer follows the line that matches the question, sharing no word and
    little meaning with it, among lines about other things."""
    for n in range(6):
        remember(actor, f"Ops note {n}: rotate the backup tapes on shelf {n}.", session="other")
    asked = remember(actor, "Maria: Which colour did you paint the nursery?", session="s1")
    answer = remember(actor, "John: Sage green, with white trim.", session="s1", **fields)
    return asked, answer


def test_the_default_recipe_is_the_settings(settings):
    settings.MM_SEARCH_CANDIDATES = 33
    settings.MM_SEARCH_LEARNED = False
    settings.MM_SEARCH_TIME_NEIGHBOURS = 0
    settings.MM_SEARCH_SESSION_CAP = 0
    recipe = Recipe.default()
    assert (recipe.candidates, recipe.relevance, recipe.sources) == (
        33,
        "formula",
        ("vector", "keyword"),
    )
    assert recipe.placed_by() == ["fusion", "neighbour", "gate", "score"]
    assert not recipe.reorders
    settings.MM_SEARCH_LEARNED = True
    settings.MM_SEARCH_TIME_NEIGHBOURS = 4
    settings.MM_SEARCH_SESSION_CAP = 2
    recipe = Recipe.default()
    assert recipe.sources == SOURCES and recipe.time_neighbour_seeds == 4
    assert recipe.placed_by() == ["fusion", "neighbour", "learned", "gate", "score", "session_cap"]
    assert recipe.reorders and recipe.but(session_cap=0, relevance="formula").reorders is False


@pytest.mark.parametrize(
    "changes",
    [
        {"sources": ("vector",)},
        {"sources": ("vector", "keyword", "entities")},
        {"relevance": "bm25"},
        {"candidates": 0},
        {"time_neighbour_seeds": 0},
        {"session_cap": -1},
    ],
)
def test_a_recipe_refuses_what_no_piece_does(changes):
    with pytest.raises(ValueError, match="recipe"):
        Recipe().but(**changes)


def test_each_statement_piece_is_its_named_table_expression():
    base = "workspace_id = 1 AND scope_id = ANY(%(scopes)s) AND status = ANY(%(statuses)s)"
    assert "nearest AS" in statement.vector_source(
        base=base, nearest_where="", count=7, exact=False
    )
    assert "LIMIT 7" in statement.vector_source(base=base, nearest_where="", count=7, exact=False)
    assert "+ 0" in statement.vector_source(base=base, nearest_where="", count=7, exact=True)
    assert "LIMIT %(per_word)s" in statement.keyword_source(base=base)
    assert "by_keyword AS" in statement.keyword_list(count=3)
    neighbours = statement.time_neighbour_source(base=base, workspace_id=1, seeds=2)
    assert "follows_id IN (SELECT id FROM seeds)" in neighbours and base in neighbours
    assert "by_time" in statement.signals(time_neighbours=True)
    assert "by_time" not in statement.signals(time_neighbours=False)
    assert "a_score" in statement.gate_and_score(gate_size=20, asymmetry=True)
    assert "a_score" not in statement.gate_and_score(gate_size=20, asymmetry=False)
    whole = statement.statement(
        Recipe(),
        base=base,
        nearest_where="",
        workspace_id=1,
        count=5,
        exact=False,
        gate_size=20,
        shown="SELECT * FROM ranked",
    )
    names = ["nearest", "matching", "pool", "words", "ranks", "by_vector", "by_keyword"]
    names += ["signals", "episodes", "normalized", "fused", "neighboured", "relevant"]
    names += ["scored", "ranked"]
    positions = [whole.index(f" {name} AS") for name in names]
    assert positions == sorted(positions) and "seeds AS" not in whole


def test_the_turn_next_to_a_strong_hit_joins_the_candidates_only_with_its_source(alice):
    asked, answer = conversation(alice)
    query = "What colour did they paint the nursery?"
    plain = Recipe().but(candidates=1)
    found = candidates(alice, query, plain)
    assert asked.mem_id in found and answer.mem_id not in found
    with_neighbours = plain.but(sources=SOURCES, time_neighbour_seeds=1)
    found = candidates(alice, query, with_neighbours)
    assert found[answer.mem_id].found_by == ("time_neighbours",)
    assert "vector" in found[asked.mem_id].found_by
    # Its signals are computed as any candidate's: its own similarity, and a keyword rank from
    # the question's words in its episode (the line before it), weighted lower than its own.
    assert 0 < found[answer.mem_id].similarity < found[asked.mem_id].similarity
    assert 0 < found[answer.mem_id].keyword_rank < found[asked.mem_id].keyword_rank


def test_a_neighbour_the_filters_exclude_is_never_a_candidate(alice, bob):
    asked, answer = conversation(alice, category="preference")
    query = "What colour did they paint the nursery?"
    recipe = Recipe().but(candidates=1, sources=SOURCES, time_neighbour_seeds=3)
    found = candidates(alice, query, recipe, category="fact")
    assert asked.mem_id in found and answer.mem_id not in found
    # Another agent's memories of a session with the same name are not its neighbours.
    private = remember(bob, "Bob: Sage green, like alice said.", session="s1")
    assert private.mem_id not in candidates(alice, query, recipe)
    assert not candidates(bob, query, recipe).keys() & {asked.mem_id, answer.mem_id}


def test_a_session_cap_moves_a_session_s_further_turns_after_the_others(alice, settings):
    settings.MM_SEARCH_LEARNED = False
    same = [
        remember(alice, f"Maria: the pottery class made a bowl, number {n}.", session="s1")
        for n in range(3)
    ]
    other = remember(alice, "Maria: the pottery class is on Tuesdays.", session="s2")
    query = "What did Maria make at the pottery class?"
    before = mem_ids(searched(alice, query=query, limit=4))
    assert set(before) == {m.mem_id for m in [*same, other]}
    settings.MM_SEARCH_SESSION_CAP = 1
    hits = searched(alice, query=query, limit=4)
    first_of_s1 = next(mem for mem in before if mem != other.mem_id)
    assert mem_ids(hits)[:2] == [mem for mem in before if mem in {first_of_s1, other.mem_id}]
    pieces = [hit["explanation"]["pieces"] for hit in hits]
    assert [p.get("capped", False) for p in pieces] == [False, False, True, True]
    assert all(p["placed_by"][-1] == "session_cap" for p in pieces)
    # The cap changes the order only: the same memories, the same limit.
    assert set(mem_ids(hits)) == set(before)
    assert len(searched(alice, query=query, limit=2)) == 2


def test_every_hit_names_the_pieces_that_placed_it(alice, settings):
    settings.MM_SEARCH_LEARNED = True
    remember(alice, "Renewal for Orion Health is due in March.")
    remember(alice, "The quarterly offsite is in Lisbon.")
    hits = by_mem_id(searched(alice, query="When is the Orion renewal?"))
    for hit in hits.values():
        pieces = hit["explanation"]["pieces"]
        assert pieces["placed_by"] == Recipe.default().placed_by()
        assert pieces["found_by"] and set(pieces["found_by"]) <= set(SOURCES)
        assert "capped" not in pieces
    renewal = next(h for h in hits.values() if "Renewal" in h["text"])
    assert renewal["explanation"]["pieces"]["found_by"] == ["vector", "keyword"]


def test_time_neighbours_on_by_setting_keep_the_scopes_and_the_limit(alice, bob, settings):
    settings.MM_SEARCH_TIME_NEIGHBOURS = 2
    settings.MM_SEARCH_CANDIDATES = 1
    asked, answer = conversation(alice)
    remember(bob, "Bob: a private note in s1 too.", session="s1")
    hits = searched(alice, query="Which colour for the nursery?", limit=3)
    assert len(hits) == 3
    assert all("Bob" not in hit["text"] for hit in hits)
    # The question's line is a seed, so the answer after it is found by that source too.
    assert "time_neighbours" in by_mem_id(hits)[answer.mem_id]["explanation"]["pieces"]["found_by"]
