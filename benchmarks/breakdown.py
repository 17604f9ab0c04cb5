"""Where a request of the load mix spends its time: each part's CPU and wall, per request.

``benchmarks/load.py`` runs it before the served rows, on the same data: requests of the mix
(its shares, and the bodies a ``load.Agent`` sends) one at a time, through the whole Django
stack in this process (middleware, authentication, fair use, parsing, the views' checks,
serialisation: everything but the HTTP server), with each part timed **exclusively** (a
part's time excludes the parts it calls):

* parsing (``JSONParser.parse``) and serialisation (``JSONRenderer.render``); the views check
  their input and build their answers' dicts themselves (no DRF serializer), so that is in the
  rest;
* the embedder (``embed``, and ``embed_query`` for a search's query: its tokens, and the model
  run unless the query's vector was kept), the pending enrichment row a write leaves
  (``MM_ENRICH_LATER``, as under ``serve``), the provenance event; in a search,
  reading the statement's rows into hits, the learned ranking's features and its re-ordering;
* each SQL statement, by kind: the client's CPU to send it and read its answer, and its wall
  time; on an idle machine, one statement at a time, wall minus client CPU is PostgreSQL's
  time (the statement's work and the round trip);
* the rest of the request (Django, DRF, the views' own Python): "framework and views".

CPU is the thread's (``time.thread_time``); one thread serves every request here, so nothing
else's CPU is in it. The served engine adds the HTTP server (uvicorn) and, under load, what
concurrency costs; ``load.py``'s CPU table shows both beside this one.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

REST = "framework and views"
AGAIN = "search asked again"
#: The enricher's work for a write, done after its answer (``memories.services.enrichment``).
ENRICHER = "the enricher, per write"


class Regions:
    """Exclusive CPU and wall seconds per named part, by the kind of request being served."""

    def __init__(self) -> None:
        self.op = ""
        self.stack: list[list[Any]] = []  # [name, cpu at entry or resume, wall at entry or resume]
        self.seconds: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0])

    def enter(self, name: str) -> None:
        cpu, wall = time.thread_time(), time.perf_counter()
        if self.stack:
            self._charge(self.stack[-1], cpu, wall)
        self.stack.append([name, cpu, wall])
        self.seconds[self.op, name][2] += 1

    def leave(self) -> None:
        cpu, wall = time.thread_time(), time.perf_counter()
        self._charge(self.stack.pop(), cpu, wall)
        if self.stack:
            self.stack[-1][1:] = [cpu, wall]

    def _charge(self, frame: list[Any], cpu: float, wall: float) -> None:
        spent = self.seconds[self.op, frame[0]]
        spent[0] += cpu - frame[1]
        spent[1] += wall - frame[2]

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        self.enter(name)
        try:
            yield
        finally:
            self.leave()

    def wrap(self, name: str, function: Callable) -> Callable:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.part(name):
                return function(*args, **kwargs)

        return timed

    def sql(self, execute: Callable, sql: str, params: Any, many: bool, context: Any) -> Any:
        with self.part("SQL " + statement_kind(sql)):
            return execute(sql, params, many, context)


def statement_kind(sql: str) -> str:
    """A short name for a statement: its verb and first table (the search statement by name)."""
    text = " ".join(sql.split())
    if text.startswith("WITH nearest"):
        return "search statement"
    verb = text.split(" ", 1)[0].upper()
    tables = re.findall(r'(?:FROM|INTO|UPDATE|JOIN)\s+"?(\w+)"?', text)
    if verb == "SELECT" and not tables:
        called = re.match(r"SELECT\s+(\w+)\s*\(", text)
        return f"SELECT {called.group(1)}()" if called else "SELECT (no table)"
    return f"{verb} {tables[0] if tables else ''}".strip()


def instrumented(regions: Regions) -> ExitStack:
    """The parts named in the module's docstring, timed while the stack is open."""
    import sys

    from django.db import connection
    from rest_framework import parsers, renderers

    import memories.embeddings
    import memories.search.learned
    import memories.search.ranking as ranking
    import memories.services.enrichment as enrichment
    import memories.services.storing  # noqa: F401 (the module, not the function of that name)

    storing = sys.modules["memories.services.storing"]
    stack = ExitStack()
    targets = [
        (parsers.JSONParser, "parse", "parsing"),
        (renderers.JSONRenderer, "render", "serialisation: JSON"),
        (memories.embeddings.LocalEmbedder, "embed", "embedding"),
        (memories.embeddings.LocalEmbedder, "embed_query", "embedding"),  # a search's query
        (storing, "recognise", "entities: recogniser"),  # a write enriched at once
        (storing, "leave_for_later", "enrichment: pending row"),
        (enrichment, "recognise", "enricher: recogniser"),
        (enrichment, "store_relations", "enricher: links"),
        (enrichment, "asymmetry_fill", "enricher: asymmetry score"),
        (storing, "record_many", "provenance event"),
        (memories.search.learned, "features", "learned ranking: features"),
        (ranking, "reranked", "learned ranking: re-ordering"),
        (ranking, "hit_from_row", "search: rows into hits"),
    ]
    for owner, attribute, name in targets:
        stack.enter_context(
            mock.patch.object(owner, attribute, regions.wrap(name, getattr(owner, attribute)))
        )
    stack.enter_context(connection.execute_wrapper(regions.sql))
    return stack


