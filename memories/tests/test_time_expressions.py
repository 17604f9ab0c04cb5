"""Phrases of time in a memory's words and questions that ask when
(``memories.temporal.expressions``), as the learned ranking reads them."""

import pytest

from memories.temporal.expressions import asks_when, says_when


@pytest.mark.parametrize(
    "text",
    [
        "I went to the support group yesterday.",
        "We went camping two weeks ago!",
        "Last Saturday was the charity race.",
        "She moved here in 2019.",
        "The pottery class starts next month",
        "In May we painted the fence.",
        "On Friday I signed up.",
        "a few days later it rained",
        "Ich war GESTERN dort — YESTERDAY too",  # case and other scripts around it
    ],
)
def test_phrases_of_time_are_found(text):
    assert says_when(text)


@pytest.mark.parametrize(
    "text",
    [
        "I may go to the museum.",  # the verb, not the month
        "Pottery is like therapy for me.",
        "",
        "   \n\t ",
        "Sundayschool",  # a weekday inside a longer word
        "The mayor spoke.",
    ],
)
def test_texts_without_a_time_are_not(text):
    assert not says_when(text)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When did Caroline go to the LGBTQ support group?", True),
        ("  when is the renewal due", True),
        ("What year did Maria move?", True),
        ("How long has John been surfing?", True),
        ("How many weeks did the trip last?", True),
        ("What did Melanie paint?", False),
        ("Where did they go when it rained?", False),  # "when" inside, not asked
        ("", False),
    ],
)
def test_questions_that_ask_when(question, expected):
    assert asks_when(question) is expected
