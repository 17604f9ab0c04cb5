"""Filters on what a writer stored (issue 58): metadata, session and thread, the same JSON form
on search and the memory list over REST, MCP and the command line, checked and isolated."""

from __future__ import annotations

import asyncio
import json
import random
from io import StringIO
from urllib.parse import quote

import httpx2
import pytest
from django.core.management import call_command
from django.db import connection
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from meaning_memory.testing import make_actor
from memories import metadata_filter
from memories.operations import memory_remember

SEARCH = "/api/v1/search"
LIST = "/api/v1/memories"

ACCOUNTS = [
    ("Orion Health renews its enterprise contract in March.", {
        "customer": "orion", "seats": 120, "tier": "gold", "renewal": "2027-03-01",
        "churn_risk": "low"}),
    ("Orion Health asked for the data residency add-on.", {
        "customer": "orion", "seats": 120, "tier": "gold"}),
    ("Kestrel Analytics is on the Starter plan and pays by card.", {
        "customer": "kestrel", "seats": 12, "tier": "bronze", "renewal": "2026-11-15"}),
    ("Marlow & Finch pilots contract search with 20 lawyers.", {
        "customer": "marlow", "seats": 50, "tier": "silver", "renewal": "2027-01-10",
        "churn_risk": "high"}),
    ("Zephyr Logistics renewal moved from March to June.", {
        "customer": "zephyr", "seats": "80", "tier": "gold", "note": None}),
    ("The contract renewal checklist lives in the shared drive.", {}),
]  # fmt: skip


@pytest.fixture
def accounts(alice):
    written = {}
    for text, metadata in ACCOUNTS:
        response = alice.client.post(
            LIST, {"text": text, "metadata": metadata, "session": "call-1"}, format="json"
        )
        assert response.status_code == 201, response.json()
        written[text] = response.json()["mem_id"]
    return written


def customers(results: list[dict]) -> set[str]:
    return {r["metadata"].get("customer", "-") for r in results}


def search(actor, metadata, query="contract renewal", **more):
    response = actor.client.post(
        SEARCH, {"query": query, "limit": 50, "metadata": metadata, **more}, format="json"
    )
    assert response.status_code == 200, response.json()
    return response.json()["results"]


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"customer": "orion"}, {"orion"}),
        ({"tier": {"in": ["gold", "silver"]}}, {"orion", "marlow", "zephyr"}),
        ({"seats": {"gte": 50}}, {"orion", "marlow"}),  # "80" is text, not a number
        ({"seats": {"gt": 12, "lt": 100}}, {"marlow"}),
        ({"renewal": {"gte": "2027-01-01"}}, {"orion", "marlow"}),
        ({"renewal": {"lt": "2027-01-01"}}, {"kestrel"}),
        ({"churn_risk": {"exists": True}}, {"orion", "marlow"}),
        ({"churn_risk": {"exists": False}, "tier": "gold"}, {"orion", "zephyr"}),
        ({"tier": {"ne": "gold"}}, {"kestrel", "marlow", "-"}),  # no key: not equal
        ({"or": [{"customer": "kestrel"}, {"seats": {"gte": 100}}]}, {"kestrel", "orion"}),
        ({"not": {"tier": "gold"}, "customer": {"exists": True}}, {"kestrel", "marlow"}),
        ({"note": None}, {"zephyr"}),
        ({"customer": "nobody"}, set()),
    ],
)
def test_search_and_list_keep_only_what_the_filter_matches(alice, accounts, metadata, expected):
    assert customers(search(alice, metadata)) == expected
    response = alice.client.get(f"{LIST}?metadata={quote(json.dumps(metadata))}&limit=50")
    assert response.status_code == 200, response.json()
    listed = {m["metadata"].get("customer", "-") for m in response.json()["results"]}
    assert listed == expected


