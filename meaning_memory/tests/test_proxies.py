"""Whose address a request comes from (issue 37, finding 7): ``X-Forwarded-For`` counts only
from a proxy in ``MM_TRUSTED_PROXIES`` (none by default), so a client cannot name another
address to slip past the login brake, nor make ``/metrics`` refuse a local scraper."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest
from django.test import override_settings

from meaning_memory.proxies import client_addresses
from meaning_memory.tests.served import served

LOCKED = "Too many failed logins"


@pytest.mark.slow
def test_a_forwarded_for_header_neither_passes_the_login_brake_nor_closes_metrics(tmp_path):
    engine = served(
        tmp_path / "data", MM_LOGIN_MAX_FAILURES="2", DJANGO_SUPERUSER_PASSWORD="right-pw-1"
    )
    engine.start(180, "--no-worker")
    try:
        engine.command(
            "createsuperuser", "--noinput", "--username", "carol", "--email", "c@example.com"
        )
        with httpx.Client(base_url=engine.base, timeout=60) as web:

            def login(username: str, password: str, **headers: str) -> httpx.Response:
                page = web.get("/accounts/login/")
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
                return web.post(
                    "/accounts/login/",
                    data={
                        "username": username,
                        "password": password,
                        "csrfmiddlewaretoken": token.group(1),
                    },
                    headers=headers,
                )

            for n in range(2):  # this address is now locked out
                assert LOCKED not in login(f"guess{n}", "wrong").text
            spoofed = login("carol", "right-pw-1", **{"X-Forwarded-For": "9.9.9.9"})
            scrape = web.get("/metrics", headers={"X-Forwarded-For": "9.9.9.9"})
    finally:
        output = engine.stop()

    assert spoofed.status_code == 200 and LOCKED in spoofed.text, output[-2000:]
    assert scrape.status_code == 200 and "mm_http_requests_total" in scrape.text


def _client_seen(scope_client: tuple[str, int], headers: list[tuple[bytes, bytes]]) -> str:
    seen = {}

    async def app(scope, receive, send):
        seen["client"] = scope["client"][0]

    scope = {"type": "http", "client": scope_client, "headers": headers, "scheme": "http"}
    asyncio.run(client_addresses(app)(scope, None, None))
    return seen["client"]


FORWARDED = [(b"x-forwarded-for", b"203.0.113.9")]


def test_no_proxy_is_trusted_by_default():
    assert _client_seen(("127.0.0.1", 5000), FORWARDED) == "127.0.0.1"


@override_settings(MM_TRUSTED_PROXIES=["10.0.0.0/8"])
def test_a_trusted_proxy_names_the_client_and_no_one_else_does():
    assert _client_seen(("10.1.2.3", 5000), FORWARDED) == "203.0.113.9"
    assert _client_seen(("127.0.0.1", 5000), FORWARDED) == "127.0.0.1"
    assert _client_seen(("198.51.100.1", 5000), FORWARDED) == "198.51.100.1"
