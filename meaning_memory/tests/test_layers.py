"""The import graph: no module imports one that imports it back, directly or through others
(imports inside functions count). The layers themselves are import-linter's contracts
(pyproject.toml), run by .ci/run. And the edge of the engine (adapters, presenters) never
works out what a reader sees: it asks ``memories.selectors.reader.Reader``."""

import ast
from pathlib import Path

import grimp

PACKAGES = ("meaning_memory", "memories", "readiness", "consolidation")


def cycles(graph) -> list[list[str]]:
    found = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                found.append([importer, *back])
    return found


def test_no_module_imports_itself_through_others():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert cycles(graph) == []


def test_imports_inside_functions_are_in_the_graph(tmp_path, monkeypatch):
    package = tmp_path / "layered"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def later():\n    from layered import high\n")
    (package / "high.py").write_text("from layered import low\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("layered", cache_dir=None)
    assert graph.direct_import_exists(importer="layered.low", imported="layered.high")
    assert cycles(graph)


def test_the_check_finds_a_cycle():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    # As if the models imported the search (which imports the models) inside a function.
    graph.add_import(importer="memories.models", imported="memories.search.ranking")
    assert any(chain[0] == chain[-1] == "memories.models" for chain in cycles(graph))


#: The adapters and the presenters: they ask for a reader (``memories.selectors.reader``) and
#: hand it on; they never work out what a reader sees.
READING_AT_THE_EDGE = (
    "memories/api",
    "memories/views",
    "memories/mcp",
    "memories/admin",
    "memories/management",
    "memories/presenters.py",
    "memories/forms.py",
    "memories/tasks.py",
    "consolidation/dashboard.py",
    "consolidation/views.py",
    "consolidation/mcp.py",
    "consolidation/admin.py",
    "readiness/views.py",
    "readiness/mcp.py",
)
#: What works out visibility or a membership, used by ``Reader`` and the core only.
VISIBILITY = {
    "visible_scope_ids",
    "visible_entities",
    "with_private_scope",
    "membership_of",
    "SHARED_SCOPE_IDS_SQL",
    "WORKSPACE_SCOPE_IDS_SQL",
}


def names_used(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    found |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found |= {alias.name for alias in node.names}
            if node.module == "memories.selectors.visibility":
                found.add("memories.selectors.visibility")
    return found


def test_no_adapter_or_presenter_works_out_what_a_reader_sees():
    root = Path(__file__).resolve().parents[2]
    files = [
        path
        for place in READING_AT_THE_EDGE
        for path in ([root / place] if place.endswith(".py") else (root / place).rglob("*.py"))
        if path.exists() and "tests" not in path.parts
    ]
    assert len(files) > 20
    offending = {
        str(path.relative_to(root)): sorted(
            names_used(path) & (VISIBILITY | {"memories.selectors.visibility"})
        )
        for path in files
    }
    assert {path: names for path, names in offending.items() if names} == {}


def test_the_check_finds_visibility_worked_out(tmp_path):
    adapter = tmp_path / "view.py"
    adapter.write_text(
        "from memories.selectors import visible_scope_ids\n"
        "def get(agent):\n    return visible_scope_ids(agent)\n"
    )
    assert "visible_scope_ids" in names_used(adapter)
