"""Test helpers: named actors and API clients, built through the services."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.test import APIClient

from memories.models import Agent
from memories.services import agent_create


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
