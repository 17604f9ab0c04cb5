"""Remember: one memory placed (``memories.services.placing.place``) and stored through the one
storing function a batch uses too (``memories.services.storing.store``): embedded with its
episode, stored with its provenance, its relations, its A score and its supersession.

The command (``memories.commands.Remember``) comes checked by its input shape; ``place`` checks
what it asks of stored state; ``remember`` returns a ``RememberResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memories.commands import Remember
from memories.models import Agent, Memory
from memories.services.placing import place
from memories.services.storing import store


@dataclass(frozen=True)
class RememberResult:
    memory: Memory
    #: False when the ``idempotency_key`` was used already: nothing was written and
    #: ``memory`` is the one stored under it.
    created: bool


def remember(agent: Agent, command: Remember, *, now: datetime | None = None) -> RememberResult:
    """Store the memory ``command`` describes for ``agent``; with ``supersedes``, close the
    older memory's window.

    The new memory's ``valid_from`` defaults to now when it supersedes another; the older one's
    ``valid_until`` becomes that instant and its status ``superseded``. With an
    ``idempotency_key`` already used in the memory's scope, nothing is written and the memory
    stored under it is returned (``created`` is then false).
    """
    (result,) = store(agent, [place(agent, command, now=now)], batch=False)
    return RememberResult(result.memory, created=result.status == "stored")
