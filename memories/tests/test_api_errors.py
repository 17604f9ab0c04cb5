"""Every answer under /api/ is JSON (issue 16, finding 4): an unknown path, a body over the size
limit and Django's own error pages answered with HTML."""

import json

from django.conf import settings
from django.http import HttpResponse, HttpResponseServerError
from django.test import RequestFactory

from meaning_memory.middleware import ApiErrorsAsJson
from memories.models import Memory


def test_an_unknown_path_under_the_api_is_a_json_404(alice):
    response = alice.client.get("/api/v1/nothing-here")
    page = alice.client.get("/nothing-here")

    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not Found."}
    assert page.status_code == 404 and "application/json" not in page["Content-Type"]


def test_a_wrong_method_is_a_json_405_with_allow(alice):
    response = alice.client.delete("/api/v1/memories")
    assert response.status_code == 405 and "detail" in response.json()
    assert "GET" in response["Allow"] and "POST" in response["Allow"]


def test_a_body_over_the_limit_is_a_json_413_naming_it(alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    body = {"memories": [{"text": "x" * 3_000} for _ in range(5)]}

    response = alice.client.post("/api/v1/memories/bulk", body, format="json")

    assert response.status_code == 413
    assert response.json() == {
        "detail": "the body is larger than 10,000 bytes (MM_MAX_BODY_BYTES); "
        "send fewer memories per bulk request."
    }
    assert not Memory.objects.exists()


def test_the_default_limit_holds_a_full_bulk_of_long_texts():
    """A bulk of MM_BULK_MAX_ITEMS memories of MM_MAX_TEXT_CHARS characters each fits: the body
    limit follows the bulk limits (it used to be Django's 2.5 MB)."""
    item = {"text": "x" * settings.MM_MAX_TEXT_CHARS, "metadata": {"source_row": 123456}}
    body = json.dumps({"memories": [item] * settings.MM_BULK_MAX_ITEMS})
    assert len(body.encode()) <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE == settings.MM_MAX_BODY_BYTES


def test_an_html_error_page_under_the_api_becomes_json():
    request = RequestFactory().get("/api/v1/search")
    crashed = ApiErrorsAsJson(lambda r: HttpResponseServerError("<h1>Server Error</h1>"))(request)
    page = RequestFactory().get("/w/acme/")
    untouched = ApiErrorsAsJson(lambda r: HttpResponseServerError("<h1>x</h1>"))(page)
    fine = ApiErrorsAsJson(lambda r: HttpResponse("ok"))(request)

    assert crashed.status_code == 500
    assert json.loads(crashed.content) == {"detail": "Internal Server Error."}
    assert untouched.content == b"<h1>x</h1>" and fine.content == b"ok"
