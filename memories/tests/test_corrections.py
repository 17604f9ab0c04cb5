"""The correction detector's reading of two texts (``memories.temporal.values`` and
``corrections``): values as intervals with what bounds them, and what makes a change."""

import pytest

from memories.temporal.corrections import assess, findings, model
from memories.temporal.judgment import judge
from memories.temporal.values import values


def kinds(text):
    return [(v.kind, v.text) for v in values(text)]


def test_values_are_read_with_their_kind():
    assert kinds("Helios Bank renewal moved to June after their audit.") == [("month", "June")]
    assert kinds("Released on May 18, 2018, it grossed $72 million.") == [
        ("when", "May 18, 2018"),
        ("money", "$72 million"),
    ]
    assert kinds("As of 21 March, there were 525 cases.") == [
        ("stamp", "21 March"),
        ("count", "525"),
    ]
    # "may" the verb, a hyphenated name, a season and a rating are not values.
    assert kinds("We may renew; COVID-19 hit the 2013–14 season; rated 6.9/10.") == []
    assert kinds("2026 persons were counted in 2020.") == [("count", "2026"), ("when", "2020")]


@pytest.mark.parametrize(
    "older, newer, changed",
    [
        ("Book Club earned more than $73 million.", "Book Club earned $72 million.", True),
        ("Book Club earned more than $73 million.", "Book Club earned $73.4 million.", False),
        ("Sales were about 3 million units.", "Sales were 3.2 million units.", False),
        ("She was born before June 1, 1987.", "She was born on May 24, 1987.", False),
        ("She was born before June 1, 1987.", "She was born on July 2, 1987.", True),
        ("The film was released after 2015.", "The film was released in 2015.", True),
        ("The team has 40 engineers.", "The team has 40 engineers and 3 managers.", False),
        ("The team has 40 engineers.", "The team opened 3 offices.", False),
    ],
)
def test_a_change_needs_a_value_of_the_same_thing_that_cannot_hold(older, newer, changed):
    _, found = findings(older, newer)
    assert any(f["rule"] == "value" for f in found) is changed


def test_a_denial_names_the_old_value():
    _, found = findings(
        "Zephyr renews its support contract every March.",
        "Zephyr renews its support contract in June, not March (corrected by Priya).",
    )
    assert found[0]["rule"] == "denial" and found[0]["denied"].startswith("March")


def test_the_verdict_applies_only_what_is_sure_or_restated_by_the_same_writer():
    older, newer = "Helios Bank renewal is in March.", "Helios Bank renewal moved to June."
    change = assess(older, newer)
    assert 0 < change.score < model().confident
    assert judge(older, newer, same_source=True).verdict == "apply"
    assert judge(older, newer, same_source=False).verdict == "propose"
    # Restated with no word of change: a curator decides, even for the same writer.
    assert judge(older, "Helios Bank renewal is in June.", same_source=True).verdict == "propose"
    unrelated = assess(older, "Helios Bank prefers email.")
    assert unrelated.score == 0
    assert judge(older, "Helios Bank prefers email.", same_source=True).verdict == ""
    # The model file says what it was fitted on.
    assert model().fitted_on["positive_label"] == "REFUTES" and model().confident > 0.5
