"""The one storing function: a single write (``remember``) and a batch (``bulk_store``, the
bulk API and tool, ``seed``) store their placed items (``memories.services.placing``) here.

``store`` finds the items stored already, embeds the new ones with their episodes (outside any
transaction), recognises their names, and inserts them with their provenance, relations, A
scores and supersessions in one transaction. With ``MM_ENRICH_LATER`` the names are not read
here: the transaction leaves each memory's enrichment (relations, claimant, A score) to the
enricher (``memories.services.enricher``), and the write is answered once it is durable
and searchable. What differs between the two is said by
``batch``, and only this:

* a batch's items are matched by their idempotency key or, without one, by their scope, source
  and text (a batch sent again stores nothing new); a single write by its key only (the same
  note written twice is two memories);
* a batch holds the workspace's write lock while it checks and inserts (two copies sent at once
  store each memory once); a single write takes it only with a key, so single writes without
  keys never wait on each other;
* only a batch runs the bundled scorer (``memories.scorer``) on the dimensions the writer left
  empty (origin ``scorer``); a single write keeps exactly the scores it was given;
* a batch names a broken rule by its item (``memories[3].supersedes``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction

from memories.embeddings import get_embedder
from memories.errors import ValidationFailed
from memories.models import Agent, Memory
from memories.scorer import auto_scores
from memories.services.enrichment import attribute, leave_for_later, relate
from memories.services.episodes import Episode, episode_rows
from memories.services.placing import Placed, lock_workspace
from memories.services.provenance import record_many
from memories.services.relations import Recognised, recognise
from memories.services.supersede import supersede


@dataclass(frozen=True)
class BulkResult:
    index: int
    status: str  # "stored" or "existing"
    memory: Memory


def store(
    agent: Agent, prepared: list[Placed], *, first_index: int = 0, batch: bool = True
) -> list[BulkResult]:
    """Store the placed items not stored already (module docstring), a result each, in order:
    ``stored`` with the new memory or ``existing`` with the one found. ``first_index``
    numbers a batch's results and errors (a file imported in chunks)."""
    existing = _existing(agent, prepared, by_content=batch)
    new = [i for i in range(len(prepared)) if i not in existing]
    # What depended on a superseded memory's state counts only for the items to store (a
    # retried item finds the memory it superseded already superseded: by itself).
    deferred = {
        (f"memories[{first_index + i}].{field}" if batch else field): messages
        for i in new
        for field, messages in prepared[i].deferred.items()
    }
    if deferred:
        raise ValidationFailed(deferred)
    memories = _built(agent, [prepared[i] for i in new], scored=batch) if new else []
    with transaction.atomic():
        late: dict[int, Memory] = {}
        if batch or any(p.command.idempotency_key for p in prepared):
            lock_workspace(agent.workspace_id)
            # Another writer may have stored some of them while these were embedded.
            late = _existing(agent, [prepared[i] for i in new], by_content=batch)
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


def _existing(agent: Agent, prepared: list[Placed], *, by_content: bool) -> dict[int, Memory]:
    """The items already stored (by key, or with ``by_content`` by scope, source and text),
    and repeats within the list (the first occurrence counts), by position."""
    keys = {(p.scope.pk, p.command.idempotency_key) for p in prepared if p.command.idempotency_key}
    hashes = {p.content_hash for p in prepared if by_content and not p.command.idempotency_key}
    found_by_key: dict[tuple[int, str], Memory] = {}
    found_by_hash: dict[str, Memory] = {}
    queryset = Memory.objects.select_related("scope", "superseded_by").filter(
        workspace_id=agent.workspace_id
    )
    if keys:
        # Nearly every key is new: the keys' index alone answers, and a memory is read only
        # when one is found (no ordering, no join, a few columns: the statement is cheap to
        # build as well as to run, twice a keyed write).
        stored = queryset.filter(
            scope_id__in={scope for scope, _ in keys},
            idempotency_key__in={key for _, key in keys},
        )
        if pks := list(stored.order_by().values_list("pk", flat=True)):
            found_by_key = {(m.scope_id, m.idempotency_key): m for m in queryset.filter(pk__in=pks)}
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
            else ("hash:" + p.content_hash if by_content else f"item:{i}")
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


def _built(agent: Agent, prepared: list[Placed], *, scored: bool) -> list[Memory]:
    """Unsaved memories with their episodes, vectors, (``scored``) the bundled scorer's scores
    and, unless ``MM_ENRICH_LATER``, what their texts name (embedding and recognising happen
    here, outside any transaction)."""
    episodes = _episodes(agent, prepared)
    texts = [p.command.text for p in prepared]
    with_episode = [i for i, (episode, _) in enumerate(episodes) if episode.text]
    embedder = get_embedder()
    vectors = embedder.embed(
        texts + [episodes[i][0].text + "\n" + prepared[i].command.text for i in with_episode]
    )
    own, episode_vectors = vectors[: len(texts)], vectors[len(texts) :]
    episode_vector_of = dict(zip(with_episode, episode_vectors, strict=True))
    recognised = (
        [Recognised() for _ in texts]
        if settings.MM_ENRICH_LATER
        else recognise(agent.workspace_id, texts)
    )
    scores = (
        auto_scores(
            texts,
            np.asarray(own),
            [p.command.category for p in prepared],
            [set(p.command.stare_scores) for p in prepared],
        )
        if scored
        else [{} for _ in prepared]
    )
    memories = []
    for i, p in enumerate(prepared):
        memory = p.build(
            episode=episodes[i][0],
            vector=own[i],
            episode_vector=episode_vector_of.get(i),
            model_name=embedder.model_name,
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
    later = settings.MM_ENRICH_LATER
    understood = [p.understood(memory) for p, memory in zip(prepared, memories, strict=True)]
    for item in understood:
        item.recognised = item.memory._recognised
    if not later:
        attribute(understood, agent=agent)  # before the insert: no UPDATE of the new rows
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
    if later:
        leave_for_later(understood, agent=agent)
    else:
        relate(understood, agent=agent)
    for p, memory in zip(prepared, stored, strict=True):
        if p.supersedes is not None:
            supersede(old=p.supersedes, new=memory, agent=agent)
    return stored