def test_session_and_thread_filter_search_and_list(alice, accounts):
    for text, session, thread in (
        ("Orion's call notes: renewal risk discussed.", "call-2", "orion-renewal"),
        ("Orion renewal: legal review booked.", "call-3", "orion-renewal"),
    ):
        alice.client.post(LIST, {"text": text, "session": session, "thread": thread}, format="json")
    by_session = search(alice, {"customer": {"exists": False}}, session="call-2")
    assert [r["text"] for r in by_session] == ["Orion's call notes: renewal risk discussed."]
    assert len(search(alice, {"tier": "gold"}, session="call-1")) == 3
    assert len(search(alice, {"tier": "gold"}, session="call-2")) == 0
    listed = alice.client.get(f"{LIST}?thread=orion-renewal").json()["results"]
    assert {m["session"] for m in listed} == {"call-2", "call-3"}


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ("orion", "must be a JSON object"),
        ({}, "must name at least one key or operator"),
        ({"seats": {"between": [1, 2]}}, "seats.between: is not an operator"),
        ({"seats": {"gte": True}}, "seats.gte: must be a number or text"),
        ({"seats": {"gte": [1]}}, "seats.gte: must be a number or text"),
        ({"tier": {"in": []}}, "tier.in: must be a non-empty list"),
        ({"tier": {"in": list(range(101))}}, "tier.in: must hold at most 100 values"),
        ({"tier": {"in": [{"a": 1}]}}, "tier.in: must hold strings, numbers"),
        ({"churn_risk": {"exists": "yes"}}, "churn_risk.exists: must be true or false"),
        ({"or": {"customer": "orion"}}, "or: must be a non-empty list of filters"),
        ({"customer": ["orion"]}, "customer: must be a string, a number"),
        ({"customer": "or\x00ion"}, "customer: must not hold a NUL character"),
        ({"k\x00": 1}, "a metadata key must not hold a NUL character"),
        ({"k" * 201: 1}, "a metadata key must be at most 200 characters"),
        ({"not": {"not": {"not": {"not": {"not": {"a": 1}}}}}}, "nests operators deeper"),
    ],
)
def test_a_broken_filter_is_a_400_naming_the_field_and_the_rule(alice, metadata, message):
    response = alice.client.post(SEARCH, {"query": "renewal", "metadata": metadata}, format="json")
    assert response.status_code == 400
    errors = response.json()["metadata"]
    assert any(message in error for error in errors), errors


def test_the_list_refuses_a_query_parameter_that_is_not_json(alice):
    response = alice.client.get(f"{LIST}?metadata={quote('{customer: orion}')}")
    assert response.status_code == 400
    assert "must be a JSON object" in response.json()["metadata"][0]


def test_awkward_keys_and_values_are_matched_as_written(alice):
    odd = {'a "quoted" key.with dots': "ünïcødé ✓", "$.x": 1, "emoji 🦜": ["list"]}
    alice.client.post(LIST, {"text": "An odd note about renewals.", "metadata": odd}, format="json")
    for metadata in (
        {'a "quoted" key.with dots': "ünïcødé ✓"},
        {"$.x": {"lte": 1}},
        {"emoji 🦜": {"exists": True}},
    ):
        assert len(search(alice, metadata, query="renewals note")) == 1, metadata
    assert search(alice, {"$.x": {"gt": 1}}, query="renewals note") == []


def test_another_agents_private_memory_matches_nothing_and_says_nothing(alice, bob, charlie):
    bob.client.post(
        LIST, {"text": "Secret renewal terms.", "metadata": {"customer": "orion"}}, format="json"
    )
    charlie.client.post(
        LIST, {"text": "Globex renewal terms.", "metadata": {"customer": "orion"}}, format="json"
    )
    shared = bob.client.post(
        LIST,
        {
            "text": "Shared renewal terms.",
            "metadata": {"customer": "orion"},
            "scope": "team:accounts",
        },
        format="json",
    ).json()["mem_id"]
    found = search(alice, {"customer": "orion"}, query="renewal terms")
    assert [r["mem_id"] for r in found] == [shared]
    listed = alice.client.get(f"{LIST}?metadata={quote(json.dumps({'customer': 'orion'}))}")
    assert [m["mem_id"] for m in listed.json()["results"]] == [shared]
    # A key only another agent wrote privately answers as a key never written.
    for key in ("customer", "never-written"):
        response = alice.client.post(
            SEARCH, {"query": "terms", "metadata": {key: {"exists": True}}}, format="json"
        )
        assert response.status_code == 200
    assert search(charlie, {"customer": "orion"}, query="renewal terms")[0]["text"] == (
        "Globex renewal terms."
    )


