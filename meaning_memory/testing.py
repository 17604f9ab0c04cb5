"""Test helpers: named actors and API clients, built through the services."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rest_framework.test import APIClient

from memories.models import Agent
from memories.services import agent_create


def database_url(name: str | None = None) -> str:
    """A ``DATABASE_URL`` for the database the tests use (or another ``name`` on the same
    server), for a subprocess of the engine: with the embedded server, its socket."""
    from django.db import connection

    params = connection.get_connection_params()
    host, port = params.get("host") or "", params.get("port") or ""
    user, password = params.get("user") or "", params.get("password") or ""
    credentials = user + (f":{quote(password, safe='')}" if password else "")
    query = f"?host={quote(host, safe='/')}" + (f"&port={port}" if port else "")
    return f"postgresql://{credentials}@/{name or connection.settings_dict['NAME']}{query}"


@contextmanager
def scratch_database(name: str, blocker: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """A database ``name`` of its own on the tests' server, made empty for a subprocess of the
    engine (``blocker``: pytest-django's ``django_db_blocker``) and dropped afterwards: its
    ``DATABASE_URL`` and psycopg's connection parameters."""
    import psycopg
    from django.db import connection

    with blocker.unblock():
        params = connection.get_connection_params()
        url = database_url(name)
    admin = {k: params[k] for k in ("host", "port", "user") if params.get(k)}

    def drop(create: bool) -> None:
        with psycopg.connect(**admin, dbname="postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            if create:
                conn.execute(f"CREATE DATABASE {name}")

    drop(create=True)
    try:
        yield url, {**admin, "dbname": name}
    finally:
        drop(create=False)


@dataclass
class Actor:
    agent: Agent
    token: str
    client: APIClient


def make_actor(workspace: str, name: str, scopes: list[str] | None = None) -> Actor:
    agent, token = agent_create(workspace_slug=workspace, name=name, shared_scopes=scopes)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return Actor(agent=agent, token=token, client=client)


def searched(actor: Actor, **body) -> list[dict]:
    """The results of a search as ``actor`` over HTTP (``POST /api/v1/search``), which must
    answer 200."""
    response = actor.client.post("/api/v1/search", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def mem_ids(hits: list[dict]) -> list[str]:
    """The ``mem_id`` of each hit, in order."""
    return [hit["mem_id"] for hit in hits]


def by_mem_id(hits: list[dict]) -> dict[str, dict]:
    return {hit["mem_id"]: hit for hit in hits}


def make_member(username: str, workspace, role: str = "curator", **flags):
    """A team member: a user with ``role`` in ``workspace`` (or in none when it is None)."""
    from django.contrib.auth import get_user_model

    from memories.models import Membership

    user = get_user_model().objects.create_user(username, password="pw", **flags)
    if workspace is not None:
        Membership.objects.create(user=user, workspace=workspace, role=role)
    return user


#: Where the evaluation data (LoCoMo, ProSeCCo, LIAR: nobody here wrote it) is looked for: a
#: ``shared/data`` folder beside the clone, or ``MM_EVALUATION_DATA``.
EVALUATION_DATA_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data"


def evaluation_data(*parts: str) -> Path:
    """The evaluation file ``parts`` (under ``MM_EVALUATION_DATA``, default ``../shared/data``
    beside the clone). When it is not there the test is skipped with a reason naming it and
    how to provide it, unless ``MM_REQUIRE_EVALUATION_DATA`` is set (``.ci/run`` sets it): then
    the test fails, so that CI never passes without the data."""
    import os

    import pytest

    root = Path(os.environ.get("MM_EVALUATION_DATA") or EVALUATION_DATA_DEFAULT)
    path = root.joinpath(*parts)
    if path.exists():
        return path
    why = (
        f"needs the evaluation file {path} (LoCoMo, ProSeCCo and LIAR: see the README's "
        "'Tests' section); put the data there or set MM_EVALUATION_DATA to its folder"
    )
    if os.environ.get("MM_REQUIRE_EVALUATION_DATA"):
        pytest.fail(why + " (MM_REQUIRE_EVALUATION_DATA is set)")
    pytest.skip(why)
