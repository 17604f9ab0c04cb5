"""A person's role as the notes say it (``memories.relational.roles``): beside the name, in
the ways notes write it, without the company it is at, and nothing guessed."""

import pytest

from memories.relational.roles import person_names, role_in

PLACES = ["Orion Health", "Orion"]


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("Dana Reyes, CTO of Orion Health, wants SSO.", "CTO"),
        ("Met their CTO Dana Reyes today.", "CTO"),
        ("Orion's Head of IT, Dana Reyes, asked for SSO.", "Head of IT"),
        ("Dana Reyes (VP of Clinical Operations) signed.", "VP of Clinical Operations"),
        ("Dana Reyes, VP of Operations at Orion Health, asked.", "VP of Operations"),
        ("The CTO of Orion Health Dana Reyes called.", "CTO"),
        ("Dana is our main contact at Orion.", "main contact"),
        ("Dana became the new Procurement Lead.", "Procurement Lead"),
        ("Dana Reyes, Senior Director of Procurement, said no.", "Senior Director of Procurement"),
        ("dana reyes, cto of orion", None),  # lower case: no title this reads
        ("Dana Reyes likes email.", None),
        ("Dana Reyes, who runs IT, called.", None),
        ("Danabelle, CTO of Kestrel, called.", None),  # another name that starts the same
        ("The CTO called; Dana Reyes did not.", None),
    ],
)
def test_a_role_is_read_beside_the_name_or_not_at_all(text, role):
    assert role_in(text, person_names("Dana Reyes", ["D. Reyes"]), PLACES) == role


def test_a_person_is_called_by_the_full_name_an_alias_or_the_first_name():
    assert person_names("Dana Reyes", ["D. Reyes"]) == ["Dana Reyes", "D. Reyes", "Dana"]
    assert person_names("Cher", []) == ["Cher"]
