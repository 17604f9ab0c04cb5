"""The client's answers (the ``answers`` package) generated from the engine's OpenAPI schema,
the one committed beside the TypeScript client (``clients/typescript/openapi.json``), so that the
Python and TypeScript clients read the same declared shapes and neither is written by hand.

In a clone, after the schema is regenerated (docs/api.md says how)::

    python -m meaning_memory.client.generate           # writes answers/
    python -m meaning_memory.client.generate --check   # fails if answers/ is not the output

It needs the development tools (requirements-dev.txt): datamodel-code-generator, which writes
the pydantic models, and ruff, which formats them as the rest of the code. The options below
are the only place they are chosen; ``meaning_memory/tests/test_client_answers.py`` fails when
the committed module is not what they give.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "clients" / "typescript" / "openapi.json"
#: The generated package: ``__init__`` names every model, the parts hold them in order (each
#: part at most ``PART_LINES`` lines, as every module of the project is kept short).
ANSWERS = Path(__file__).with_name("answers")
PART_LINES = 400

HEADER = """\
# Generated from the engine's OpenAPI schema (clients/typescript/openapi.json) by
# datamodel-code-generator: the shapes of the API's success answers. Do not edit; regenerate
# with `python -m meaning_memory.client.generate` (its options are there)."""

#: datamodel-codegen's options: pydantic v2 models; sets of values opened to their type
#: (``open_values``: a newer engine's value is read, not refused); a nullable field typed
#: ``| None`` even when required; times aware datetimes;
#: links kept as the text the engine sent; fields a newer engine adds kept (``model_extra``);
#: the schema's descriptions as docstrings; no timestamp, so that the output is byte-stable.
#: The models come in the generator's order, each after those it names, so that each is
#: complete once the module is imported and the client's subclasses (``results``) inherit it
#: whole (alphabetical order, ``--keep-model-order``, would leave them to resolve later).
OPTIONS = [
    "--input-file-type=openapi",
    "--output-model-type=pydantic_v2.BaseModel",
    "--target-python-version=3.11",
    "--enum-field-as-literal=all",
    "--strict-nullable",
    "--output-datetime-class=AwareDatetime",
    "--type-mappings=uri=string",
    "--extra-fields=allow",
    "--use-annotated",
    "--collapse-root-models",
    "--use-schema-description",
    "--use-field-description",
    "--disable-timestamp",
    "--no-formatters",
]


