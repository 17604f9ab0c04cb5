"""What the tests that send requests through the API's OpenAPI schema share (schemathesis, in
process): the app that answers them, and the checks every answer is held to, against the schema
the engine serves with each success answer's objects closed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import schemathesis
from django.db import transaction
from django.test import Client
from schemathesis.checks import response_schema_conformance, status_code_conformance

SCHEMA_PATH = "/api/v1/schema/"


class InProcessApp:
    """A WSGI application that hands each request to Django's test client, in a savepoint of
    the test's transaction (rolled back after a server error: as in production, a request that
    fails in the database does not spoil the next one). The answer to a request that raised is
    the 500 a client would get; the exception is kept for ``raise_exception``."""

    def __init__(self) -> None:
        self.client = Client(raise_request_exception=False)
        self.exception: BaseException | None = None

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        with transaction.atomic():
            response = self.client.request(**environ)
            if response.status_code >= 500:
                transaction.set_rollback(True)
        self.exception = response.exc_info[1] if response.exc_info else None
        start_response(f"{response.status_code} {response.reason_phrase}", list(response.items()))
        return [response.getvalue()]

    def raise_exception(self, case: schemathesis.Case) -> None:
        """Raise what the view raised for ``case``, if it did, with its traceback."""
        if self.exception is not None:
            exception, self.exception = self.exception, None
            exception.add_note(f"Request (with the agent's token): {case.as_curl_command()}")
            raise exception


#: What the answers are held to, whether the case is positive or negative: the statuses the
#: schema lists, and the shape it declares.
ANSWER_CHECKS = (status_code_conformance, response_schema_conformance)


def answers_closed(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each object a success answer holds closed: a field the shape does not
    name fails the conformance check. (The schema the engine serves leaves them open, so that
    a field added later does not break a client that validates what it reads.)"""
    components = schema["components"]["schemas"]
    seen: set[str] = set()

    def close(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                close(item)
            return
        if not isinstance(node, dict):
            return
        ref = node.get("$ref", "")
        if ref.startswith("#/components/schemas/"):
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                seen.add(name)
                close(components[name])
            return
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            close(value)

    for methods in schema["paths"].values():
        for operation in methods.values():
            for status, response in operation.get("responses", {}).items():
                if status.startswith("2"):
                    close(response.get("content", {}))
    return schema


def served_schema() -> dict[str, Any]:
    """The schema the engine serves, its success answers closed (``answers_closed``)."""
    return answers_closed(Client().get(SCHEMA_PATH, headers={"Accept": "application/json"}).json())
