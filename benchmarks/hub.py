"""The dashboard's customer page (an entity's hub) and a conversation's page, for a customer
with many memories: server time and page weight.

    python benchmarks/hub.py --memories 1000 --requests 100

Writes ``--memories`` memories about one customer into a workspace of its own embedded
PostgreSQL (through ``memory_remember_bulk``, as an agent writes them: entities linked,
episodes), spread over 50 sessions, with a person named (with a title) in one in ten,
commitments, dates ahead and one supersession in twenty (``supersedes``), beside as many
memories about other customers. Then a curator's GETs of the customer's page, its last
timeline page and one conversation's page, in process (Django's test client: the server's
time, no network): p50 and p95 ms, the page's bytes and its SQL statements. The target
(issue 59): the customer page's p95 at most 150 ms with 1,000 memories about the customer.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, add_smoke_option, describe, machine, setup_django, write_json

CUSTOMER = "Orion Health"
PEOPLE = ("Priya Raman", "Tom Okafor", "Lena Fischer", "Marco Rossi", "Aiko Tanaka")
#: Each person's title, as the notes that name them say it (the page reads it back as a role).
TITLES = ("CTO", "VP of Clinical Operations", "Head of IT", "Procurement Lead", "CFO")
SUBJECTS = (
    "renewal", "seat count", "security review", "invoice", "data residency add-on",
    "support plan", "onboarding", "integration", "pricing", "contract terms",
)  # fmt: skip
SESSIONS = 50


def items(n: int, customer: str, start: datetime, rng: np.random.Generator) -> list[dict]:
    """``n`` notes about ``customer``, oldest first, an hour apart."""
    written = []
    for i in range(n):
        subject = SUBJECTS[int(rng.integers(len(SUBJECTS)))]
        item: dict[str, Any] = {
            "text": f"{customer} note {i}: the {subject} was discussed and agreed for "
            f"{customer}, with the next step set.",
            "entities": [{"name": customer, "type": "customer"}],
            "session": f"{customer.lower().replace(' ', '-')}-call-{i % SESSIONS}",
            "created_at": (start + timedelta(hours=i)).isoformat(),
            "idempotency_key": f"{customer}-{i}",
        }
        if i % 10 == 3:
            person = PEOPLE[i % len(PEOPLE)]
            item["text"] += f" {person}, {TITLES[i % len(PEOPLE)]}, asked for it."
            item["entities"].append({"name": person, "type": "person"})
        if i % 25 == 7:
            item["category"] = "commitment"
        if i % 40 == 11:
            item["valid_from"] = (datetime.now(UTC) + timedelta(days=10 + i)).isoformat()
        written.append(item)
    return written


def load(n: int) -> tuple[str, str, str]:
    """The workspace with ``n`` memories about the customer (and as many about others), a
    curator, and one in twenty of the customer's memories superseded by the next; the
    workspace's slug, the customer's entity id and one of its sessions."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from meaning_memory.testing import make_actor
    from memories.models import Entity, Membership, Memory, Workspace
    from memories.operations import memory_remember_bulk
    from memories.services.supersede import supersede

    slug = f"hub-{Workspace.objects.count() + 1}"  # a previous run's workspace stays apart
    actor = make_actor(slug, "writer")
    user = get_user_model().objects.create_user(f"curator-{slug}", password="pw")
    Membership.objects.create(user=user, workspace=actor.agent.workspace, role="curator")
    rng = np.random.default_rng(59)
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    for customer in (CUSTOMER, "Kestrel Analytics"):
        batch = items(n, customer, start, rng)
        for at in range(0, len(batch), 50):
            memory_remember_bulk(agent=actor.agent, items=batch[at : at + 50])
    ordered = list(
        Memory.objects.filter(workspace=actor.agent.workspace, text__startswith=CUSTOMER).order_by(
            "created_at", "id"
        )
    )
    for old, new in zip(ordered[::20], ordered[1::20], strict=False):
        with transaction.atomic():
            supersede(old=old, new=new, reason="benchmark: a newer note replaces it")
    with connection.cursor() as cursor:  # the statistics autovacuum gathers after a load
        cursor.execute("ANALYZE")
    entity = Entity.objects.get(workspace=actor.agent.workspace, name=CUSTOMER)
    return slug, entity.entity_id, f"{CUSTOMER.lower().replace(' ', '-')}-call-7"


def measure(slug: str, paths: dict[str, str], requests: int) -> list[dict[str, Any]]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host
    assert client.login(username=f"curator-{slug}", password="pw")
    rows = []
    for name, path in paths.items():
        for _ in range(3):  # warm: templates compiled, plans cached
            assert client.get(path).status_code == 200
        ms, size = [], 0
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(path)
            ms.append((time.perf_counter() - started) * 1000)
            size = len(response.content)
        with CaptureQueriesContext(connection) as queries:
            client.get(path)
        rows.append(
            {
                "page": name,
                "p50_ms": float(np.percentile(ms, 50)),
                "p95_ms": float(np.percentile(ms, 95)),
                "bytes": size,
                "statements": len(queries.captured_queries),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks/out/hub-db")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.memories, args.requests = 60, 3
        args.data_dir = ROOT / "benchmarks/out/smoke-hub"
    if args.memories < 20 or args.requests < 1:
        parser.error("--memories must be at least 20 and --requests positive")
    setup_django(args.data_dir)
    started = time.perf_counter()
    slug, entity_id, session = load(args.memories)
    load_s = time.perf_counter() - started
    paths = {
        "customer page": f"/w/{slug}/e/{entity_id}",
        "its last timeline page": f"/w/{slug}/e/{entity_id}?page={-(-args.memories // 25)}",
        "a conversation's page": f"/w/{slug}/s/{session}",
    }
    rows = measure(slug, paths, args.requests)
    print(describe(machine()))
    print(
        f"{args.memories:,} memories about the customer (and as many about another), written "
        f"in {load_s:.1f} s; {args.requests} requests a page, a curator's, in process"
    )
    print("| page | p50 ms | p95 ms | bytes | SQL statements |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['page']} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['bytes']:,} | "
            f"{r['statements']} |"
        )
    write_json(args.json, {"memories": args.memories, "requests": args.requests, "rows": rows})


if __name__ == "__main__":
    main()
