"""Bulk writes: many memories in one call, embedded in batches, inserted in bulk, scored.

All or nothing on bad input: every item is validated first (``bulk_prepare``), and one bad item
refuses the whole batch with each problem named (``memories[3].text``), before anything is
embedded or stored. Then ``bulk_store`` stores, in one transaction per call (the API makes one
call per request; ``seed`` one per batch of its file), the items not stored already:

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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories.commands import Remember
from memories.embeddings import get_embedder
from memories.errors import MissingReference, NotFound, ValidationFailed
from memories.models import Agent, Memory
from memories.scorer import auto_scores
from memories.services.asymmetry import asymmetry_fill
from memories.services.episodes import Episode, episode_rows
from memories.services.provenance import record_many
from memories.services.relations import recognise, store_relations
from memories.services.remember import Placed, lock_workspace, place, resolve_attributions
from memories.services.supersede import supersede
from memories.signals import bulk_imported


@dataclass(frozen=True)
class BulkResult:
    index: int
    status: str  # "stored" or "existing"
    memory: Memory


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
    """Store validated items; ``first_index`` numbers the results and errors (a file imported in
    chunks)."""
    existing = _existing(agent, prepared)
    new = [i for i in range(len(prepared)) if i not in existing]
    # What depended on a superseded memory's state counts only for the items to store (a
    # retried item finds the memory it superseded already superseded: by itself).
    deferred = {
        f"memories[{first_index + i}].{field}": messages
        for i in new
        for field, messages in prepared[i].deferred.items()
    }
    if deferred:
        raise ValidationFailed(deferred)
    memories = _built(agent, [prepared[i] for i in new]) if new else []
    with transaction.atomic():
        lock_workspace(agent.workspace_id)
        # Another writer may have stored some of them while these were embedded.
        late = _existing(agent, [prepared[i] for i in new])
        keep = [
            (i, memory)
            for n, (i, memory) in enumerate(zip(new, memories, strict=True))
            if n not in late
        ]
        for n, found in late.items():
            existing[new[n]] = found
        stored = _insert(agent, [prepared[i] for i, _ in keep], [m for _, m in keep])
    by_index = {i: memory for (i, _), memory in zip(keep, stored, strict=True)}
    results = []
    for i in range(len(prepared)):
        if i in by_index:
            results.append(BulkResult(first_index + i, "stored", by_index[i]))
            continue
        found = existing[i]
        if isinstance(found, _Repeat):  # the memory stored (or found) for its first occurrence
            found = by_index.get(found.index) or existing[found.index]
        results.append(BulkResult(first_index + i, "existing", found))
    return results


def _existing(agent: Agent, prepared: list[Placed]) -> dict[int, Memory]:
    """The items already stored (by key, or by scope, source and text), and repeats within the
    list (the first occurrence counts), by position."""
    keys = {(p.scope.pk, p.command.idempotency_key) for p in prepared if p.command.idempotency_key}
    hashes = {p.content_hash for p in prepared if not p.command.idempotency_key}
    found_by_key: dict[tuple[int, str], Memory] = {}
    found_by_hash: dict[str, Memory] = {}
    queryset = Memory.objects.select_related("scope", "superseded_by").filter(
        workspace_id=agent.workspace_id
    )
    if keys:
        found_by_key = {
            (m.scope_id, m.idempotency_key): m
            for m in queryset.filter(
                scope_id__in={scope for scope, _ in keys},
                idempotency_key__in={key for _, key in keys},
            )
        }
    if hashes:
        for memory in queryset.filter(
            scope_id__in={p.scope.pk for p in prepared}, content_hash__in=hashes
        ).order_by("created_at", "id"):
            found_by_hash.setdefault(memory.content_hash, memory)
    existing: dict[int, Memory] = {}
    first_seen: dict[str, int] = {}
    for i, p in enumerate(prepared):
        identity = (
            f"key:{p.scope.pk}:{p.command.idempotency_key}"
            if p.command.idempotency_key
            else ("hash:" + p.content_hash)
        )
        found = (
            found_by_key.get((p.scope.pk, p.command.idempotency_key))
            if p.command.idempotency_key
            else found_by_hash.get(p.content_hash)
        )
        if found is not None:
            existing[i] = found
        elif identity in first_seen:
            existing[i] = _Repeat(first_seen[identity])
        else:
            first_seen[identity] = i
    return existing


class _Repeat:
    """Stands for "the memory stored for item ``index`` of this list" until it is stored."""

    def __init__(self, index: int) -> None:
        self.index = index


def _built(agent: Agent, prepared: list[Placed]) -> list[Memory]:
    """Unsaved memories with their episodes, vectors and scores (embedding happens here, outside
    any transaction)."""
    episodes = _episodes(agent, prepared)
    texts = [p.command.text for p in prepared]
    with_episode = [i for i, (episode, _) in enumerate(episodes) if episode.text]
    embedder = get_embedder()
    vectors = embedder.embed(
        texts + [episodes[i][0].text + "\n" + prepared[i].command.text for i in with_episode]
    )
    own, episode_vectors = vectors[: len(texts)], vectors[len(texts) :]
    episode_vector_of = dict(zip(with_episode, episode_vectors, strict=True))
    recognised = recognise(agent.workspace_id, texts)
    scores = auto_scores(
        texts,
        np.asarray(own),
        [p.command.category for p in prepared],
        [set(p.command.stare_scores) for p in prepared],
    )
    memories = []
    for i, p in enumerate(prepared):
        memory = p.build(
            episode=episodes[i][0],
            vector=own[i],
            episode_vector=episode_vector_of.get(i),
            model_name=embedder.model_name,
            recognised=recognised[i],
        )
        memory._recognised = recognised[i]
        for dim, value in scores[i].items():
            setattr(memory, f"{dim}_score", value)
            setattr(memory, f"{dim}_origin", Memory.ScoreOrigin.SCORER)
        memories.append(memory)
    for memory, (_, position) in zip(memories, episodes, strict=True):
        # The memory it follows, when that one is in the list too (its pk comes on insert).
        memory._follows_in_batch = None if position is None else memories[position]
    return memories


def _episodes(agent: Agent, prepared: list[Placed]) -> list[tuple[Episode, int | None]]:
    """Each item's episode: the memories before it in its session and scope, from the database
    and from the items before it in the list. The second value is the position of the item it
    follows when that item is in the list."""
    window = settings.MM_EPISODE_WINDOW
    history: dict[tuple[int, str], list[tuple[int | None, int | None, str]]] = {}
    result = []
    for i, p in enumerate(prepared):
        if not p.command.session or not window:
            result.append((Episode("", None), None))
            continue
        group = (p.scope.pk, p.command.session)
        if group not in history:
            rows = episode_rows(
                workspace_id=agent.workspace_id,
                scope_id=p.scope.pk,
                session=p.command.session,
                before=p.created_at,
            )
            history[group] = [(pk, None, text) for pk, text in rows]
        before = history[group][-window:]
        text = "\n".join(t for _, _, t in before)
        follows_pk, follows_item = (before[-1][0], before[-1][1]) if before else (None, None)
        result.append((Episode(text, follows_pk), follows_item))
        history[group].append((None, i, p.command.text))
    return result


def _insert(agent: Agent, prepared: list[Placed], memories: list[Memory]) -> list[Memory]:
    if not memories:
        return []
    resolve_attributions(
        list(zip(prepared, memories, strict=True)),
        [memory._recognised for memory in memories],
        agent=agent,
    )
    stored = Memory.objects.bulk_create(memories, batch_size=500)
    follows = []
    for memory in stored:
        previous = memory._follows_in_batch
        if previous is not None and previous.pk is not None:
            memory.follows_id = previous.pk
            follows.append(memory)
    if follows:
        Memory.objects.bulk_update(follows, ["follows"], batch_size=500)
    record_many([p.event(memory) for p, memory in zip(prepared, stored, strict=True)])
    store_relations(
        [
            p.relations(memory, memory._recognised)
            for p, memory in zip(prepared, stored, strict=True)
        ],
        agent=agent,
    )
    asymmetry_fill(stored)
    for p, memory in zip(prepared, stored, strict=True):
        if p.supersedes is not None:
            supersede(old=p.supersedes, new=memory, agent=agent)
    return stored