def test_the_command_line_takes_the_same_json(alice, accounts):
    out = StringIO()
    call_command(
        "search", "contract renewal", "--metadata", '{"tier": {"in": ["silver"]}}', "--json",
        "--workspace", "acme", "--agent", "alice", stdout=out,
    )  # fmt: skip
    assert customers(json.loads(out.getvalue())["results"]) == {"marlow"}
    out = StringIO()
    call_command(
        "list", "--metadata", '{"seats": {"lt": 20}}', "--json",
        "--workspace", "acme", "--agent", "alice", stdout=out,
    )  # fmt: skip
    assert [m["metadata"]["customer"] for m in json.loads(out.getvalue())["results"]] == ["kestrel"]


def test_the_mcp_tools_take_the_same_json(served):
    alice = make_actor("acme", "alice", scopes=["team:accounts"])
    for text, metadata in ACCOUNTS:
        alice.client.post(LIST, {"text": text, "metadata": metadata}, format="json")

    async def main():
        headers = {"Authorization": f"Bearer {alice.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{served}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            found = await session.call_tool(
                "mm_search", {"query": "contract renewal", "metadata": {"customer": "kestrel"}}
            )
            listed = await session.call_tool("mm_list", {"metadata": {"tier": "silver"}})
            broken = await session.call_tool(
                "mm_search", {"query": "renewal", "metadata": {"seats": {"gte": "x", "nope": 1}}}
            )
            return found, listed, broken

    found, listed, broken = asyncio.run(main())
    assert customers(found.structured_content["results"]) == {"kestrel"}
    assert [m["metadata"]["customer"] for m in listed.structured_content["results"]] == ["marlow"]
    assert broken.is_error and "seats.nope: is not an operator" in broken.content[0].text


