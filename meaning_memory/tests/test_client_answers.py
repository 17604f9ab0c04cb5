"""The Python client's answers follow the OpenAPI schema: ``meaning_memory/client/answers/``
is exactly what ``python -m meaning_memory.client.generate`` writes from the committed schema
(``clients/typescript/openapi.json``, which ``test_typescript_client`` keeps equal to the
engine's), so the client's types cannot drift from the API's answers; every success answer has
its model there and no request body does; nothing an answer holds is dropped."""

from __future__ import annotations

import difflib
import inspect
import json

from pydantic import BaseModel, TypeAdapter

from meaning_memory.client import BulkResult, SearchResults, answers
from meaning_memory.client.generate import (
    ANSWERS,
    PART_LINES,
    SCHEMA,
    committed,
    open_values,
    render,
)

REF = "#/components/schemas/"


def shapes(schema: dict, part: str) -> set[str]:
    """The components that the operations' success answers (``part="responses"``) or request
    bodies (``"requestBody"``) name."""
    found = set()
    for operations in schema["paths"].values():
        for operation in operations.values():
            if part == "responses":
                bodies = [b for status, b in operation["responses"].items() if status[0] == "2"]
            else:
                bodies = [operation[part]] if part in operation else []
            for body in bodies:
                ref = body.get("content", {}).get("application/json", {}).get("schema", {})
                if "$ref" in ref:
                    found.add(ref["$ref"].removeprefix(REF))
    return found


def models() -> dict[str, type[BaseModel]]:
    return {
        name: value
        for name, value in vars(answers).items()
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel
    }


def test_the_committed_answers_are_what_the_committed_schema_generates():
    generated, kept = render(), committed()
    assert sorted(kept) == sorted(generated)
    for name, text in generated.items():
        difference = "".join(
            list(difflib.unified_diff(kept[name].splitlines(True), text.splitlines(True)))[:80]
        )
        assert kept[name] == text, (
            f"{ANSWERS.name}/{name} is not what the schema gives: run python -m "
            f"meaning_memory.client.generate\n{difference}"
        )
    # Each part is a short module, as every module of the project.
    assert max(text.count("\n") for text in generated.values()) <= PART_LINES


def test_a_changed_schema_changes_the_answers(tmp_path):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    schema["components"]["schemas"]["Erasure"]["properties"]["kept"] = {"type": "integer"}
    schema["components"]["schemas"]["Erasure"]["required"].append("kept")
    changed = tmp_path / "openapi.json"
    changed.write_text(json.dumps(schema), encoding="utf-8")
    generated = render(changed)
    assert generated != committed()
    code = "".join(generated.values())
    assert "    kept: int\n" in code.split("class Erasure(")[1].split("\nclass ")[0]


def test_every_success_answer_has_its_model_and_no_request_body_does():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    answered, requested = shapes(schema, "responses"), shapes(schema, "requestBody")
    assert {"MemoryDetail", "Search", "Bulk", "MemoryPage", "Compiled", "History"} <= answered
    assert answered <= set(models())
    assert "RememberInput" in requested and not requested & set(models())


def test_an_answer_keeps_the_fields_its_schema_does_not_declare():
    """A newer engine's field is kept (``model_extra``), not dropped nor refused; a declared
    field's type is checked."""
    answer = {
        "erased": ["m1"],
        "count": 1,
        "by": "alice",
        "episodes_rewritten": 0,
        "entities_removed": 2,
        "dry_run": False,
        "added_later": {"x": 1},
    }
    erasure = answers.Erasure.model_validate_json(json.dumps(answer))
    assert erasure.entities_removed == 2 and erasure.model_extra == {"added_later": {"x": 1}}
    assert erasure.model_dump(mode="json", by_alias=True, exclude_unset=True) == answer
    assert all(model.model_config.get("extra") == "allow" for model in models().values())


def test_a_value_a_newer_engine_sends_is_read_not_refused():
    """A set of values (a memory's category, an entity's origin) is read as its type: a value
    this client was not generated with (a newer engine's category) is kept, and the values the
    schema knows are still said, in the field's description."""
    fields = [
        (answers.Memory, "category", "commitment"),
        (answers.Entity, "origin", "gazetteer"),
        (answers.Memory, "status", "superseded"),
    ]
    for model, name, known in fields:
        field = model.model_fields[name]
        assert TypeAdapter(field.annotation).validate_python("added-later") == "added-later"
        assert known in inspect.getsource(model), (model.__name__, name)  # its docstring
    opened = open_values({"type": "string", "enum": ["a", "b", None], "nullable": True})
    assert opened == {
        "type": "string",
        "nullable": True,
        "description": "One of: a, b (or a newer value).",
    }


def test_every_model_is_complete_once_imported():
    """Each model is defined after those it names, so that a subclass elsewhere (the client's
    ``SearchResults``, ``BulkResult``) needs no rebuild."""
    assert [name for name, model in models().items() if not model.__pydantic_complete__] == []
    assert SearchResults.__pydantic_complete__ and BulkResult.__pydantic_complete__
