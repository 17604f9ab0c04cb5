"""Consolidation's phases decide; the memories' rows are written by ``memories.services`` only.
Read from each phase's source (no database): no call that writes through a model of the
``memories`` app (``save``, ``delete``, ``bulk_create``, ``bulk_update`` on a row that is not
known to be consolidation's own; ``create``, ``update``, ``get_or_create``,
``update_or_create`` on a manager, query set or row of a memories model) and no SQL statement
that inserts, updates or deletes in a memories table. Consolidation's own models
(``consolidation.models``) are the phases' to write."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist
from django.db import models

PHASES = Path(__file__).resolve().parents[1] / "phases"

#: Phases still writing the memories themselves, each to leave this list when it writes
#: through a service (the check fails for an entry that no longer writes, so it only shrinks).
NOT_YET: set[str] = set()  # a phase not yet moved to the services, named here until it is

#: Methods that only ever write: flagged unless the row or manager is consolidation's.
WRITING = {"save", "delete", "bulk_create", "bulk_update"}
#: Methods that write when called on a memories model's manager, query set or row.
WRITING_ON_A_MODEL = {"create", "update", "get_or_create", "update_or_create"}
#: Query set methods whose answer is plain data, not rows.
PLAIN = {"values", "values_list", "count", "exists", "aggregate"}
#: Built-ins whose answer holds what their arguments hold.
CARRYING = {"list", "sorted", "reversed", "set", "tuple", "dict", "zip", "enumerate", "next"}
#: A statement that changes a table, and the table.
CHANGING_SQL = re.compile(
    r"\b(?:INSERT\s+INTO|(?<!DO\s)(?<!FOR\s)(?<!NO KEY\s)UPDATE(?!\s+SET\b)|DELETE\s+FROM|"
    r"TRUNCATE(?:\s+TABLE)?|MERGE\s+INTO)\s+(?:ONLY\s+)?(?:\w+\.)?\"?(\{\?\}|\w+)",
    re.IGNORECASE,
)
UNKNOWN = "{?}"


def memories_tables() -> set[str]:
    return {model._meta.db_table for model in apps.get_app_config("memories").get_models()}


class Known:
    """What one module, or one function in it, knows: names bound to a model class, a row, a
    query set or a manager of one (``models``), and names bound to SQL text (``texts``)."""

    def __init__(self, outer: Known | None = None):
        self.models: dict[str, type[models.Model]] = dict(outer.models) if outer else {}
        self.texts: dict[str, str] = dict(outer.texts) if outer else {}
        self.fields: dict[str, type[models.Model]] = outer.fields if outer else {}
        self.modules: dict[str, str] = outer.modules if outer else {}

    def model_of(self, node: ast.AST | None) -> type[models.Model] | None:
        """The model whose class, manager, query set or rows ``node`` holds, if it is known."""
        if isinstance(node, ast.Name):
            return self.models.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in self.modules:
                return _model_named(self.modules[node.value.id], node.attr)
            model = self.model_of(node.value)
            if model is None:
                return self.fields.get(node.attr)
            try:
                field = model._meta.get_field(node.attr)
            except FieldDoesNotExist:
                return model  # a manager or a query set method
            return field.related_model if field.is_relation else None
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                return None if func.attr in PLAIN else self.model_of(func.value)
            if isinstance(func, ast.Name) and func.id in CARRYING:
                return next(filter(None, map(self.model_of, node.args)), None)
            return self.model_of(func) if isinstance(func, ast.Name) else None
        if isinstance(node, ast.Subscript | ast.Starred):
            return self.model_of(node.value)
        if isinstance(node, ast.IfExp):
            return self.model_of(node.body) or self.model_of(node.orelse)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            inner = Known(self)
            for generator in node.generators:
                inner.bind(generator.target, inner.model_of(generator.iter))
            return inner.model_of(node.elt)
        return None

    def text_of(self, node: ast.AST | None) -> str | None:
        """The SQL text ``node`` makes, with ``{?}`` where a part of it is not known."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.texts.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "db_table":
            owner = node.value
            if isinstance(owner, ast.Attribute) and owner.attr == "_meta":
                model = self.model_of(owner.value)
                return model._meta.db_table if model is not None else None
        if isinstance(node, ast.JoinedStr):
            return "".join(
                (self.text_of(part.value) or UNKNOWN)
                if isinstance(part, ast.FormattedValue)
                else str(part.value)
                for part in node.values
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
            left, right = self.text_of(node.left), self.text_of(node.right)
            return None if left is None else left + (right or "")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            template = self.text_of(node.func.value) if node.func.attr == "format" else None
            for keyword in node.keywords if template is not None else []:
                value = self.text_of(keyword.value) or UNKNOWN
                template = template.replace(f"{{{keyword.arg}}}", value)
            return None if template is None else re.sub(r"\{[^{}]*\}", UNKNOWN, template)
        return None

    def bind(self, target: ast.AST, model: type[models.Model] | None) -> None:
        for name in ast.walk(target):
            if isinstance(name, ast.Name) and model is not None:
                self.models[name.id] = model

    def learn(self, body: list[ast.stmt]) -> None:
        """Bind what ``body``'s own statements assign (twice, so the order does not matter);
        not what nested functions assign."""
        for _ in range(2):
            for node in statements(body):
                if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    text = self.text_of(node.value)
                    for target in targets:
                        self.bind(target, self.model_of(node.value))
                        if text is not None and isinstance(target, ast.Name):
                            self.texts[target.id] = text
                elif isinstance(node, ast.For | ast.AsyncFor):
                    self.bind(node.target, self.model_of(node.iter))
                elif isinstance(node, ast.With | ast.AsyncWith):
                    for item in node.items:
                        if item.optional_vars is not None:
                            self.bind(item.optional_vars, self.model_of(item.context_expr))
                elif isinstance(node, ast.comprehension):
                    self.bind(node.target, self.model_of(node.iter))

    def annotated(self, annotation: ast.AST | None) -> type[models.Model] | None:
        names = [n.id for n in ast.walk(annotation or ast.Pass()) if isinstance(n, ast.Name)]
        return next(filter(None, map(self.models.get, names)), None)


def statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body``; a function or class in it is given, not entered (it has its own
    names)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo += ast.iter_child_nodes(node)


def module_scope(tree: ast.Module) -> Known:
    """The module's imported models (``from memories.models import Link``, aliases and the
    models' modules too) and its constants; the fields of its own classes that hold a row."""
    scope = Known()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                model = _model_named(node.module, alias.name)
                if model is not None:
                    scope.models[alias.asname or alias.name] = model
                elif alias.name == "models" or (
                    node.module.endswith(".models") and alias.name.islower()
                ):
                    scope.modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if ".models" in alias.name and alias.asname:
                    scope.modules[alias.asname] = alias.name
    scope.learn(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    model = scope.annotated(item.annotation)
                    if model is not None:
                        scope.fields[item.target.id] = model
    return scope


def _model_named(module: str, name: str) -> type[models.Model] | None:
    """The model class ``from module import name`` imports, if it is one."""
    for config in apps.get_app_configs():
        if module == config.name or module.startswith(f"{config.name}.models"):
            model = next((m for m in config.get_models() if m.__name__ == name), None)
            if model is not None:
                return model
    return None


def writes(source: str, tables: set[str] | None = None) -> list[tuple[int, str]]:
    """(line, what) for each write to the memories' tables in ``source``."""
    tables = memories_tables() if tables is None else tables
    tree = ast.parse(source)
    found = _writes_in(tree.body, module_scope(tree), tables)
    return sorted(set(found))


def _writes_in(body: list[ast.stmt], outer: Known, tables: set[str]) -> list[tuple[int, str]]:
    scope = Known(outer)
    scope.learn(body)
    found = []
    for node in statements(body):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, node.func.value
            model = scope.model_of(receiver)
            mine = model is not None and model._meta.app_label == "memories"
            if (method in WRITING and (model is None or mine)) or (
                method in WRITING_ON_A_MODEL and mine
            ):
                whose = model.__name__ if model is not None else "a row of unknown model"
                found.append((node.lineno, f".{method}() on {whose}"))
            if method in {"execute", "executemany"}:
                sql = node.args[0] if node.args else None
                text = scope.text_of(sql)
                if text is None:
                    found.append((node.lineno, "SQL the check cannot read"))
                for table in CHANGING_SQL.findall(text or ""):
                    if table == UNKNOWN or table.lower() in tables:
                        found.append((node.lineno, f"SQL that changes {table}"))
    for node in statements(body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = Known(scope)
            arguments = node.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                inner.bind(ast.Name(arg.arg), inner.annotated(arg.annotation))
            found += _writes_in(node.body, inner, tables)
        elif isinstance(node, ast.ClassDef):
            found += _writes_in(node.body, scope, tables)
    return found


def phase_modules() -> list[Path]:
    return sorted(PHASES.glob("*.py"))


def test_no_phase_writes_the_memories_but_through_a_service():
    modules = phase_modules()
    assert {"link.py", "rescore.py", "threads.py", "context.py"} <= {m.name for m in modules}
    found = [
        f"consolidation/phases/{path.name}:{line}: {what}"
        for path in modules
        if path.name not in NOT_YET
        for line, what in writes(path.read_text(encoding="utf-8"))
    ]
    assert not found, "written around memories.services:\n" + "\n".join(found)


def test_the_phases_not_yet_moved_still_write_and_exist():
    """An entry whose module writes through services now (or is gone) leaves ``NOT_YET``."""
    names = {path.name: path for path in phase_modules()}
    done = sorted(
        name
        for name in NOT_YET
        if name not in names or not writes(names[name].read_text(encoding="utf-8"))
    )
    assert not done, f"take {', '.join(done)} off NOT_YET: it writes through services now"


def test_the_check_finds_each_kind_of_write():
    source = """
from django.db import connection
from consolidation.models import PhaseWatermark, WordFrequency
from memories.models import Link, Memory, Thread as T


class Change:
    older: Memory


def run(context, ids, change: Change):
    Link.objects.bulk_create([Link(kind="relates_to")])
    T.objects.create(label="")
    for memory in list(Memory.objects.filter(pk__in=ids)):
        memory.save()
    thread = T.objects.filter(pk=1)
    thread.update(size=2)
    Memory.objects.get(pk=1).scope.delete()
    change.older.status = "superseded"
    change.older.save()
    table = T._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET size = 0")
        cursor.execute("DELETE FROM memories_link WHERE id = %s", [1])
        cursor.execute(f"INSERT INTO {context.table} VALUES (1)")
        cursor.execute(context.sql)


def fine(context, counts):
    counts.update({"a": 1})
    PhaseWatermark.objects.update_or_create(phase="x", defaults={"through_id": 1})
    Memory.objects.filter(pk=1).values_list("text", flat=True)
    texts = dict(Memory.objects.values_list("pk", "text"))
    texts.update({})
    memory = Memory.objects.get(pk=1)
    memory.metadata.update({})
    table = WordFrequency._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} VALUES (1) ON CONFLICT DO UPDATE SET n = 1")
        cursor.execute("SELECT id FROM memories_memory FOR UPDATE")
"""
    assert writes(source) == [
        (12, ".bulk_create() on Link"),
        (13, ".create() on Thread"),
        (15, ".save() on Memory"),
        (17, ".update() on Thread"),
        (18, ".delete() on Scope"),
        (20, ".save() on Memory"),
        (23, "SQL that changes memories_thread"),
        (24, "SQL that changes memories_link"),
        (25, "SQL that changes {?}"),
        (26, "SQL the check cannot read"),
    ]
