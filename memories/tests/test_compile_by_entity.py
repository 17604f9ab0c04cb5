"""The compiled file by customer (issue 58): grouped by the entity each memory mentions, each
line dated, and narrowed by a metadata filter, over REST, the command line and the dashboard;
what another agent or workspace cannot see is in no section."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from meaning_memory.testing import make_member
from memories.models import Workspace
from memories.operations import memory_remember
from memories.tokens import count_tokens

COMPILED = "/api/v1/compiled"
SHARED = "team:accounts"
ORION = [{"name": "Orion Health", "type": "customer"}]
KESTREL = [{"name": "Kestrel Analytics", "type": "customer"}]


@pytest.fixture
def notes(alice, bob):
    def write(agent, text, entities=(), scope=SHARED, day=1, **fields):
        return memory_remember(
            agent=agent,
            text=text,
            scope=scope,
            entities=list(entities),
            created_at=datetime(2026, 3, day, 9, tzinfo=UTC),
            **fields,
        ).memory

    return {
        "orion": [
            write(alice.agent, "Orion Health renews in March.", ORION, day=2,
                  metadata={"customer": "orion"}, significance=0.95),
            write(bob.agent, "Orion Health wants 80 seats.", ORION, day=5,
                  metadata={"customer": "orion"}),
        ],
        "kestrel": write(alice.agent, "Kestrel Analytics pays by card.", KESTREL, day=3,
                         metadata={"customer": "kestrel"}),
        "other": write(alice.agent, "The renewal checklist is in the shared drive.", day=4),
        "private": write(alice.agent, "Orion Health may churn.", ORION, scope="", day=6,
                         metadata={"customer": "orion"}),
    }  # fmt: skip


def compiled(actor, **query):
    response = actor.client.get(COMPILED, {"format": "markdown", **query})
    assert response.status_code == 200, response.content
    return response.content.decode()


def sections(markdown: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:]
            found[current] = []
        elif current and line.startswith("- "):
            found[current].append(line)
    return found


@pytest.mark.django_db
def test_grouped_by_entity_each_line_dated_other_last(alice, notes):
    markdown = compiled(alice, group_by="entity", display_mode="off")
    found = sections(markdown)
    assert list(found) == ["Orion Health (customer)", "Kestrel Analytics (customer)", "Other"]
    assert found["Orion Health (customer)"] == [
        "- 2026-03-02 Orion Health renews in March.",
        "- 2026-03-06 Orion Health may churn.",
        "- 2026-03-05 Orion Health wants 80 seats.",
    ]  # protected first, then by weight, the newer first
    assert found["Other"] == ["- 2026-03-04 The renewal checklist is in the shared drive."]
    assert "By entity" in markdown
    # The default stays by category, undated.
    default = sections(compiled(alice, display_mode="off"))
    assert "Facts" in default and not any(
        re.match(r"- \d{4}-\d\d-\d\d ", line) for lines in default.values() for line in lines
    )


@pytest.mark.django_db
def test_a_metadata_filter_compiles_one_customers_file(alice, bob, charlie, notes):
    markdown = compiled(alice, group_by="entity", metadata='{"customer": "orion"}')
    lines = [line for lines in sections(markdown).values() for line in lines]
    assert len(lines) == 3 and all("Orion" in line for line in lines)
    assert 'Only memories whose metadata match {"customer": "orion"}' in markdown
    # Bob does not see alice's private memory; charlie (another workspace) sees none.
    bobs = compiled(bob, group_by="entity", metadata='{"customer": "orion"}')
    assert "may churn" not in bobs and "80 seats" in bobs
    theirs = compiled(charlie, group_by="entity", metadata='{"customer": "orion"}')
    assert "Orion" not in theirs and "0 memories in" in theirs
    as_json = alice.client.get(
        COMPILED, {"format": "json", "metadata": '{"customer": {"in": ["kestrel"]}}'}
    ).json()
    assert [entry["mem_id"] for entry in as_json["included"]] == [notes["kestrel"].mem_id]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"group_by": "customer"}, "group_by"),
        ({"metadata": "{customer"}, "metadata"),
        ({"metadata": '{"seats": {"gte": []}}'}, "metadata"),
        ({"metadata": "[]"}, "metadata"),
    ],
)
def test_bad_options_are_refused_naming_the_field(alice, notes, query, field):
    response = alice.client.get(COMPILED, {"format": "json", **query})
    assert response.status_code == 400
    assert field in response.json()


@pytest.mark.django_db
def test_the_grouped_file_keeps_to_its_budget(alice, notes):
    for i in range(40):
        memory_remember(
            agent=alice.agent,
            text=f"Orion Health note number {i} about the rollout plan and its owners.",
            entities=ORION,
            scope=SHARED,
        )
    for budget in (200, 400, 800):
        markdown = compiled(alice, group_by="entity", budget=budget)
        assert count_tokens(markdown) <= budget
        assert "## Orion Health (customer)" in markdown


@pytest.mark.django_db
def test_the_command_line_and_the_dashboard_group_and_filter(alice, notes, client):
    out = StringIO()
    call_command(
        "compile", "--workspace", "acme", "--group-by", "entity",
        "--metadata", '{"customer": "kestrel"}', "--display-mode", "off", stdout=out,
    )  # fmt: skip
    assert sections(out.getvalue()) == {
        "Kestrel Analytics (customer)": ["- 2026-03-03 Kestrel Analytics pays by card."]
    }
    with pytest.raises(CommandError, match="group_by"):
        call_command("compile", "--workspace", "acme", "--group-by", "nope")
    member = make_member("vera", Workspace.objects.get(slug="acme"), role="viewer")
    client.force_login(member)
    page = client.get(
        "/w/acme/compiled", {"group_by": "entity", "metadata": '{"customer": "orion"}'}
    ).content.decode()
    assert "## Orion Health (customer)" in page and "Kestrel" not in page.split("</form>")[-1]
    bad = client.get("/w/acme/compiled", {"metadata": '{"seats": {"gte": []}}'}).content.decode()
    assert "seats.gte" in bad
