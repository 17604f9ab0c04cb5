"""Property-based: whatever an agent sends to any operation of the API's OpenAPI schema, the answer
is never a server error, a refusal is JSON, and the outsider's memory stays out of reach (issue 16);
its status is one the schema lists for the operation, and its body has the shape the schema
declares for that status (every answer's shape, ``memories.api.answers``: each field of the type
and nullability it says, every field it requires there, and no field it does not name).

schemathesis turns the schema the engine serves into Hypothesis strategies: positive cases (what
the schema allows) and negative ones (a field of the wrong type, a required one missing, an
unknown one added, a query value out of shape), ``EXAMPLES`` of each per operation, drawn from a
fixed seed: every run sends the same requests, so a failure comes back until it is fixed.

The requests go through Django's test client, in-process (no socket, no server), inside the
test's transaction; an exception a view raises comes out with its traceback, and schemathesis
adds a curl command of the request. The operations share the database: writes run first, so the
reads meet what they stored (a failing read may need those rows to fail again).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
import schemathesis
from django.test import Client
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers
from schemathesis import GenerationMode
from schemathesis.checks import negative_data_rejection, positive_data_acceptance

from consolidation.models import CompiledSnapshot, ConsolidationRun
from memories.models import Divergence, Entity, Memory
from memories.operations import memory_remember
from memories.services import link_add
from memories.tests.conformance import ANSWER_CHECKS, InProcessApp, served_schema

#: Cases per operation and mode (positive, negative): about 650 requests in all, 10 to 15 s.
EXAMPLES = 50
SEED = 16
BULK = "POST /api/v1/memories/bulk"
CONFIG = {
    # The agent's token goes in every request: the properties are about what an authenticated
    # agent can send (a request without credentials stops at authentication).
    "generation": {"with-security-parameters": False},
    # Otherwise schemathesis mines literals from the source of the app it is given (here,
    # memories.tests.conformance) and mixes them into the data: generation would change with
    # any edit of that file.
    "analysis": {"constants": {"enabled": False}},
}


def errors_are_json(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case
) -> None:
    """Under /api/, an answer of status 400 or above is a JSON document."""
    if response.status_code < 400 or not case.formatted_path.startswith("/api/"):
        return
    content_type = response.headers.get("content-type", [""])[0]
    assert content_type.startswith("application/json") and is_json_text(response.text), (
        f"a {response.status_code} is not JSON: {content_type!r}, {response.text[:200]!r}"
    )


#: Every check schemathesis has (the schema's statuses, media types, shapes and headers; what
#: it forbids refused and what it allows accepted; authentication not ignored; …) and ours.
schemathesis.checks.load_all_checks()
CHECKS = [*schemathesis.checks.CHECKS.get_all(), errors_are_json]


def remembered(found: set[int]) -> Callable[[schemathesis.Case], schemathesis.Case]:
    def remember(case: schemathesis.Case) -> schemathesis.Case:
        found.add(id(case))
        return case

    return remember


def previewed(mended: set[int]) -> Callable[[schemathesis.Case], schemathesis.Case]:
    """The case as a dry run (``dry_run`` true), noting those it changed in ``mended``."""

    def preview(case: schemathesis.Case) -> schemathesis.Case:
        if isinstance(case.body, dict) and case.body.get("dry_run") is not True:
            case.body["dry_run"] = True
            mended.add(id(case))
        return case

    return preview


def _items(case: schemathesis.Case) -> list[dict]:
    """The body and the memories or messages it holds (a bulk write's, a conversation's)."""
    items = [case.body] if isinstance(case.body, dict) else []
    for name in ("memories", "messages"):
        if isinstance(case.body, dict) and isinstance(case.body.get(name), list):
            items += [item for item in case.body[name] if isinstance(item, dict)]
    return items


def written_in_the_past(case: schemathesis.Case) -> schemathesis.Case:
    """The one rule the schema states in words only (OpenAPI has no "now"): when a memory was
    written, ``created_at``, is not in the future. A generated time after now is moved to the
    past (as many days back as its day number says, up to a century), as a client that read
    the field's description would; the rule itself is tested in test_remember_api.py."""
    now = timezone.now()
    for item in _items(case):
        for name in ("created_at", "at"):  # a memory's; a conversation's message's
            written = item.get(name)
            moment = parse_datetime(written) if isinstance(written, str) else None
            if moment is not None and moment.tzinfo is not None and moment > now:
                back = timedelta(days=1 + moment.toordinal() % 36_500)
                item[name] = (now - back).isoformat()
    return case


