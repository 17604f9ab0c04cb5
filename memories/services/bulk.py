"""Bulk writes: many memories in one call, embedded in batches, inserted in bulk, scored.

All or nothing on bad input: every item is validated first (``bulk_prepare``), and one bad item
refuses the whole batch with each problem named (``memories[3].text``), before anything is
embedded or stored. Then ``bulk_store`` stores them through the one storing function
(``memories.services.storing.store``, which a single write uses too), in one transaction per
call (the API makes one call per request; ``seed`` one per batch of its file), the items not
stored already:

* an item whose ``idempotency_key`` is already used in its scope is that memory (keys are per
  scope: a key used in a scope the writer cannot see is free for it, and nothing says it is
  used there);
* an item without a key whose scope, source and text are those of a stored memory (or of an
  earlier item of the batch) is that memory.

So a batch sent again stores nothing new. Each result says ``stored`` or ``existing``, with the
memory. A memory counts as stored whatever its status: seeding a forgotten memory again does
not bring it back. Writers serialise per workspace on a transaction-level advisory lock while
they check and insert, so two copies of a batch sent at once still store each memory once.

Scores: the writer's ``stare_scores`` are kept as given (origin ``writer``); the bundled scorer
(``memories.scorer``) fills the dimensions it is calibrated for that the writer left empty
(origin ``scorer``); the others stay empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.utils import timezone

from memories.commands import Remember
from memories.errors import MissingReference, NotFound, ValidationFailed
from memories.models import Agent
from memories.services.placing import Placed, place
from memories.services.storing import BulkResult, store
from memories.signals import bulk_imported


def bulk_prepare(
    *, agent: Agent, commands: Sequence[Remember], now: datetime | None = None
) -> list[Placed]:
    """Place every item (``services.remember.place``); raises one ValidationFailed naming each
    broken rule as ``memories[<index>].<field>``."""
    now = now or timezone.now()
    placed, errors, missing = [], {}, set()
    scopes: dict[str, Any] = {}
    superseded: dict[str, int] = {}
    for index, command in enumerate(commands):
        try:
            placed.append(place(agent, command, now=now, scopes=scopes))
        except ValidationFailed as exc:
            for field, messages in exc.errors.items():
                errors[f"memories[{index}].{field}"] = messages
                if isinstance(exc, MissingReference):
                    missing.add(f"memories[{index}].{field}")
            continue
        except NotFound as exc:
            raise NotFound(f"memories[{index}].attributed_to: {exc}") from exc
        target = command.supersedes
        if target and target in superseded:
            errors[f"memories[{index}].supersedes"] = [
                f"memory {target!r} is superseded by memories[{superseded[target]}] already."
            ]
        elif target:
            superseded[target] = index
    if errors:
        raise (MissingReference if set(errors) <= missing else ValidationFailed)(errors)
    return placed


def remember_many(
    *,
    agent: Agent,
    commands: Sequence[Remember],
    now: datetime | None = None,
    announce: bool = True,
) -> list[BulkResult]:
    """Place all, then store those not stored yet (see the module docstring), and announce
    what was stored (``announce_import``) unless ``announce`` is false."""
    results = bulk_store(
        agent=agent, prepared=bulk_prepare(agent=agent, commands=commands, now=now)
    )
    if announce:
        announce_import(agent.workspace_id, sum(1 for r in results if r.status == "stored"))
    return results


def announce_import(workspace_id: int, stored: int) -> None:
    """The one trigger after an import (the bulk API and tool, ``seed``, ``import``) stored
    memories: ``memories.signals.bulk_imported`` (consolidation queues a run)."""
    if stored:
        bulk_imported.send(sender=announce_import, workspace_id=workspace_id, stored=stored)


def bulk_store(
    *,
    agent: Agent,
    prepared: list[Placed],
    first_index: int = 0,
) -> list[BulkResult]:
    """Store validated items (``memories.services.storing.store``, as a batch: scored by the
    bundled scorer, each matched by its key or its content); ``first_index`` numbers the
    results and errors (a file imported in chunks)."""
    return store(agent, prepared, first_index=first_index, batch=True)
