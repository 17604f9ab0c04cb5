import pytest

from memories.operations import memory_remember

URL = "/api/v1/compiled"
RENEWAL = (
    "Zephyr Logistics renews its support contract every March; the renewal decides "
    "next year's budget."
)


def test_compiled_file_is_markdown_by_default(alice):
    memory_remember(agent=alice.agent, text=RENEWAL, stare_scores={"s": 0.9, "t": 0.4})

    response = alice.client.get(URL)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    body = response.content.decode()
    assert body.startswith("# Memory: acme (agent alice)\n")
    assert f"- ●○——— {RENEWAL}\n" in body


def test_json_lists_what_was_cut_and_why(alice):
    for n, significance in enumerate([0.3, 0.9, 0.5, 0.7, 0.6, 0.4, 0.8, 0.2]):
        memory_remember(
            agent=alice.agent,
            text=f"Note {n}: the warehouse in Rotterdam ships pallets of spare parts to the "
            "northern depots every Tuesday and Thursday morning.",
            significance=significance,
        )

    response = alice.client.get(URL, {"budget": 200, "format": "json", "display_mode": "verbose"})

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["budget"] == 200 and body["tokens"] <= 200
    assert body["token_counter"] == "cl100k_base" and body["display_mode"] == "verbose"
    assert body["included_count"] + body["cut_count"] == body["candidates"] == 8
    assert body["cut_count"] == len(body["cut"]) > 0
    assert all(entry["reason"].startswith("budget") for entry in body["cut"])
    assert min(e["significance"] for e in body["included"]) > max(
        e["significance"] for e in body["cut"]
    )
    assert "[S– T– A– R– E–]" in body["markdown"]  # no record: no A


def test_accept_json_gives_json(alice):
    response = alice.client.get(URL, HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json()["candidates"] == 0


def test_as_of_and_ids(alice):
    memory = memory_remember(agent=alice.agent, text=RENEWAL).memory

    response = alice.client.get(URL, {"as_of": "2100-01-01T00:00:00Z", "show_ids": "true"})

    body = response.content.decode()
    assert "As of 2100-01-01T00:00:00Z" in body
    assert f"(mem_id: {memory.mem_id})" in body


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"budget": "0"}, "budget", "must be between 200 and 200000 tokens (got 0)."),
        ({"budget": "-3"}, "budget", "must be between 200 and 200000 tokens (got -3)."),
        ({"budget": "99999999"}, "budget", "must be between 200 and 200000 tokens"),
        ({"budget": "lots"}, "budget", "must be an integer."),
        ({"display_mode": "emoji"}, "display_mode", '"emoji" is not one of: marks, verbose, off.'),
        ({"decay": "sometimes"}, "decay", '"sometimes" is not one of: never, slow, standard'),
        ({"as_of": "last tuesday"}, "as_of", "must be an ISO 8601 timestamp"),
        ({"format": "pdf"}, "format", "'pdf' is not one of: markdown, json."),
        ({"colour": "blue"}, "colour", "is not a known field."),
    ],
)
def test_bad_parameters_are_a_400_naming_the_field(alice, params, field, message):
    response = alice.client.get(URL, params, HTTP_ACCEPT="text/markdown")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert message in response.json()[field][0]


def test_another_workspace_sees_nothing_of_it(alice, charlie):
    memory_remember(agent=alice.agent, text=RENEWAL)

    body = charlie.client.get(URL, {"format": "json"}).json()

    assert body["candidates"] == 0
    assert "Zephyr" not in body["markdown"]


def test_a_bad_token_is_refused(alice, client):
    response = client.get(URL, HTTP_AUTHORIZATION="Bearer mm_nope")
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("accept", "json"),
    [
        ("application/json", True),
        ("text/markdown", False),
        ("*/*", False),
        ("text/markdown, application/json;q=0.1", False),
        ("text/markdown;q=0.2, application/json", True),
        ("application/json;q=bad, text/markdown;q=0.5", False),
    ],
)
def test_the_accept_header_picks_the_representation_by_quality(alice, accept, json):
    response = alice.client.get(URL, HTTP_ACCEPT=accept)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json" if json else "text/markdown")