def answer_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema cut to the components its success answers reach: the client sends the
    caller's keywords as they are and raises error answers as exceptions, so request bodies
    and error bodies have no model here."""
    components = schema["components"]["schemas"]
    reached: set[str] = set()

    def reach(node: Any) -> None:
        if isinstance(node, dict):
            name = node.get("$ref", "").removeprefix("#/components/schemas/")
            if name and name not in reached:
                reached.add(name)
                reach(components[name])
            for value in node.values():
                reach(value)
        elif isinstance(node, list):
            for value in node:
                reach(value)

    for operations in schema["paths"].values():
        for operation in operations.values():
            for status, answer in operation["responses"].items():
                if status.startswith("2"):
                    reach(answer.get("content", {}).get("application/json", {}))
    kept = {name: open_values(shape) for name, shape in components.items() if name in reached}
    return {**schema, "paths": {}, "components": {"schemas": kept}}


def open_values(node: Any) -> Any:
    """``node`` with each set of values (``enum``) opened to its type, the values said in its
    description: a newer engine may answer a value this client was not generated with (a new
    category, a new origin), and the client reads it as it reads a field it does not know,
    never failing on it."""
    if isinstance(node, list):
        return [open_values(item) for item in node]
    if not isinstance(node, dict):
        return node
    opened = {key: open_values(value) for key, value in node.items() if key != "enum"}
    values = [value for value in node.get("enum", []) if value is not None]
    if values:
        said = "One of: " + ", ".join(str(value) for value in values) + " (or a newer value)."
        described = opened.get("description", "")
        opened["description"] = f"{described}\n\n{said}" if described else said
        opened.setdefault("type", "string" if isinstance(values[0], str) else "number")
    elif "enum" in node:  # only null (a field that may be null): no type to open it to
        opened["nullable"] = True
    return opened


def _run(*command: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *command], input=stdin, capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode:
        raise RuntimeError(f"{' '.join(command[:2])} failed:\n{done.stderr or done.stdout}")
    return done.stdout


def render(schema: Path = SCHEMA) -> dict[str, str]:
    """The files of the ``answers`` package (by name) as the schema gives them."""
    answers = answer_schema(json.loads(schema.read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "openapi.json", Path(folder) / "answers.py"
        source.write_text(json.dumps(answers), encoding="utf-8")
        _run("datamodel_code_generator", "--input", str(source), "--output", str(target),
             "--custom-file-header", HEADER, *OPTIONS)  # fmt: skip
        code = _tidy(target.read_text(encoding="utf-8"), "__init__.py")
    return _split(code)


def _tidy(code: str, name: str) -> str:
    """Fixed and formatted as the repository's own code (pyproject.toml's ruff settings)."""
    where = str((ANSWERS / name).relative_to(ROOT))
    code = _run("ruff", "check", "--fix", "--quiet", "--stdin-filename", where, "-", stdin=code)
    return _run("ruff", "format", "--quiet", "--stdin-filename", where, "-", stdin=code)


def _split(code: str) -> dict[str, str]:
    """The generated module cut into parts of whole models, in their order (each part imports
    the earlier models it names), and an ``__init__`` that names them all."""
    prelude, _, body = code.partition("\n\n\nclass ")
    blocks = ["class " + block for block in body.split("\n\n\nclass ")]
    budget = PART_LINES - prelude.count("\n") - 40  # the imports of earlier models
    parts: list[list[str]] = [[]]
    for block in blocks:
        if parts[-1] and sum(b.count("\n") + 3 for b in parts[-1] + [block]) > budget:
            parts.append([])
        parts[-1].append(block)
    files: dict[str, str] = {}
    defined: dict[str, str] = {}  # model → its part's module
    for number, part in enumerate(parts, start=1):
        module = f"part{number}"
        text = "\n\n\n".join(part)
        earlier: dict[str, list[str]] = {}
        for name, home in defined.items():
            if re.search(rf"\b{name}\b", text):
                earlier.setdefault(home, []).append(name)
        imports = "".join(
            f"from meaning_memory.client.answers.{home} import {', '.join(names)}\n"
            for home, names in earlier.items()
        )
        files[f"{module}.py"] = _tidy(f"{prelude}\n{imports}\n\n{text}", f"{module}.py")
        defined |= {re.match(r"class (\w+)", block)[1]: module for block in part}
    names = list(defined)
    header = prelude.split("\n\n")[0]
    init = (
        header
        + "\n\n"
        + "".join(
            f"from meaning_memory.client.answers.{module} import "
            f"{', '.join(n for n in names if defined[n] == module)}\n"
            for module in dict.fromkeys(defined.values())
        )
    )
    init += "\n__all__ = [" + ", ".join(f'"{n}"' for n in names) + "]\n"
    files["__init__.py"] = _tidy(init, "__init__.py")
    return files


def committed() -> dict[str, str]:
    """The ``answers`` package's files as they are now."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(ANSWERS.glob("*.py"))}


def main(argv: list[str]) -> int:
    files = render()
    if "--check" in argv:
        if committed() != files:
            print(f"{ANSWERS.name}/ is not what the schema gives: regenerate it", file=sys.stderr)
            return 1
        return 0
    for old in ANSWERS.glob("*.py"):
        old.unlink()
    ANSWERS.mkdir(exist_ok=True)
    for name, text in files.items():
        (ANSWERS / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
