"""The written range (``written_from``, ``written_until``): memories written in a span of days or
between two instants, the same on every channel, with clear errors for a range that cannot
hold a memory."""

import io
import json
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.test import Client

from meaning_memory.testing import make_member
from memories.errors import ValidationFailed
from memories.mcp import tools
from memories.operations import memory_remember

MARCH_1 = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
MARCH_31_LATE = datetime(2026, 3, 31, 23, 59, 59, 999999, tzinfo=UTC)
APRIL_1 = datetime(2026, 4, 1, 0, 0, tzinfo=UTC)
FEBRUARY_28_LATE = datetime(2026, 2, 28, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.fixture
def renewals(alice):
    """Four notes about Orion's renewal, written at the edges of March 2026."""
    written = {}
    for name, when in (
        ("february", FEBRUARY_28_LATE),
        ("march_first", MARCH_1),
        ("march_last", MARCH_31_LATE),
        ("april", APRIL_1),
    ):
        written[name] = memory_remember(
            agent=alice.agent,
            text=f"Orion Health's renewal call notes ({name.replace('_', ' ')}).",
            created_at=when,
        ).memory.mem_id
    return written


def found(actor, path="/api/v1/search", **body):
    if path == "/api/v1/search":
        response = actor.client.post(path, {"query": "Orion renewal call", **body}, format="json")
    else:
        response = actor.client.get(path, body)
    assert response.status_code == 200, response.json()
    return {r["mem_id"] for r in response.json()["results"]}


@pytest.mark.parametrize("path", ["/api/v1/search", "/api/v1/memories"])
def test_days_are_whole_days_and_both_ends_are_included(alice, renewals, path):
    march = {renewals["march_first"], renewals["march_last"]}
    assert found(alice, path, written_from="2026-03-01", written_until="2026-03-31") == march
    assert found(alice, path, written_from="2026-03-01") == march | {renewals["april"]}
    assert found(alice, path, written_until="2026-02-28") == {renewals["february"]}
    assert found(alice, path, written_from="2026-03-31", written_until="2026-03-31") == {
        renewals["march_last"]
    }
    # An instant is included at either end, to the microsecond.
    assert (
        found(
            alice,
            path,
            written_from=MARCH_1.isoformat(),
            written_until=MARCH_31_LATE.isoformat(),
        )
        == march
    )
    assert found(alice, path, written_until="2026-03-01T00:00:00Z") == {
        renewals["february"],
        renewals["march_first"],
    }
    # Another zone's instant is the same instant: 01:00 in Paris is midnight in UTC.
    assert found(alice, path, written_until="2026-03-01T01:00:00+01:00") == {
        renewals["february"],
        renewals["march_first"],
    }


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({"written_from": "2026-02-30"}, "written_from", "must be a day (2026-03-01)"),
        ({"written_from": "March 1st"}, "written_from", "or an ISO 8601 timestamp"),
        ({"written_until": 20260301}, "written_until", "must be a day"),
        ({"written_until": ""}, "written_until", "must be a day"),
        (
            {"written_from": "2026-03-02", "written_until": "2026-03-01"},
            "written_until",
            "must not be before written_from",
        ),
        (
            {"written_from": "2026-03-01T10:00:00Z", "written_until": "2026-03-01T09:59:59Z"},
            "written_until",
            "must not be before written_from",
        ),
    ],
)
def test_a_range_that_cannot_hold_a_memory_is_refused_by_name(alice, body, field, rule):
    responses = [alice.client.post("/api/v1/search", {"query": "Orion", **body}, format="json")]
    if all(isinstance(value, str) for value in body.values()):  # a query string holds text
        responses.append(alice.client.get("/api/v1/memories", body))
    for response in responses:
        assert response.status_code == 400
        assert rule in " ".join(response.json()[field]), response.json()


def test_padded_days_from_a_query_string_are_read(alice, renewals):
    response = alice.client.get(
        "/api/v1/memories", {"written_from": " 2026-03-31 ", "written_until": "2026-03-31"}
    )
    assert response.status_code == 200, response.json()
    assert {r["mem_id"] for r in response.json()["results"]} == {renewals["march_last"]}


def test_the_command_line_and_the_mcp_tool_take_the_same_range(alice, renewals):
    out = io.StringIO()
    call_command(
        "search",
        "Orion renewal call",
        "--workspace",
        alice.agent.workspace.slug,
        "--agent",
        alice.agent.name,
        "--written-from",
        "2026-03-01",
        "--written-until",
        "2026-03-31",
        "--json",
        stdout=out,
    )
    from_cli = {hit["mem_id"] for hit in json.loads(out.getvalue())["results"]}
    assert from_cli == {renewals["march_first"], renewals["march_last"]}

    result = tools.search(
        alice.agent,
        {"query": "Orion renewal call", "written_from": "2026-04-01"},
    )
    assert not result.is_error
    assert {hit["mem_id"] for hit in result.structured_content["results"]} == {renewals["april"]}
    # The server makes this a tool error naming the field (``test_mcp``).
    with pytest.raises(ValidationFailed) as refused:
        tools.search(
            alice.agent,
            {"query": "Orion", "written_from": "2026-04-02", "written_until": "2026-04-01"},
        )
    assert refused.value.errors == {"written_until": ["must not be before written_from."]}
    schema = next(t for t in tools.TOOLS if t.name == "mm_search").schema
    assert {"written_from", "written_until"} <= set(schema["properties"])


def test_the_dashboards_search_offers_the_range_among_its_common_filters(alice, renewals):
    client = Client()
    client.force_login(make_member("reader", alice.agent.workspace, role="viewer"))
    slug = alice.agent.workspace.slug
    page = client.get(
        f"/w/{slug}/search",
        {"query": "Orion renewal call", "written_from": "2026-04-01"},
    )
    assert page.status_code == 200
    html = page.content.decode()
    common = html.split('class="more"')[0]
    assert 'type="date" name="written_from" value="2026-04-01"' in common
    assert 'name="written_until"' in common
    assert renewals["april"] in html and renewals["march_first"] not in html
    wrong = client.get(
        f"/w/{slug}/search",
        {"query": "Orion", "written_from": "2026-04-02", "written_until": "2026-04-01"},
    )
    assert "must not be before written_from" in wrong.content.decode()


def test_the_last_day_python_holds_is_an_open_end(alice, renewals):
    assert found(alice, written_from="2026-04-01", written_until="9999-12-31") == {
        renewals["april"]
    }
    assert found(alice, written_until="9999-12-31T23:59:59.999999Z") == set(renewals.values())
    assert found(alice, written_from="0001-01-01", written_until="2026-02-28") == {
        renewals["february"]
    }
