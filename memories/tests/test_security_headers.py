"""Security headers on every answer (issue 16, finding 9), and templates without inline script
or style, so that the policy can forbid them."""

import re
from pathlib import Path

from django.test import override_settings

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_pages_and_the_api_carry_the_headers(client, alice):
    for response in (
        client.get("/accounts/login/"),
        alice.client.post("/api/v1/search", {"query": "x"}, format="json"),
        client.get("/api/v1/nothing"),
    ):
        policy = response["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "script-src 'self';" in policy
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Referrer-Policy"] == "same-origin"
        assert response["X-Frame-Options"] == "DENY"
        assert "camera=()" in response["Permissions-Policy"]


def test_pages_are_kept_from_other_windows(client, db):  # the login page reads the users
    assert client.get("/accounts/login/")["Cross-Origin-Opener-Policy"] == "same-origin"


def test_only_the_api_docs_may_run_inline_scripts(client):
    docs = client.get("/api/v1/schema/swagger/")
    assert "script-src 'self' 'unsafe-inline'" in docs["Content-Security-Policy"]


def test_the_session_cookie_is_http_only_and_secure_over_https(client, alice):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("carol", password="pw")
    plain = client.post("/accounts/login/", {"username": "carol", "password": "pw"})
    assert plain.cookies["sessionid"]["httponly"] and not plain.cookies["sessionid"]["secure"]
    with override_settings(SESSION_COOKIE_SECURE=True, CSRF_COOKIE_SECURE=True):
        secure = client.post("/accounts/login/", {"username": "carol", "password": "pw"})
    assert secure.cookies["sessionid"]["secure"]


def test_no_template_has_an_inline_script_style_or_handler():
    inline = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=|\son[a-z]+=", re.I)
    found = [
        f"{path.relative_to(TEMPLATES)}: {match.group(0)}"
        for path in TEMPLATES.rglob("*.html")
        for match in inline.finditer(path.read_text())
    ]
    assert found == []


def test_no_page_or_answer_is_kept_by_a_browser_or_proxy(client, alice):
    """A dashboard page, an admin page, an API answer (and an error): Cache-Control: no-store,
    so the back button after logging out, a shared proxy or a browser cache keeps no copy of a
    workspace's memories."""
    from django.contrib.auth import get_user_model

    from memories.models import Membership

    user = get_user_model().objects.create_user("dora", password="pw", is_staff=True)
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="curator")
    client.force_login(user)
    for response in (
        client.get("/"),
        client.get("/memories/"),
        client.get("/admin/"),
        client.get("/accounts/login/"),
        alice.client.post("/api/v1/search", {"query": "x"}, format="json"),
        alice.client.get("/api/v1/memories"),
        alice.client.get("/api/v1/nothing"),
    ):
        assert "no-store" in response["Cache-Control"].split(", "), response