def no_nul_in_metadata(case: schemathesis.Case) -> schemathesis.Case:
    """The other rule the schema can state only in words for its keys and deepest values
    (OpenAPI 3.0 has no ``propertyNames``; a recursive shape makes no TypeScript type): no NUL
    character anywhere in a memory's metadata, which PostgreSQL cannot store. The schema's
    pattern holds it for the texts of the first two levels; a NUL elsewhere is taken out, as a
    client that read the field's description would; the refusal is tested in
    test_remember_api.py."""

    def clean(value: object) -> object:
        if isinstance(value, str):
            return value.replace("\x00", "")
        if isinstance(value, list):
            return [clean(item) for item in value]
        if isinstance(value, dict):
            return {clean(key): clean(item) for key, item in value.items()}
        return value

    for item in _items(case):
        if isinstance(item.get("metadata"), dict):
            item["metadata"] = clean(item["metadata"])
    return case


def is_json_text(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def is_json(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def fuzz(strategy: st.SearchStrategy, send: Callable[[schemathesis.Case], None]) -> None:
    """``send`` each of ``EXAMPLES`` cases drawn from ``strategy``: the same ones every run."""

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES,
        database=None,
        deadline=None,
        # A check on timing would let the machine's load decide the outcome.
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(case=strategy)
    def property_holds(case: schemathesis.Case) -> None:
        send(case)

    property_holds()


@pytest.fixture
def no_local_constants(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Off: Hypothesis's draws, now and then, of literals from the project's modules loaded so
    far. Those depend on what else ran before (the file alone, the whole suite), and the seed
    alone should decide the data. A private hook of the pinned Hypothesis: if it moves, the
    test stops here, loudly, instead of drawing other data."""
    monkeypatch.setattr(providers, "_get_local_constants", providers.Constants)
    providers.CONSTANTS_CACHE.cache.clear()
    yield
    providers.CONSTANTS_CACHE.cache.clear()


@pytest.mark.usefixtures("no_local_constants")
def test_no_request_gets_a_server_error_or_reaches_the_outsider(alice, charlie, subtests, settings):
    settings.MM_TRAVERSAL = True  # opt-in: its endpoints are fuzzed switched on
    settings.MM_DIVERGENCE = True  # off by default: its endpoints are fuzzed switched on
    settings.MM_SAGA = True  # a preview, off by default: fuzzed switched on
    own = memory_remember(agent=alice.agent, text="Zephyr renews in March.").memory
    forgotten_later = memory_remember(agent=alice.agent, text="Zephyr moved to Lyon.").memory
    other = memory_remember(
        agent=alice.agent,
        text="Finance approved the Zephyr renewal.",
        entities=[{"name": "Zephyr Logistics", "type": "customer"}],
    ).memory
    link = link_add(agent=alice.agent, mem_id=other.mem_id, to=own.mem_id, kind="supports").link
    entity = Entity.objects.get(name="Zephyr Logistics")
    outsiders = memory_remember(
        agent=charlie.agent,
        text="Globex merger code: BLUEBIRD.",
        entities=[{"name": "BLUEBIRD Holdings", "type": "customer"}],
    ).memory
    their_entity = Entity.objects.get(name="BLUEBIRD Holdings")
    # What the erase operation may erase for good (the memories above stay for the others).
    spares = [
        memory_remember(agent=alice.agent, text=f"A note to erase, number {i}.").memory
        for i in range(3)
    ]
    # A consolidation run of the agent's workspace and one of the outsider's.
    runs = [
        ConsolidationRun.objects.create(
            workspace=agent.workspace, trigger="command", phases=["dedupe"], status="done"
        )
        for agent in (alice.agent, charlie.agent)
    ]
    # A kept compiled file of each (the outsider's with BLUEBIRD in it).
    for agent, text in ((alice.agent, "Zephyr renews in March."), (charlie.agent, "BLUEBIRD")):
        CompiledSnapshot.objects.create(
            workspace=agent.workspace,
            agent=agent,
            markdown=text,
            tokens=3,
            as_of=own.created_at,
            memory_ids=[],  # it quotes no memory: an erasure in the fuzz leaves it
        )
    # A divergence of the agent's and one of the outsider's (the second with BLUEBIRD in it).
    divergences = [
        Divergence.objects.create(
            workspace=first.workspace, first=first, second=second, score=0.9, detector="rules"
        )
        for first, second in (
            (own, other),
            (
                outsiders,
                memory_remember(agent=charlie.agent, text="Globex merger code: REDBIRD.").memory,
            ),
        )
    ]
    raw = served_schema()
    assert set(ANSWER_CHECKS) <= set(CHECKS)
    schema = schemathesis.openapi.from_dict(raw, config=schemathesis.Config.from_dict(CONFIG))
    app = schema.app = InProcessApp()
    credentials = {"Authorization": f"Bearer {alice.token}"}
    remember = schema["/api/v1/memories"]["POST"]
    statuses: dict[str, Counter[int]] = defaultdict(Counter)

    def send(case: schemathesis.Case) -> None:
        response = case.call(headers=credentials)
        app.raise_exception(case)
        statuses[case.operation.label][response.status_code] += 1
        # A bulk request built here from broken items is negative data its schema (a free
        # object) cannot tell apart: what it forbids is refused, what it allows not required.
        # So is a page cursor made up here: the schema can say only that it is text, and the
        # engine takes only one a page of its gave (anything else is a 400 naming cursor).
        # And so is the list's metadata filter, JSON in a query string: the schema says text.
        query = case.query or {}
        made_up = id(case) in broken_bulks or bool(query.get("cursor")) or "metadata" in query
        excluded = [positive_data_acceptance] if made_up else []
        # A metadata filter's grammar nests (or, and, not in any order, memories.metadata_filter);
        # its schema says a bounded part of it (a recursive shape would not make a TypeScript
        # type), so a filter beyond that part may be accepted: what the schema allows still is.
        # And so is a case made a preview (``previewed``): the change may have mended it.
        filtered = isinstance(case.body, dict) and isinstance(case.body.get("metadata"), dict)
        if filtered or id(case) in mended:
            excluded.append(negative_data_rejection)
        case.validate_response(
            response, checks=CHECKS, excluded_checks=excluded, headers=credentials
        )
        # Its id may come back (a 404 names the id asked for); what it says may not.
        assert "BLUEBIRD" not in response.text, "the outsider's memory was shown"

    def remember_bodies(mode: GenerationMode) -> st.SearchStrategy:
        valid = remember.as_strategy(GenerationMode.POSITIVE).map(lambda case: case.body)
        if mode is GenerationMode.POSITIVE:
            return valid
        # Some negative bodies are not JSON at all (raw bytes): they cannot be an item of one.
        broken = remember.as_strategy(mode).map(lambda case: case.body).filter(is_json)
        return st.one_of(valid, broken)

    def cases(operation: schemathesis.APIOperation, mode: GenerationMode) -> st.SearchStrategy:
        strategies = [operation.as_strategy(mode)]
        if operation.path.endswith("/memories/erase"):
            # An erasure by entity or filter is previewed only: a filter the fuzz makes may
            # choose every memory, and the operations after it need theirs (its erasures are
            # tested in test_erase_chosen.py). A preview forced on a broken case may mend it.
            strategies = [strategy.map(previewed(mended)) for strategy in strategies]
        elif operation.path.endswith("/erase"):
            # Besides made-up ids: memories it may erase, and the outsider's.
            for memory in (*spares, outsiders):
                fixed = {"mem_id": memory.mem_id}
                strategies.append(operation.as_strategy(mode, path_parameters=fixed))
        elif "{link_id}" in operation.path:
            # Besides made-up ids, the agent's own link (from either end) and the outsider's
            # memory.
            for memory in (own, other, outsiders):
                fixed = {"mem_id": memory.mem_id, "link_id": link.link_id}
                strategies.append(operation.as_strategy(mode, path_parameters=fixed))
        elif "{mem_id}" in operation.path:
            # Besides made-up ids, the agent's own memory and the outsider's; forgetting, a
            # memory of its own too (feedback's "forget" may have forgotten the first).
            forgettable = (forgotten_later,) if operation.path.endswith("/forget") else ()
            for memory in (own, outsiders, *forgettable):
                fixed = {"mem_id": memory.mem_id}
                strategies.append(operation.as_strategy(mode, path_parameters=fixed))
            if operation.path.endswith("/links"):
                # A link to a memory it sees, to the outsider's, and to an entity.
                for body in (
                    {"to": own.mem_id, "type": "relates_to"},
                    {"to": outsiders.mem_id, "type": "supports"},
                    {"entity": entity.entity_id, "type": "mentions"},
                    {"entity": their_entity.entity_id, "type": "mentions"},
                ):
                    strategies.append(
                        operation.as_strategy(
                            mode, path_parameters={"mem_id": other.mem_id}, body=body
                        )
                    )
        if operation.path.endswith(("/traverse", "/explain-path")):
            # Besides made-up ids: from (and to) what the agent sees, and the outsider's.
            for body in (
                {"from": own.mem_id, "to": other.mem_id},
                {"from": entity.entity_id, "to": own.mem_id},
                {"from": outsiders.mem_id, "to": own.mem_id},
                {"from": own.mem_id, "to": their_entity.entity_id},
            ):
                if operation.path.endswith("/traverse"):
                    body.pop("to")
                strategies.append(operation.as_strategy(mode, body=body))
        if "{run_id}" in operation.path:
            for known in runs:
                fixed = {"run_id": known.run_id}
                strategies.append(operation.as_strategy(mode, path_parameters=fixed))
        if "{divergence_id}" in operation.path:
            for known in divergences:
                fixed = {"divergence_id": known.divergence_id}
                strategies.append(operation.as_strategy(mode, path_parameters=fixed))
        if "{kind}" in operation.path:
            # Besides made-up sources, the agent's own writer and the outsider's.
            for writer in (alice.agent.name, charlie.agent.name):
                fixed = {"kind": "writer", "key": writer}
                strategies.append(operation.as_strategy(mode, path_parameters=fixed))
        if "{entity_id}" in operation.path:
            for known in (entity, their_entity):
                fixed = {"entity_id": known.entity_id}
                strategies.append(operation.as_strategy(mode, path_parameters=fixed))
        if operation.label == BULK:
            # Its schema is a free-form object: the items come from the remember operation.
            batches = st.lists(remember_bodies(mode), min_size=1, max_size=3)
            bulks = batches.flatmap(lambda items: operation.as_strategy(body={"memories": items}))
            if mode is GenerationMode.NEGATIVE:
                bulks = bulks.map(remembered(broken_bulks))
            strategies.append(bulks)
        return st.one_of(strategies).map(written_in_the_past).map(no_nul_in_metadata)

    broken_bulks: set[int] = set()
    mended: set[int] = set()
    operations = [result.ok() for result in schema.get_all_operations()]
    # Reads last: they meet whatever the writes before them stored, extreme values included.
    for operation in sorted(operations, key=lambda operation: operation.method == "get"):
        # A path parameter is a string whatever it holds: only a body or a query can be broken.
        breakable = operation.body or operation.query
        modes = [GenerationMode.POSITIVE, *([GenerationMode.NEGATIVE] if breakable else [])]
        held = []
        for mode in modes:
            with subtests.test(msg=f"{operation.label} ({mode.value})"):
                fuzz(cases(operation, mode), send)
                held.append(mode)
        if held == modes:
            with subtests.test(msg=f"{operation.label} (reached)"):
                # Without these, a broken token or a schema every case fails would pass unseen.
                answered = statuses[operation.label]
                assert 401 not in answered, "a request with the agent's token was refused"
                assert any(200 <= status < 300 for status in answered), dict(answered)

    assert (
        "Bluebird"
        not in Client()
        .get("/api/v1/entities", headers={"Authorization": f"Bearer {alice.token}"})
        .content.decode()
    )
    untouched = Memory.objects.get(pk=outsiders.pk)
    assert (untouched.status, untouched.significance, untouched.pinned) == (
        outsiders.status,
        outsiders.significance,
        outsiders.pinned,
    )