def test_an_equality_filter_is_served_by_the_metadata_index(alice, accounts):
    """Containment on the GIN index (``jsonb_path_ops``), not a scan of every row; with a
    query word, the same index answers both (a word's matches narrowed to the customer's)."""
    found = metadata_filter.parse({"customer": "orion", "tier": {"in": ["gold"]}})
    condition, params = metadata_filter.positional(found, "metadata")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN SELECT id FROM memories_memory WHERE {condition}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "memory_words_metadata" in plan, plan
        cursor.execute(
            "EXPLAIN SELECT id FROM memories_memory WHERE search_vector @@ 'renewal'::tsquery "
            "AND metadata @> %s::jsonb",
            ['{"customer": "orion"}'],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    index_condition = next(line for line in plan.splitlines() if "Index Cond" in line)
    assert "search_vector @@" in index_condition and "metadata @>" in index_condition, plan


def test_the_filter_round_trips_through_its_json_form():
    given = {"customer": "orion", "or": [{"seats": {"gte": 50}}, {"not": {"tier": "gold"}}]}
    assert metadata_filter.as_json(metadata_filter.parse(given)) == {
        "and": [{"customer": "orion"}, {"or": [{"seats": {"gte": 50}}, {"not": {"tier": "gold"}}]}]
    }


def test_the_dashboard_shows_metadata_and_filters_the_list_by_it(client, alice, charlie, accounts):
    from memories.tests.test_dashboard import member

    member(client, "vic", alice.agent.workspace, "viewer")
    page = client.get(f"/w/acme/m/{accounts[ACCOUNTS[0][0]]}").content.decode()
    assert "<h2>Metadata</h2>" in page and "<th>seats</th>" in page and "<code>120</code>" in page
    assert "?metadata=%7B%22customer%22%3A%20%22orion%22%7D" in page  # memories with this
    listed = client.get("/w/acme/memories", {"metadata": '{"customer": "orion"}'})
    text = listed.content.decode()
    assert "Orion Health renews" in text and "Kestrel" not in text
    broken = client.get("/w/acme/memories", {"metadata": '{"seats": {"gte": true}}'})
    assert broken.status_code == 200 and "seats.gte: must be a number or text" in (
        broken.content.decode()
    )
    # Another workspace's memories are not there, whatever the filter.
    charlie.client.post(
        LIST, {"text": "Globex Orion", "metadata": {"customer": "orion"}}, format="json"
    )
    assert (
        "Globex Orion"
        not in client.get(
            "/w/acme/memories", {"metadata": '{"customer": "orion"}'}
        ).content.decode()
    )


@pytest.mark.parametrize(
    "line, candidates, reads",
    [
        (1_000, 50, ["exact"]),  # few kept: each compared
        (0, 1, ["index"]),  # many kept: the vector index's nearest that pass
        (0, 50, ["index", "exact", "index"]),  # fewer than guessed, more than the line
    ],
)
def test_many_or_few_kept_the_vector_candidates_are_those_the_filter_keeps(
    alice, bob, accounts, monkeypatch, settings, line, candidates, reads
):
    """Few memories kept (under the line): the nearest of them, each compared; many: the
    vector index's nearest that pass the filter; a scan that finds fewer than it wants turns to
    the exact read, and an exact read past the line back to the index (``memories.search.
    metadata``). Either way the hits are the exact search's, and another agent's private
    memories are not among them."""
    from memories.operations import memory_search
    from memories.search import metadata as chosen
    from memories.selectors.reader import Reader

    settings.MM_SEARCH_CANDIDATES = candidates
    monkeypatch.setattr(chosen, "exact_line", lambda count, rows: line)
    # The scan's budget grows with the table; a test database's vector index also holds the
    # dead entries of earlier tests' rolled-back rows, which the scan reads and skips: sized as
    # for a million memories, the budget is never what decides the path.
    estimates = chosen._estimates

    def as_for_a_million(*args):
        kept, table = estimates(*args)
        return kept, max(table, 1_000_000)

    monkeypatch.setattr(chosen, "_estimates", as_for_a_million)
    taken: list[str] = []

    def recorded(read, label):
        def call(*args, **kwargs):
            taken.append(label)
            return read(*args, **kwargs)

        return call

    monkeypatch.setattr(chosen, "_exact", recorded(chosen._exact, "exact"))
    monkeypatch.setattr(chosen, "_nearest", recorded(chosen._nearest, "index"))
    private = memory_remember(
        agent=bob.agent, text="Orion Health's private renewal notes.", metadata={"tier": "gold"}
    ).memory
    shared = alice.client.post(
        LIST,
        {"text": "Gold renewal terms for the team.", "metadata": {"tier": "gold"},
         "scope": "team:accounts"},
        format="json",
    ).json()["mem_id"]  # fmt: skip
    asked = {"query": "contract renewal", "metadata": {"tier": "gold"}, "limit": candidates}
    for reader in (Reader.of_agent(alice.agent), Reader.of_agent(bob.agent)):
        taken.clear()
        found = [h.memory.mem_id for h in memory_search(reader, arguments=asked)]
        assert taken == reads
        truth = [h.memory.mem_id for h in memory_search(reader, arguments=asked, exact=True)]
        assert found == truth
        assert reader.agent == bob.agent or private.mem_id not in found
        if candidates > 1:  # every one of the few gold memories among the hits
            assert shared in found
            assert (private.mem_id in found) == (reader.agent == bob.agent)
    gold = {accounts[t] for t, m in ACCOUNTS if m.get("tier") == "gold"}
    assert gold <= set(found_alice := [h["mem_id"] for h in search(alice, {"tier": "gold"})])
    assert private.mem_id not in found_alice


def test_a_memorys_vector_is_kept_in_its_row(alice):
    """The filtered search's exact read compares each kept memory's vector: kept in the row
    (``toast_tuple_target``, migration 0041), not moved to the TOAST table once the row passes
    2 KB, as a row with a 1,536-byte vector and a few hundred characters of text does."""
    memory = memory_remember(agent=alice.agent, text="Renewal terms. " * 40).memory
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_size(m.*), pg_column_toast_chunk_id(m.embedding) "
            "FROM memories_memory m WHERE id = %s",
            [memory.pk],
        )
        size, chunk = cursor.fetchone()
    assert size > 2_100 and chunk is None


