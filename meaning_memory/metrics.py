"""``/metrics``: the engine's measurements in Prometheus's text format.

- HTTP: requests by method, route (the URL pattern, never the raw path: a bounded set of
  series) and status, and their latencies (``mm_http_requests_total``,
  ``mm_http_request_seconds``);
- the core's own (``memories.metrics``): search and embedder latencies, texts embedded, MCP
  tool calls;
- the database pool of each web process (``mm_db_pool_*``, summed over the live processes);
- read from the database at each scrape: the background queue's depth and the jobs the worker
  recorded as failed or done (``mm_queue_depth``, ``mm_tasks_recorded``).

With several processes (``serve --web-workers N`` and the worker), ``serve`` points them all at
one directory (``PROMETHEUS_MULTIPROC_DIR``, under ``MM_DATA_DIR``, emptied at each start) and a
scrape adds their counts up; a process started alone counts its own.

Who may read it: with ``MM_METRICS_TOKEN`` set, a request that sends it as a bearer token;
without, only a request from this machine (loopback). Behind a reverse proxy on the same
machine every request looks local: set the token there.
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

from memories.metrics import LATENCY_BUCKETS

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
LOOPBACK = {"127.0.0.1", "::1"}

REQUESTS = Counter(
    "mm_http_requests", "HTTP requests answered, by method, route and status.",
    ["method", "route", "status"],
)  # fmt: skip
REQUEST_SECONDS = Histogram(
    "mm_http_request_seconds",
    "HTTP request latency, from the first middleware to the answer, by method and route.",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
POOL = {
    name: Gauge(f"mm_db_pool_{name}", help_text, multiprocess_mode="livesum")
    for name, help_text in (
        ("size", "Connections the database pools hold (each web process has one pool)."),
        ("available", "Connections idle in the pools."),
        ("waiting", "Requests waiting for a connection."),
    )
}


class RequestMetrics:
    """Django middleware (outermost): counts each request and times it, by its route."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = "/" + match.route if match is not None and match.route else "unmatched"
        REQUEST_SECONDS.labels(request.method, route).observe(time.perf_counter() - started)
        REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        _pool_gauges()
        return response


def _pool_gauges() -> None:
    """This process's pool, as the request leaves it (only a pool that exists: asking for
    ``connection.pool`` would make one)."""
    connection = connections["default"]
    pool = getattr(connection, "_connection_pools", {}).get(connection.alias)
    if pool is None:
        return
    stats = pool.get_stats()
    POOL["size"].set(stats.get("pool_size", 0))
    POOL["available"].set(stats.get("pool_available", 0))
    POOL["waiting"].set(stats.get("requests_waiting", 0))


class QueueCollector:
    """What the database says at each scrape: the queue's depth and the jobs recorded."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from django_q.models import OrmQ, Task

        queued = GaugeMetricFamily("mm_queue_depth", "Background jobs waiting for the worker.")
        queued.add_metric([], OrmQ.objects.count())
        yield queued
        recorded = GaugeMetricFamily(
            "mm_tasks_recorded",
            "Background jobs the worker recorded, by outcome (it keeps the last 250 of each "
            "job function: a count of recent ones, not a total since the start).",
            labels=["outcome"],
        )
        for outcome, success in (("failed", False), ("succeeded", True)):
            recorded.add_metric([outcome], Task.objects.filter(success=success).count())
        yield recorded


def allowed(request: HttpRequest) -> bool:
    token = settings.MM_METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())
    return request.META.get("REMOTE_ADDR", "") in LOOPBACK


def metrics(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        why = (
            "send MM_METRICS_TOKEN as a bearer token"
            if settings.MM_METRICS_TOKEN
            else "only from this machine (set MM_METRICS_TOKEN to read it from elsewhere)"
        )
        return HttpResponse(f"metrics: {why}\n", status=403, content_type="text/plain")
    registry = REGISTRY
    if os.environ.get(MULTIPROCESS_DIR):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    database = CollectorRegistry()
    database.register(QueueCollector())
    body = generate_latest(registry) + generate_latest(database)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
