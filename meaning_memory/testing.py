"""Test helpers: named actors and API clients, built through the services."""

from __future__ import annotations

from dataclasses import dataclass
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


def make_member(username: str, workspace, role: str = "curator", **flags):
    """A team member: a user with ``role`` in ``workspace`` (or in none when it is None)."""
    from django.contrib.auth import get_user_model

    from memories.models import Membership

    user = get_user_model().objects.create_user(username, password="pw", **flags)
    if workspace is not None:
        Membership.objects.create(user=user, workspace=workspace, role=role)
    return user
