"""Every success answer of the REST API is declared, with a type, in its OpenAPI schema (the
shapes of ``memories.api.answers``, ``consolidation.answers`` and ``readiness.answers``), and
the answers the property test (``memories/tests/test_api_properties.py``) seldom meets whole have
the shape declared for them: a search's explanation with every part the filters, the graph, the
learned ranking and the A score add; a memory's engine links and history; a divergence a curator
resolved; a source's topics and events; a saga's threads; the readiness report and its history
with recorded runs; a walk from an entity; a compiled file that cut memories; a bulk write and a
remember sent twice."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator

from consolidation.tests.test_threads import POTTERY, run, story
from meaning_memory.testing import make_member
from memories.models import Divergence, Entity
from memories.operations import memory_remember
from memories.services import link_add, memory_feedback
from memories.services.divergence import divergence_close
from memories.tests.conformance import ANSWER_CHECKS, InProcessApp, served_schema
from readiness.evidence import record
from readiness.registry import CAPABILITIES


def _resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _untyped(node: dict[str, Any]) -> bool:
    """An object that says nothing of what it holds: no properties, and any value allowed."""
    if not node:
        return True
    free = node.get("additionalProperties", True) in (True, {})
    return node.get("type") == "object" and not node.get("properties") and free


def success_answers(schema: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    """Each success answer of the schema (``GET /path 200 media/type``), resolved; None for
    one with no content."""
    found: dict[str, dict[str, Any] | None] = {}
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            for status, response in operation["responses"].items():
                if not status.startswith("2"):
                    continue
                label = f"{method.upper()} {path} {status}"
                content = response.get("content") or {}
                if not content:
                    found[label] = None
                for media_type, body in content.items():
                    found[f"{label} {media_type}"] = _resolved(schema, body.get("schema", {}))
    return found


def test_every_success_answer_is_typed():
    answers = success_answers(SchemaGenerator().get_schema(request=None, public=True))
    assert len(answers) > 30, sorted(answers)
    untyped = sorted(label for label, shape in answers.items() if shape is None or _untyped(shape))
    assert untyped == [], f"{len(untyped)} success answers without a declared shape: {untyped}"


def test_the_untyped_count_sees_a_free_object():
    assert _untyped({"type": "object", "additionalProperties": {}})
    assert _untyped({"type": "object"})
    assert _untyped({})
    assert not _untyped({"type": "object", "properties": {"a": {"type": "string"}}})
    assert not _untyped({"type": "object", "additionalProperties": {"type": "number"}})


def test_a_remember_answers_the_memory_whether_stored_now_or_before():
    remember = SchemaGenerator().get_schema(request=None, public=True)["paths"]["/api/v1/memories"]
    responses = remember["post"]["responses"]
    assert responses["201"]["content"] == responses["200"]["content"]
    assert responses["201"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MemoryDetail"
    }


@pytest.fixture
def everything_on(settings):
    settings.MM_TRAVERSAL = settings.MM_DIVERGENCE = settings.MM_SAGA = True
    settings.MM_OPEN_THREADS = True
    settings.MM_SEARCH_LEARNED = True
    settings.MM_ASYMMETRY_RANKING = True


class Asker:
    """Requests of one agent through the served schema, each answer checked against it: its
    status one the operation lists, its body of the shape declared for that status."""

    def __init__(self, token: str) -> None:
        self.schema = schemathesis.openapi.from_dict(served_schema())
        self.app = self.schema.app = InProcessApp()
        self.headers = {"Authorization": f"Bearer {token}"}

    def __call__(self, method: str, path: str, **parts: Any) -> tuple[int, Any]:
        case = self.schema[path][method].Case(**parts)
        response = case.call(headers=self.headers)
        self.app.raise_exception(case)
        assert 200 <= response.status_code < 300, (case.as_curl_command(), response.text)
        case.validate_response(response, checks=ANSWER_CHECKS, headers=self.headers)
        return response.status_code, response.json()


def test_rich_answers_have_their_declared_shape(alice, bob, everything_on):
    ask = Asker(alice.token)
    story(alice.agent)  # a pottery class and a leaking roof, over four sessions
    assert run(alice.agent.workspace).status == "done"  # their threads
    zephyr = [{"name": "Zephyr Logistics", "type": "customer"}]
    old = memory_remember(
        agent=alice.agent, text="Zephyr Logistics renews in March.", entities=zephyr
    ).memory
    new = memory_remember(
        agent=alice.agent,
        text="Zephyr Logistics renews in April now.",
        entities=zephyr,
        supersedes=old.mem_id,
    ).memory
    other = memory_remember(
        agent=alice.agent,
        text="Finance approved the Zephyr Logistics renewal.",
        entities=zephyr,
        scope="team:accounts",
    ).memory
    link_add(agent=alice.agent, mem_id=other.mem_id, to=new.mem_id, kind="supports")
    memory_feedback(agent=alice.agent, mem_id=new.mem_id, action="important", reason="it held")
    theirs = memory_remember(
        agent=bob.agent,
        text="Zephyr Logistics renews in May.",
        entities=zephyr,
        scope="team:accounts",
    ).memory
    curator = make_member("carol", alice.agent.workspace)
    divergence = divergence_close(
        divergence=Divergence.objects.create(
            workspace=other.workspace, first=other, second=theirs, score=0.8, detector="rules"
        ),
        user=curator,
        status="resolved",
        reason="April it is",
        right=other.mem_id,
    )
    capability = CAPABILITIES[0]
    record(capability, capability.checks[0], 0.9, dataset="fixture")
    entity = Entity.objects.get(name="Zephyr Logistics")

    _, detail = ask("GET", "/api/v1/memories/{mem_id}", path_parameters={"mem_id": old.mem_id})
    assert {link["type"] for link in detail["links"]} >= {"supersedes"}
    assert detail["provenance"] and detail["entities"]

    _, found = ask(
        "POST",
        "/api/v1/search",
        body={
            "query": "When does Zephyr Logistics renew?",
            "related_to": new.mem_id,
            "entity": "Zephyr Logistics",
            "min_r": 0,
            "expand": "graph",
        },
    )
    explanation = found["results"][0]["explanation"]
    assert {"relations", "graph", "learned", "asymmetry_factor"} <= set(explanation)

    _, divergences = ask("GET", "/api/v1/divergences", query={"status": "resolved"})
    assert divergences["results"][0]["closed_by"] == "carol"
    ask(
        "GET",
        "/api/v1/divergences/{divergence_id}",
        path_parameters={"divergence_id": divergence.divergence_id},
    )

    _, sources = ask("GET", "/api/v1/sources")
    assert sources["results"]
    _, source = ask(
        "GET", "/api/v1/sources/{kind}/{key}", path_parameters={"kind": "writer", "key": "alice"}
    )
    assert source["topics"] and source["events"]

    _, saga = ask("POST", "/api/v1/saga", body={"query": POTTERY[3]})
    assert saga["threads"] and saga["threads"][0]["cues"], saga["threads"]

    _, report = ask("GET", "/api/v1/readiness")
    assert any(check["value"] == 0.9 for c in report["capabilities"] for check in c["checks"])
    _, history = ask("GET", "/api/v1/readiness/history", query={"capability": capability.key})
    assert history["capabilities"][0]["runs"]

    _, walked = ask("POST", "/api/v1/traverse", body={"from": entity.entity_id, "depth": 2})
    assert walked["from"]["kind"] == "entity" and walked["nodes"]
    _, path = ask("POST", "/api/v1/explain-path", body={"from": entity.entity_id, "to": new.mem_id})
    assert path["found"]
    ask("GET", "/api/v1/entities")
    ask("GET", "/api/v1/entities/{entity_id}", path_parameters={"entity_id": entity.entity_id})

    _, compiled = ask("GET", "/api/v1/compiled", query={"format": "json", "budget": 200})
    assert compiled["cut"] and compiled["included"], compiled

    batch = {"memories": [{"text": "Step one: open the ticket."}, {"text": "Step two: close it."}]}
    assert ask("POST", "/api/v1/memories/bulk", body=batch)[0] == 201
    status, again = ask("POST", "/api/v1/memories/bulk", body=batch)
    assert (status, again["existing"]) == (200, 2)
    once = {"text": "Tern Air pays by wire.", "idempotency_key": "tern-1"}
    assert ask("POST", "/api/v1/memories", body=once)[0] == 201
    assert ask("POST", "/api/v1/memories", body=once)[0] == 200