def measure(agent: Any, mix: dict[str, float], requests: int) -> dict[str, Any]:
    """``requests`` requests of ``mix`` (each kind's share) as ``agent`` (``load.Agent``: its
    tokens, bodies and what it has seen), after 30 unmeasured; each part's ms per request; then
    the measured searches asked again, their CPU beside the first time's (``asked_again``)."""
    from django.test import Client
    from django.test.utils import override_settings

    client = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=agent.headers["Authorization"])
    kinds, shares = list(mix), list(mix.values())
    regions = Regions()
    counts: dict[str, int] = defaultdict(int)
    asked: list[dict] = []
    # A write as ``serve``'s web process makes it: answered before its enrichment, which is
    # then timed apart (the enricher's share of a write, "enricher: …").
    with override_settings(MM_RATE_PER_MINUTE=0, MM_ENRICH_LATER=True), instrumented(regions):
        for n in range(30 + requests):
            op, url, body = agent.prepared(agent.rng.choices(kinds, shares)[0])
            if n == 30:
                regions.seconds.clear()
                counts.clear()
            regions.op = op
            counts[op] += 1
            with regions.part(REST):
                response = client.post(url, body, content_type="application/json")
            if response.status_code >= 300:
                answer = f"{response.status_code}: {response.content[:300]!r}"
                raise SystemExit(f"breakdown: {op} answered {answer}")
            agent.answered(op, response.json())
            if op == "remember":  # its enrichment, as the enricher would do it next
                from memories.services.enricher import enrich_pending

                regions.op = ENRICHER
                counts[ENRICHER] += 1
                with regions.part("enricher: the rest"):
                    enrich_pending()
            if op == "search" and n >= 30:
                asked.append(body)
        # The same searches asked again: each query's vector is kept (``VectorCache``).
        regions.op = AGAIN
        for body in asked:
            counts[AGAIN] += 1
            with regions.part(REST):
                response = client.post("/api/v1/search", body, content_type="application/json")
            if response.status_code >= 300:
                raise SystemExit(f"breakdown: a search asked again answered {response.status_code}")
    return {
        "counts": {op: counts[op] for op in mix},
        "mix": mix,
        "parts": summary(regions, counts, mix),
        "again": asked_again(regions, counts),
        "enricher": enricher_figures(regions, counts),
    }


def enricher_figures(regions: Regions, counts: dict[str, int]) -> dict[str, Any]:
    """The enricher's CPU ms per write, in all and by part (its SQL statements together)."""
    n = counts[ENRICHER] or 1
    parts: dict[str, float] = defaultdict(float)
    for (kind, name), (cpu, _, _) in regions.seconds.items():
        if kind == ENRICHER:
            parts["SQL" if name.startswith("SQL ") else name] += cpu * 1000 / n
    return {"writes": counts[ENRICHER], "cpu_ms": sum(parts.values()), "parts": dict(parts)}


def asked_again(regions: Regions, counts: dict[str, int]) -> dict[str, float]:
    """CPU ms per search, and its embedding's, the first time and when asked again."""
    figures: dict[str, float] = {"searches": counts[AGAIN]}
    for op, label in (("search", "first"), (AGAIN, "again")):
        n = counts[op] or 1
        spent = {name: cpu for (kind, name), (cpu, _, _) in regions.seconds.items() if kind == op}
        figures[f"{label}_cpu_ms"] = sum(spent.values()) * 1000 / n
        figures[f"{label}_embedding_ms"] = spent.get("embedding", 0.0) * 1000 / n
    return figures


def summary(
    regions: Regions, counts: dict[str, int], mix: dict[str, float]
) -> list[dict[str, Any]]:
    """A row a part: ms of CPU and wall per request of each kind, and per request of the mix."""
    names = sorted({name for _, name in regions.seconds})
    total = sum(mix.values())
    rows = []
    for name in names:
        row: dict[str, Any] = {"part": name, "cpu_ms": {}, "wall_ms": {}, "calls": {}}
        for op in mix:
            cpu, wall, calls = regions.seconds.get((op, name), (0.0, 0.0, 0))
            n = counts.get(op) or 1
            row["cpu_ms"][op], row["wall_ms"][op] = cpu * 1000 / n, wall * 1000 / n
            row["calls"][op] = calls / n
        for key in ("cpu_ms", "wall_ms"):
            row[key]["mix"] = sum(row[key][op] * w for op, w in mix.items()) / total
        rows.append(row)
    rows.sort(key=lambda row: -row["wall_ms"]["mix"])
    return rows


def table(result: dict[str, Any]) -> str:
    """The breakdown as printed: CPU (and, for SQL, PostgreSQL's share of the wall) per part."""
    header = (
        "| part | search CPU ms | remember CPU ms | feedback CPU ms | mix CPU ms | "
        "mix wall ms | mix wall − CPU ms (PostgreSQL, for SQL) |\n"
        "|---|---:|---:|---:|---:|---:|---:|"
    )
    lines = [header]
    totals = defaultdict(float)
    for row in result["parts"]:
        cpu, wall = row["cpu_ms"], row["wall_ms"]
        waited = wall["mix"] - cpu["mix"] if row["part"].startswith("SQL ") else None
        lines.append(
            f"| {row['part']} | {cpu['search']:.2f} | {cpu['remember']:.2f} | "
            f"{cpu['feedback']:.2f} | {cpu['mix']:.2f} | {wall['mix']:.2f} | "
            + (f"{waited:.2f} |" if waited is not None else "— |")
        )
        for key in ("search", "remember", "feedback", "mix"):
            totals[key] += cpu[key]
        totals["wall"] += wall["mix"]
        totals["waited"] += waited or 0.0
    lines.append(
        f"| **all** | {totals['search']:.2f} | {totals['remember']:.2f} | "
        f"{totals['feedback']:.2f} | {totals['mix']:.2f} | {totals['wall']:.2f} | "
        f"{totals['waited']:.2f} |"
    )
    return "\n".join(lines)