def test_the_metadata_statistics_come_from_a_thousand_documents(db):
    """The filtered search chooses how it reads by the planner's estimate of what a filter
    keeps, which the sample behind the metadata's statistics decides (migration 0042)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstattarget FROM pg_attribute "
            "WHERE attrelid = 'memories_memory'::regclass AND attname = 'metadata'"
        )
        assert cursor.fetchone() == (1000,)


@pytest.mark.django_db(transaction=True)
def test_purge_full_keeps_a_vector_written_before_in_its_row(alice):
    """A row written before migration 0041 kept its vector in the TOAST table; ``purge
    --full`` (docs/operations.md, "Upgrading") rewrites it with the vector in the row."""
    from memories.services.purge import purge_storage

    def chunk(memory) -> int | None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_column_toast_chunk_id(embedding) FROM memories_memory WHERE id = %s",
                [memory.pk],
            )
            return cursor.fetchone()[0]

    with connection.cursor() as cursor:  # as before the migration
        cursor.execute("ALTER TABLE memories_memory RESET (toast_tuple_target)")
    try:
        memory = memory_remember(agent=alice.agent, text="Renewal terms. " * 40).memory
        assert chunk(memory) is not None
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE memories_memory SET (toast_tuple_target = 8160)")
    purge_storage(full=True, wait=0)
    assert chunk(memory) is None


@pytest.mark.parametrize("bytes_per_tuple, found", [(None, True), (0, False)])
def test_a_long_scan_is_given_the_memory_its_tuples_take(
    alice, monkeypatch, bytes_per_tuple, found
):
    """pgvector stops an iterative scan at ``work_mem`` as well as at its budget in tuples:
    the scan is given the memory its budget takes, so the memory one memory farthest from the
    query among hundreds is found from the index with a small ``work_mem``; held to
    ``work_mem`` (no bytes a tuple), the scan stops first and misses it."""
    from memories.search import metadata as chosen

    if bytes_per_tuple is not None:
        monkeypatch.setattr(chosen, "SCAN_BYTES_PER_TUPLE", bytes_per_tuple)
    needle = memory_remember(agent=alice.agent, text="Rare renewal.", metadata={"tier": "rare"})
    template = memory_remember(agent=alice.agent, text="Other note.", metadata={"tier": "other"})
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = "
            "'memories_memory' AND is_generated = 'NEVER' AND is_identity = 'NO' "
            "AND column_name NOT IN ('id', 'mem_id', 'embedding')"
        )
        columns = ", ".join(f'"{row[0]}"' for row in cursor.fetchall())
        cursor.execute(  # a thousand more memories, each a random vector
            f"INSERT INTO memories_memory (mem_id, embedding, {columns}) "
            f"SELECT 'bulk-' || g, ARRAY(SELECT random() - 0.5 + 0 * g FROM "
            f"generate_series(1, vector_dims(embedding)))::vector, {columns} "
            "FROM memories_memory, generate_series(1, 1000) AS g WHERE id = %s",
            [template.memory.pk],
        )
        rng = random.Random(58)
        query = [rng.random() - 0.5 for _ in range(len(needle.memory.embedding))]
        cursor.execute(  # the needle the farthest of all from the query
            "UPDATE memories_memory SET embedding = %s::vector WHERE id = %s",
            [json.dumps([-x for x in query]), needle.memory.pk],
        )
        cursor.execute("ANALYZE memories_memory")
        cursor.execute("SET LOCAL work_mem = '64kB'")
        base = "workspace_id = %(workspace)s AND metadata @> %(rare)s::jsonb"
        params = {"workspace": alice.agent.workspace_id, "rare": '{"tier": "rare"}'}
        monkeypatch.setattr(chosen, "exact_line", lambda count, rows: 0)
        monkeypatch.setattr(chosen, "_exact", lambda *args: (2, []))  # only the index
        got = chosen.metadata_candidates(
            base, params, vector=json.dumps(query), count=1, model=needle.memory.embedding_model
        )
    assert (got == [needle.memory.pk]) is found
