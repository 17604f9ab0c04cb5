"""The API's core flows on the database ``DATABASE_URL`` names, their answers printed as one
JSON document in which every id is replaced by what it names and every time is left out
(``test_citus.py`` runs it on a Citus cluster and on one PostgreSQL, and compares).

    DATABASE_URL=... python -m meaning_memory.tests.citus_flows [--distribute]

``--distribute``: after ``migrate``, the schema is distributed (``meaning-memory
distribution``) unless it already is. Each run writes to a workspace of its own.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import uuid
from io import StringIO
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "meaning_memory.settings")
os.environ["MM_TRAVERSAL"] = "true"  # traverse and explain-path are among the flows
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from meaning_memory.distribution import distribute  # noqa: E402
from meaning_memory.testing import make_actor  # noqa: E402

TEAM = "team:accounts"
#: What the flows write: (text, extra fields of the remember call).
MEMORIES = [
    ("Dana Park signs the Zephyr Logistics renewal every March.", {"category": "decision"}),
    ("Zephyr Logistics moved its warehouse from Leeds to Bristol.", {"scope": TEAM}),
    ("Acme pays Zephyr Logistics within 30 days of each invoice.", {"scope": TEAM}),
    ("Dana Park prefers calls before ten in the morning.", {"category": "preference"}),
    ("The Bristol warehouse opens at six on weekdays.", {"session": "call-1"}),
    ("Ravi Shah at Zephyr Logistics handles the invoices now.", {"session": "call-1"}),
    ("Zephyr's café in Zürich serves émigré bakers' bread.", {}),
]
ID = re.compile(r"\b[0-9a-f]{16}\b")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
#: What differs between two runs of the same flows on one database: how long each step took,
#: a text's tokens (the file's header names the run's workspace), and the results' table of
#: shortened ids.
LEFT_OUT = {"timings", "tokens", "table"}


class Names:
    """Every public id an answer holds, replaced by the text or name it stands for."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def learn(self, value) -> None:
        if isinstance(value, dict):
            for key, name in (("mem_id", "text"), ("entity_id", "name"), ("link_id", "type")):
                if isinstance(value.get(key), str) and isinstance(value.get(name), str):
                    self.names.setdefault(value[key], f"{key}:{value[name]}")
            for item in value.values():
                self.learn(item)
        elif isinstance(value, list):
            for item in value:
                self.learn(item)

    def __call__(self, value, run: str = ""):
        if isinstance(value, dict):
            return {k: self(v, run) for k, v in sorted(value.items()) if k not in LEFT_OUT}
        if isinstance(value, list):
            return [self(item, run) for item in value]
        if isinstance(value, float):
            return round(value, 4)
        if isinstance(value, str):
            value = ID.sub(lambda found: self.names.get(found[0], "an id"), value)
            return TIME.sub("a time", value.replace(run, "RUN") if run else value)
        return value


def actor(workspace: str, name: str):
    """An agent with an API client that speaks to the engine as a local caller would."""
    made = make_actor(workspace, name, scopes=[TEAM])
    made.client.defaults["SERVER_NAME"] = "localhost"
    return made


def flows() -> dict:
    run = uuid.uuid4().hex[:8]
    alice = actor(f"flows-{run}", "alice")
    bob = actor(f"flows-{run}", "bob")
    names = Names()
    answers: dict[str, object] = {}

    def ask(label: str, response) -> dict:
        body = response.json() if response["Content-Type"].startswith("application/json") else {}
        assert response.status_code < 300, (label, response.status_code, body)
        names.learn(body)
        answers[label] = body
        return body

    written = []
    for text, extra in MEMORIES:
        body = {"text": text, **extra}
        written.append(ask(f"remember {text}", alice.client.post("/api/v1/memories", body, "json")))
    first, second = written[0]["mem_id"], written[1]["mem_id"]
    ask(
        "supersede",
        alice.client.post(
            "/api/v1/memories",
            {"text": "Zephyr Logistics moved its warehouse to Cardiff.", "supersedes": second},
            "json",
        ),
    )
    entity = next(e for e in written[0]["entities"] if "Zephyr" in e["name"])["entity_id"]
    for label, extra in [
        ("plain", {}),
        ("category", {"category": "decision"}),
        ("memory_type", {"memory_type": "semantic"}),
        ("source", {"source": "alice"}),
        ("as_of", {"as_of": "2020-01-01T00:00:00Z"}),
        ("no longer valid", {"currently_valid": False}),
        ("min_s_score", {"min_s_score": 0.5}),
        ("entity", {"entity": entity}),
        ("related_to", {"related_to": first}),
        ("link_types", {"related_to": first, "link_types": ["mentions"]}),
        ("min_r", {"min_r": 1}),
        ("expand", {"expand": "graph"}),
        ("limit", {"limit": 2}),
    ]:
        query = {"query": "Who handles Zephyr Logistics and its warehouse?", **extra}
        ask(f"search {label}", alice.client.post("/api/v1/search", query, "json"))
    ask("search bob", bob.client.post("/api/v1/search", {"query": "Dana Park"}, "json"))
    ask("traverse", alice.client.post("/api/v1/traverse", {"from": first, "depth": 2}, "json"))
    ask(
        "explain-path",
        alice.client.post(
            "/api/v1/explain-path", {"from": first, "to": written[2]["mem_id"]}, "json"
        ),
    )
    ask("entities", alice.client.get("/api/v1/entities"))
    ask("memory", alice.client.get(f"/api/v1/memories/{first}"))
    compiled = alice.client.get("/api/v1/compiled", {"budget": "1000"})
    assert compiled.status_code == 200, compiled.content
    answers["compiled"] = compiled.content.decode()

    out = StringIO()
    call_command("consolidate", workspace=f"flows-{run}", json=True, stdout=out)
    answers["consolidate"] = json.loads(out.getvalue())
    ask("after consolidation", alice.client.post("/api/v1/search", {"query": "Zephyr"}, "json"))

    erased = written[3]["mem_id"]
    ask("erase", alice.client.post(f"/api/v1/memories/{erased}/erase", {"reason": "asked"}, "json"))
    ask("after erasure", alice.client.post("/api/v1/search", {"query": "Dana Park"}, "json"))

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "export.jsonl"
        call_command("export", "--workspace", f"flows-{run}", "--output", str(path))
        records = [json.loads(line) for line in path.read_text().splitlines()]
        answers["export"] = sorted(record.get("text", record.get("kind", "")) for record in records)
        call_command("import", str(path), "--workspace", f"copy-{run}", stdout=StringIO())
    copy = actor(f"copy-{run}", "reader")  # sees the imported team scope
    ask("imported", copy.client.post("/api/v1/search", {"query": "Zephyr"}, "json"))
    named = names(answers, run)
    # Nodes at one depth come in the order of their random ids: by what they are instead.
    named["traverse"]["nodes"].sort(key=lambda node: (node["depth"], json.dumps(node)))
    return named


if __name__ == "__main__":
    call_command("migrate", verbosity=0)
    if "--distribute" in sys.argv[1:]:
        with connection.cursor() as cursor:
            distribute(cursor)
    print(json.dumps(flows(), sort_keys=True, ensure_ascii=False))
