"""The graph a team walks: the entity-centred view and its data, the path between two nodes,
and that another workspace's entity or memory is a 404 like a missing one; in Chromium, it
draws from the site's own copy of its library, recentres on a click and finds a path."""

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from meaning_memory.testing import make_actor
from memories.operations import memory_remember
from memories.services import entity_declare
from memories.tests.test_dashboard import member
from memories.tests.test_hub import orion  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[2]


def test_the_graph_data_is_the_centre_its_neighbours_and_what_connects_them(
    client,
    alice,
    orion,  # noqa: F811
):
    member(client, "vic", alice.agent.workspace, "viewer")
    centre = orion["entity"]
    data = client.get("/w/acme/graph/data", {"entity": centre.entity_id}).json()
    ids = {n["id"]: n for n in data["nodes"]}
    assert data["centre"] == f"e:{centre.entity_id}" and ids[data["centre"]]["centre"]
    priya = next(n for n in data["nodes"] if n["label"] == "Priya Raman")
    assert priya["kind"] == "person" and priya["memories"] == 1
    plan = f"m:{orion['plan'].mem_id}"
    assert plan in ids
    assert {"source": plan, "target": priya["id"]} in data["edges"]
    assert {"source": plan, "target": data["centre"]} in data["edges"]
    assert f"m:{orion['other'].mem_id}" not in ids
    page = client.get("/w/acme/graph", {"entity": centre.entity_id}).content.decode()
    assert "Priya Raman" in page and orion["plan"].text in page  # read without a script
    assert "/static/memories/vendor/cytoscape.min.js" in page


def test_another_workspaces_entity_or_node_is_a_404(client, alice, orion):  # noqa: F811
    member(client, "carol", alice.agent.workspace, "curator")
    globex = make_actor("globex", "gina")
    theirs = entity_declare(
        workspace_id=globex.agent.workspace_id, name="Orion Health", kind="customer"
    ).entity
    note = memory_remember(agent=globex.agent, text="Globex's Orion note.").memory
    assert client.get("/w/acme/graph/data", {"entity": theirs.entity_id}).status_code == 404
    assert client.get("/w/acme/graph", {"entity": theirs.entity_id}).status_code == 404
    assert client.get("/w/globex/graph/data", {"entity": theirs.entity_id}).status_code == 404
    mine = f"e:{orion['entity'].entity_id}"
    for other in (f"e:{theirs.entity_id}", f"m:{note.mem_id}", "m:nope"):
        answer = client.get("/w/acme/graph/path", {"from": mine, "to": other})
        assert answer.status_code in (403, 404)  # 403 only while paths are off


def test_the_path_between_two_nodes_names_each_link(client, alice, orion, settings):  # noqa: F811
    member(client, "vic", alice.agent.workspace, "viewer")
    mine = f"e:{orion['entity'].entity_id}"
    settings.MM_TRAVERSAL = False
    page = client.get("/w/acme/graph", {"entity": mine[2:]}).content.decode()
    assert "Paths between two nodes are off on this engine" in page
    off = client.get("/w/acme/graph/path", {"from": mine, "to": f"m:{orion['plan'].mem_id}"})
    assert off.status_code == 403 and "MM_TRAVERSAL" in off.json()["detail"]
    settings.MM_TRAVERSAL = True
    priya = next(
        n["id"]
        for n in client.get("/w/acme/graph/data", {"entity": mine[2:]}).json()["nodes"]
        if n["label"] == "Priya Raman"
    )
    found = client.get("/w/acme/graph/path", {"from": mine, "to": priya}).json()
    assert [n["id"] for n in found["nodes"]][0] == mine and found["nodes"][-1]["id"] == priya
    assert found["nodes"][1]["id"] == f"m:{orion['plan'].mem_id}"
    assert [s["kind"] for s in found["steps"]] == ["mentions", "mentions"]
    bad = client.get("/w/acme/graph/path", {"from": "x:1", "to": priya})
    assert bad.status_code == 400 and "from" in bad.json()


def test_the_vendored_library_is_the_pinned_packages_file(tmp_path):
    """memories/static/memories/vendor/cytoscape.min.js is byte for byte the file of the
    version scripts/vendor/package-lock.json pins (installed again here with npm ci)."""
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("MM_REQUIRE_NODE"):
            raise RuntimeError("npm is required (MM_REQUIRE_NODE)")
        pytest.skip("no npm: apt-get install npm")
    for name in ("package.json", "package-lock.json"):
        shutil.copy(ROOT / "scripts" / "vendor" / name, tmp_path / name)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    installed = tmp_path / "node_modules" / "cytoscape"
    pinned = json.loads((tmp_path / "package.json").read_text())["dependencies"]["cytoscape"]
    assert json.loads((installed / "package.json").read_text())["version"] == pinned
    for ours, theirs in (("cytoscape.min.js", "dist/cytoscape.min.js"),
                         ("cytoscape.LICENSE", "LICENSE")):  # fmt: skip
        vendored = ROOT / "memories" / "static" / "memories" / "vendor" / ours
        digest = hashlib.sha256(vendored.read_bytes()).hexdigest()
        assert digest == hashlib.sha256((installed / theirs).read_bytes()).hexdigest(), ours


def test_a_memory_and_a_customer_lead_to_the_graph(client, alice, orion):  # noqa: F811
    member(client, "vic", alice.agent.workspace, "viewer")
    centre = orion["entity"].entity_id
    memory_page = client.get(f"/w/acme/m/{orion['plan'].mem_id}").content.decode()
    assert f'href="/w/acme/graph?entity={centre}">Orion Health</a>' in memory_page
    hub = client.get(f"/w/acme/e/{centre}").content.decode()
    assert f'href="/w/acme/graph?entity={centre}">Walk the graph around Orion Health' in hub
    assert (
        'href="/w/acme/graph">Walk the graph</a>' in client.get("/w/acme/entities").content.decode()
    )
