from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from memories.models import Agent
from memories.services import agent_authenticate


class AgentTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>`` with an agent's API token."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Agent, str] | None:
        header = authentication.get_authorization_header(request).decode(errors="replace")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != self.keyword.lower() or not token.strip():
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <token>'.")
        agent = agent_authenticate(token.strip())
        if agent is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return agent, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class IsAgent(permissions.BasePermission):
    def has_permission(self, request: Request, view: object) -> bool:
        return isinstance(request.user, Agent)


class AgentTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes the token (``Authorization: Bearer <token>``)."""

    target_class = AgentTokenAuthentication
    name = "agentToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An agent's API token."}
