"""Graph-aware recall (``expand: "graph"``, off by default): a search's candidates re-ordered
by how closely links join them to the most relevant of them.

1. The ranking statement reads its candidates as usual and returns all of them, with their
   relevance (up to ``2 × MM_SEARCH_CANDIDATES``: the vector list and the keyword list).
2. One statement reads the links among them: the entities each candidate mentions, and the
   links between two candidates (the engine's ``supersedes`` too; not ``follows``, which the
   ranking's neighbour term already counts). Only candidates are nodes, so the walk never
   passes through a memory the reader may not see or the filters exclude.
3. A personalized PageRank over that graph (candidates and their entities, edges weighted by
   the links' weights, each node's out-edges normalised by its degree in the graph, so a hub
   such as a speaker's name spreads its share thinly): the walk restarts, with probability
   ``MM_GRAPH_RESTART``, at the ``MM_GRAPH_SEEDS`` most relevant candidates in proportion to
   their relevance. A candidate's activation is the share of the walks from the *other* seeds
   that reaches it (a seed's own walk returning to it says nothing about what joins it to the
   rest), divided by the largest among the candidates.
4. Relevance becomes ``relevance + MM_GRAPH_WEIGHT × activation``, mapped to [0, 1] over the
   candidates again, and the gate and the score of ``memories.search`` are applied to it.

Each hit's explanation shows its ``graph`` figures: the activation, the contribution, the
relevance before, and what joins it to the seeds (entities they share, links to them). The
expansion re-orders what the search read; it adds no memory the search did not read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np
from django.conf import settings

from memories.reading import reader
from memories.search.gate import gated, scored
from memories.search.hydration import SearchHit
from memories.search.recipe import Recipe

#: Entities and links named in a hit's explanation.
SHOWN_VIA = 3


def expanded(
    hits: list[SearchHit],
    *,
    limit: int,
    workspace_id: int,
    keep: int | None = None,
    recipe: Recipe | None = None,
) -> list[SearchHit]:
    """``hits`` (every candidate of one search, in the ranking's order) re-ordered by relevance
    with the graph's contribution, gated and scored as ``memories.search`` does for a search of
    ``limit``; the first ``keep`` (``limit`` unless given)."""
    if not hits:
        return []
    ids = [hit.memory.pk for hit in hits]
    position = {pk: index for index, pk in enumerate(ids)}
    entities, memory_edges, names = _edges(ids, workspace_id)
    for hit in hits:  # a supersession between two candidates is a link too
        replacement = hit.memory.superseded_by_id
        if replacement in position:
            memory_edges.append((hit.memory.pk, replacement, 1.0, "supersedes"))
    relevance = np.array([hit.relevance for hit in hits], dtype=np.float64)
    activation = _walk(ids, relevance, entities, memory_edges)
    weight = float(settings.MM_GRAPH_WEIGHT)
    boosted = relevance + weight * activation
    low, high = boosted.min(), boosted.max()
    relevant = (boosted - low) / (high - low) if high > low else np.ones_like(boosted)
    seeds = {int(index) for index in _seeds(relevance)}
    via = _via(hits, seeds, entities, memory_edges, names)
    rescored = [
        replace(
            hit,
            relevance=float(relevant[index]),
            score=scored(hit, float(relevant[index])),
            graph={
                "activation": round(float(activation[index]), 6),
                "contribution": round(weight * float(activation[index]), 6),
                "relevance_before": round(hit.relevance, 6),
                "seed": index in seeds,
                "via": via.get(index, []),
            },
        )
        for index, hit in enumerate(hits)
    ]
    return gated(rescored, limit, keep=keep, recipe=recipe)


def _edges(
    ids: list[int], workspace_id: int
) -> tuple[list[tuple[int, int, float]], list[tuple[int, int, float, str]], dict[str, str]]:
    """The candidates' mentions (memory, entity, weight), the links between two candidates
    (source, target, weight, type) and the mentioned entities' public ids and names."""
    with reader.cursor() as cursor:
        cursor.execute(
            """
            SELECT l.source_id, l.target_entity_id, l.target_memory_id, l.weight, l.kind,
                e.entity_id, e.name
            FROM memories_link l LEFT JOIN memories_entity e
                ON e.workspace_id = %(workspace)s AND e.id = l.target_entity_id
            WHERE l.source_id = ANY(%(ids)s) AND l.workspace_id = %(workspace)s
                AND l.removed_at IS NULL
                AND (l.target_entity_id IS NOT NULL OR l.target_memory_id = ANY(%(ids)s))
            """,
            {"ids": ids, "workspace": workspace_id},
        )
        rows = cursor.fetchall()
    entities, memories, names = [], [], {}
    for source, entity, target, weight, kind, entity_id, name in rows:
        if entity is not None:
            entities.append((source, entity, weight))
            names[entity] = (entity_id, name)
        else:
            memories.append((source, target, weight, kind))
    return entities, memories, names


def _seeds(relevance: np.ndarray) -> list[int]:
    """The positions of the ``MM_GRAPH_SEEDS`` most relevant candidates (ties: the ranking's
    order)."""
    return list(np.argsort(-relevance, kind="stable")[: int(settings.MM_GRAPH_SEEDS)])


def _walk(
    ids: list[int],
    relevance: np.ndarray,
    entities: list[tuple[int, int, float]],
    memory_edges: list[tuple[int, int, float, str]],
) -> np.ndarray:
    """Each candidate's activation (step 3 of the module docstring), in [0, 1]."""
    position = {pk: index for index, pk in enumerate(ids)}
    entity_position: dict[int, int] = {}
    for _, entity, _ in entities:
        entity_position.setdefault(entity, len(ids) + len(entity_position))
    size = len(ids) + len(entity_position)
    pairs = [(position[m], entity_position[e], w) for m, e, w in entities]
    pairs += [(position[a], position[b], w) for a, b, w, _ in memory_edges]
    seeds = _seeds(relevance)
    weights = relevance[seeds]
    if not pairs or weights.sum() <= 0:
        return np.zeros(len(ids))
    weights = weights / weights.sum()
    ends = np.array([(a, b) for a, b, _ in pairs], dtype=np.int64)
    # Every edge both ways: a node's walk moves to its neighbours in proportion to the weights.
    source = np.concatenate([ends[:, 0], ends[:, 1]])
    target = np.concatenate([ends[:, 1], ends[:, 0]])
    weight = np.tile(np.array([w for _, _, w in pairs], dtype=np.float64), 2)
    degree = np.bincount(source, weights=weight, minlength=size)
    share = np.divide(weight, degree[source], out=np.zeros_like(weight), where=degree[source] > 0)
    # The walk is linear in where it restarts: one column per seed, each the distribution of a
    # walk that restarts at that seed alone. Sums over the edges, not a dense solve: BLAS's
    # threads would contend with the database for the cores.
    alpha = float(settings.MM_GRAPH_RESTART)
    starts = np.zeros((size, len(seeds)))
    starts[seeds, np.arange(len(seeds))] = alpha
    walks = starts.copy()
    for _ in range(_iterations(alpha)):
        spread = np.zeros_like(walks)
        np.add.at(spread, target, share[:, None] * walks[source])
        walks = starts + (1 - alpha) * spread
    # What reaches a candidate from the other seeds: a seed's own walk, bounced back to it
    # through an entity only it mentions, is not evidence that anything else joins it.
    walks[seeds, np.arange(len(seeds))] = 0.0
    reached = np.clip((walks[: len(ids)] * weights).sum(axis=1), 0.0, None)
    top = reached.max()
    return reached / top if top > 0 else reached


def _iterations(alpha: float) -> int:
    """Steps until what the walk has not yet spread is under a millionth of it."""
    return int(np.ceil(np.log(1e-6) / np.log(1 - alpha))) if alpha < 1 else 1


def _via(
    hits: list[SearchHit],
    seeds: set[int],
    entities: list[tuple[int, int, float]],
    memory_edges: list[tuple[int, int, float, str]],
    names: dict[int, tuple[str, str]],
) -> dict[int, list[dict]]:
    """For each candidate, what joins it to a seed other than itself: the entities they both
    mention, then the links between them (at most ``SHOWN_VIA``)."""
    position = {hit.memory.pk: index for index, hit in enumerate(hits)}
    mentioned: dict[int, set[int]] = defaultdict(set)
    for source, entity, _ in entities:
        mentioned[position[source]].add(entity)
    by_seeds: dict[int, set[int]] = defaultdict(set)
    for seed in seeds:
        for entity in mentioned[seed]:
            by_seeds[entity].add(seed)
    via: dict[int, list[dict]] = defaultdict(list)
    for index, held in mentioned.items():
        for entity in sorted(held, key=lambda e: names[e][1]):
            if by_seeds[entity] - {index}:
                entity_id, name = names[entity]
                via[index].append({"entity_id": entity_id, "name": name})
    for source, target, _, kind in memory_edges:
        a, b = position[source], position[target]
        if b in seeds:
            via[a].append({"mem_id": hits[b].memory.mem_id, "link_type": kind})
        if a in seeds:
            via[b].append({"mem_id": hits[a].memory.mem_id, "link_type": kind})
    return {index: items[:SHOWN_VIA] for index, items in via.items()}
