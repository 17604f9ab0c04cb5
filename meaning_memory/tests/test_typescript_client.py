"""The TypeScript client (``clients/typescript``): its committed schema is the engine's, its
README's example is the one its tests run, and, with Node.js installed, it builds from its
committed files alone and its own tests (``npm test``) pass against a served engine.

Without ``node`` and ``npm`` the tests that need them are skipped, each saying what to install;
``MM_REQUIRE_NODE`` (``.ci/run`` sets it) makes them fail instead."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer

from consolidation.services import consolidation_execute, consolidation_start
from meaning_memory.testing import make_actor
from meaning_memory.tests.served import ROOT
from meaning_memory.tests.test_parity import OPERATIONS

CLIENT = ROOT / "clients" / "typescript"
REGENERATE = (
    "python manage.py spectacular --format openapi-json --file clients/typescript/openapi.json, "
    "then `npm run generate` in clients/typescript"
)
#: Node's oldest version the client is for (``engines`` in its package.json).
NODE_MAJOR = 18


def test_the_main_readmes_example_is_the_start_of_the_one_the_tests_run():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```ts\n(.*?)^```$", readme, flags=re.MULTILINE | re.DOTALL)
    example = (CLIENT / "test" / "readme.example.ts").read_text()
    assert len(blocks) == 1, "README.md has one ```ts block"
    assert example.startswith(blocks[0]), "README.md's TypeScript example is not the tested one"


def test_the_committed_schema_is_the_engines():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    engine = json.loads(OpenApiJsonRenderer().render(schema))
    committed = json.loads((CLIENT / "openapi.json").read_text())
    assert committed == engine, f"clients/typescript/openapi.json is out of date: {REGENERATE}"


def test_the_readme_example_is_the_one_the_tests_run():
    readme = (CLIENT / "README.md").read_text()
    blocks = re.findall(r"^```ts\n(.*?)^```$", readme, flags=re.MULTILINE | re.DOTALL)
    example = (CLIENT / "test" / "readme.example.ts").read_text()
    assert blocks, "clients/typescript/README.md has no ```ts block"
    assert blocks[0] == example, (
        "the README's first TypeScript example differs from test/readme.example.ts, which "
        "test/readme.test.ts runs: make them the same"
    )


def _node() -> tuple[str, str]:
    """``node`` and ``npm``, or a skip saying what to install (a failure under
    ``MM_REQUIRE_NODE``)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    why = None
    if not node or not npm:
        why = f"needs Node.js {NODE_MAJOR} or newer and npm (e.g. apt-get install nodejs npm)"
    else:
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
        if int(version.strip().lstrip("v").split(".")[0]) < NODE_MAJOR:
            why = f"needs Node.js {NODE_MAJOR} or newer, found {version.strip()}"
    if why is None:
        return node, npm
    if os.environ.get("MM_REQUIRE_NODE"):
        pytest.fail(why + " (MM_REQUIRE_NODE is set)")
    pytest.skip(why)


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run ``args``; what it printed, or an AssertionError carrying all of it."""
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The client copied from its committed files (no build output, no modules), installed
    from its lock file and built."""
    node, npm = _node()
    copy = tmp_path_factory.mktemp("typescript") / "client"
    shutil.copytree(
        CLIENT, copy, ignore=shutil.ignore_patterns("node_modules", "dist", "dist-test", "*.tgz")
    )
    _run([npm, "ci", "--no-audit", "--no-fund"], copy)
    _run([npm, "run", "build"], copy)
    return copy


def test_the_generated_types_are_those_of_the_committed_schema(built):
    _, npm = _node()
    try:
        _run([npm, "run", "check-generated"], built)
    except AssertionError as error:
        raise AssertionError(f"src/schema.ts is out of date: {REGENERATE}\n{error}") from None


def test_the_built_client_has_a_method_for_every_operation(built):
    node, _ = _node()
    listed = _run(
        [
            node,
            "--input-type=module",
            "-e",
            "import { MeaningMemory } from './dist/index.js';"
            "const methods = Object.getOwnPropertyNames(MeaningMemory.prototype)"
            ".filter((name) => typeof MeaningMemory.prototype[name] === 'function');"
            "console.log(JSON.stringify(methods));",
        ],
        built,
    )
    methods = set(json.loads(listed))
    missing = {ts for *_, ts in OPERATIONS.values()} - methods
    assert not missing, f"the built TypeScript client lacks {sorted(missing)}"


def test_the_typescript_clients_tests_pass_against_a_served_engine(built, served, settings):
    _, npm = _node()
    # What its tests use: the opt-in capabilities on, a kept compiled file for the first agent
    # (a compile phase of its workspace), an agent of another workspace.
    settings.MM_TRAVERSAL = settings.MM_SAGA = settings.MM_DIVERGENCE = True
    agent = make_actor("acme", "alice")
    outsider = make_actor("globex", "charlie")
    run = consolidation_execute(
        consolidation_start(workspace=agent.agent.workspace, trigger="command", phases=["compile"])
    )
    assert run.status == "done", run.error
    env = {
        **os.environ,
        "MM_URL": served,
        "MM_TOKEN": agent.token,
        "MM_OTHER_TOKEN": outsider.token,
    }
    printed = _run([npm, "test"], built, env)
    assert re.search(r"^# fail 0$", printed, flags=re.MULTILINE), printed
    assert re.search(r"^# pass [1-9]", printed, flags=re.MULTILINE), printed


def test_the_packed_client_installs_and_loads_from_its_tarball(built, tmp_path):
    """What `npm pack` makes is a package another project installs and imports: the built
    client, its types, its README and schema, and nothing of its tests."""
    node, npm = _node()
    manifest = json.loads((built / "package.json").read_text())
    assert "private" not in manifest and manifest["main"] == "./dist/index.js"
    assert {"name", "version", "description", "license", "types", "exports", "engines"} <= set(
        manifest
    )
    packed = json.loads(_run([npm, "pack", "--json", "--pack-destination", str(tmp_path)], built))
    files = {entry["path"] for entry in packed[0]["files"]}
    assert {
        "package.json",
        "README.md",
        "openapi.json",
        "dist/index.js",
        "dist/index.d.ts",
    } <= files
    assert not any(path.startswith(("test/", "dist-test/", "node_modules/")) for path in files)
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"name": "uses-it", "type": "module"}\n')
    tarball = tmp_path / packed[0]["filename"]
    _run([npm, "install", "--no-audit", "--no-fund", str(tarball)], project)
    loaded = _run(
        [node, "-e", "import('meaning-memory').then((m) => console.log(typeof m.MeaningMemory))"],
        project,
    )
    assert loaded.strip() == "function"
