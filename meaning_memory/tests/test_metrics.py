"""/metrics: Prometheus's text format, what a scraper needs (requests by route and status,
search and embedder latencies, the queue, the database pool), only from this machine or with
its token, and added up across the processes ``serve`` starts."""

import uuid

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from meaning_memory.tests.served import call, served


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def scrape(client: Client, **headers) -> dict[tuple[str, tuple], float]:
    answer = client.get("/metrics", headers=headers)
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"].startswith("text/plain; version=")
    return samples(answer.content.decode())


SEARCHED = (
    "mm_http_requests_total",
    (("method", "POST"), ("route", "/api/v1/search"), ("status", "200")),
)
REFUSED = (
    "mm_http_requests_total",
    (("method", "POST"), ("route", "/api/v1/search"), ("status", "400")),
)


def test_a_scrape_counts_requests_by_route_and_times_searches_and_the_embedder(alice):
    client = Client()  # REMOTE_ADDR 127.0.0.1: this machine
    before = scrape(client)
    query = f"renewal {uuid.uuid4().hex}"  # asked by no other test: its vector is not kept
    for _ in range(3):
        assert (
            alice.client.post("/api/v1/search", {"query": query}, format="json").status_code == 200
        )
    assert alice.client.post("/api/v1/search", {"query": ""}, format="json").status_code == 400
    after = scrape(client)

    assert after[SEARCHED] - before.get(SEARCHED, 0) == 3
    assert after[REFUSED] - before.get(REFUSED, 0) == 1
    timed = ("mm_http_request_seconds_count", (("method", "POST"), ("route", "/api/v1/search")))
    assert after[timed] - before.get(timed, 0) == 4
    searches = ("mm_search_seconds_count", ())
    assert after[searches] - before.get(searches, 0) == 3
    # The query is embedded once; the two searches after it find its vector kept.
    embedded = ("mm_embedded_texts_total", (("embedder", "LocalEmbedder"),))
    assert after[embedded] - before.get(embedded, 0) == 1
    for outcome, count in (("embedded", 1), ("kept", 2)):
        key = ("mm_query_vectors_total", (("outcome", outcome),))
        assert after[key] - before.get(key, 0) == count
    assert ("mm_embed_seconds_bucket", (("embedder", "LocalEmbedder"), ("le", "+Inf"))) in after
    assert after[("mm_queue_depth", ())] >= 0
    assert ("mm_tasks_recorded", (("outcome", "failed"),)) in after
    for name in ("size", "available", "waiting"):
        assert (f"mm_db_pool_{name}", ()) in after
    # Routes are the URL's pattern, never the path a client sent.
    assert not any("renewal" in str(key) for key in after)


@pytest.mark.django_db
def test_only_this_machine_or_the_token_reads_it(settings):
    elsewhere = Client(REMOTE_ADDR="203.0.113.9")
    refused = elsewhere.get("/metrics")
    assert refused.status_code == 403 and b"only from this machine" in refused.content
    settings.MM_METRICS_TOKEN = "s3cret-scraper"
    assert Client().get("/metrics").status_code == 403  # with a token, even locally
    wrong = elsewhere.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403 and b"bearer token" in wrong.content
    assert scrape(elsewhere, Authorization="Bearer s3cret-scraper")


@pytest.mark.slow
def test_serve_adds_up_every_web_process(tmp_path):
    engine = served(tmp_path / "data")
    engine.start(180, "--web-workers", "2")
    try:
        for _ in range(20):
            assert call(engine.base + "/healthz").status == 200
        answer = call_text(engine.base + "/metrics")
    finally:
        engine.stop()
    found = samples(answer)
    health = (
        "mm_http_requests_total",
        (("method", "GET"), ("route", "/healthz"), ("status", "200")),
    )
    assert found[health] == 20
    assert (tmp_path / "data" / "metrics").is_dir()
    assert found[("mm_db_pool_size", ())] >= 0


def call_text(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=60) as response:
        assert response.status == 200
        return response.read().decode()
