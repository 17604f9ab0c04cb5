"""The near-duplicate judge: both gates (similarity, word overlap) and every guard."""

import pytest

from consolidation.duplicates import guards, judge, names, overlap

SAME = "Dana approved the travel budget for the Lisbon trip."


def near(first, second, similarity=0.99):
    return judge(first, second, similarity, min_similarity=0.92, min_overlap=0.6)


def test_two_wordings_of_one_statement_are_duplicates():
    verdict = near(SAME, "Dana approved the travel budget for the Lisbon trip!")
    assert verdict.duplicate and verdict.overlap == 1.0 and verdict.refused == []


@pytest.mark.parametrize(
    ("second", "guard"),
    [
        ("Dana approved the travel budget for the Porto trip.", "names"),
        ("Dana approved the travel budget of 3,000 for the Lisbon trip.", "numbers"),
        ("Dana approved the travel budget for the Lisbon trip in May 2027.", "numbers"),
        ("Dana approved the travel budget for the Lisbon trip on Monday.", "dates"),
        ("Dana approved the travel budget for the Lisbon trip tomorrow.", "dates"),
        ("Dana never approved the travel budget for the Lisbon trip.", "negation"),
        ("Dana rejected the travel budget for the Lisbon trip.", "negation"),
    ],
)
def test_a_difference_a_merge_would_lose_refuses_the_pair(second, guard):
    verdict = near(SAME, second)
    assert not verdict.duplicate and guard in verdict.refused
    assert guard in near(second, SAME).refused  # whichever side has it


def test_a_name_that_begins_a_sentence_is_told_by_the_entities_found():
    priya = "Priya approved the travel budget for the Lisbon trip."
    assert near(SAME, priya).duplicate  # "Dana" and "Priya" begin the sentence: words alone
    entities = ({"Dana", "Lisbon"}, {"Priya", "Lisbon"})
    verdict = judge(SAME, priya, 0.99, min_similarity=0.92, min_overlap=0.6, entities=entities)
    assert not verdict.duplicate and verdict.refused == ["names"]
    # Extraction that missed a name in one text (written in lower case) refuses nothing: the
    # name is there, in any case.
    lower = SAME.lower()
    found = ({"Dana", "Lisbon"}, set())
    assert judge(SAME, lower, 0.99, min_similarity=0.92, min_overlap=0.6, entities=found).duplicate


def test_both_gates_must_open():
    assert not near(SAME, SAME, similarity=0.91).duplicate
    assert not near(SAME, "Dana approved it.").duplicate  # close vectors, few shared words
    assert near(SAME, SAME, similarity=0.5).refused == []  # gates first: no guard consulted


def test_the_pieces():
    assert names("Then Dana met Priya in Lisbon. She said hi") == {"dana", "priya", "lisbon"}
    assert names("Caroline: Hey Mel! Wow. I think I'm late. (The end)") == {"mel"}
    assert overlap("a b c", "a b c") == 1.0 and overlap("a b", "c d") == 0.0
    assert guards("Two negatives: not never", "Two negatives") == []  # an even count cancels
