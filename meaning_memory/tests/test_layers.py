"""The import graph: no module imports one that imports it back, directly or through others
(imports inside functions count). The layers themselves are import-linter's contracts
(pyproject.toml), run by .ci/run."""

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
