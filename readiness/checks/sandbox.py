"""Where every check runs: a transaction that is always rolled back, and an agent in a
workspace of its own."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from django.db import transaction

from memories.services import agent_create

Result = tuple[float, dict[str, Any]]


class _Rollback(Exception):
    pass


def _sandboxed(run: Callable[[], Any]) -> Any:
    """Run in a transaction that is always rolled back; return what ``run`` returned."""
    outcome: list[Any] = []
    try:
        with transaction.atomic():
            outcome.append(run())
            raise _Rollback
    except _Rollback:
        pass
    return outcome[0]


def _agent():
    return agent_create(workspace_slug=f"readiness-{secrets.token_hex(4)}", name="checker")[0]
