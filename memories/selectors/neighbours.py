"""The k nearest active neighbours of a batch of memories: one statement that dedupe, the
relates links and the divergence scan each narrow with their own conditions."""

from __future__ import annotations

from typing import Any

from django.db import connection
from psycopg.types.numeric import Int8

#: A pair's condition (``m``, ``o``): the two memories mention an entity in common.
SHARE_AN_ENTITY_SQL = """EXISTS (
    SELECT 1 FROM memories_link a
    JOIN memories_link b
        ON b.workspace_id = %(workspace)s AND b.target_entity_id = a.target_entity_id
    WHERE a.workspace_id = %(workspace)s AND a.source_id = m.id AND b.source_id = o.id
        AND a.removed_at IS NULL AND b.removed_at IS NULL
)"""


def nearest_pairs(
    workspace_id: int,
    batch: list[int],
    *,
    neighbours: int,
    min_similarity: float,
    same_scope: bool = False,
    neighbour_where: str = "",
    pair_where: str = "",
    columns: str = "",
    params: dict[str, Any] | None = None,
) -> list[tuple]:
    """Rows ``(memory id, neighbour id, similarity, *columns)``: for each memory of ``batch``,
    its ``neighbours`` nearest active memories embedded by the same model (in its scope with
    ``same_scope``) whose cosine similarity is at least ``min_similarity``.

    ``neighbour_where`` narrows the neighbours (SQL on ``n``, before the nearest are taken);
    ``pair_where`` narrows the pairs (SQL on ``m``, the batch's memory, and ``o``, its
    neighbour: ``o.session`` and ``o.source`` are there); ``columns`` adds SELECT columns;
    ``params`` are their named parameters, and ``%(workspace)s`` is the workspace's id: each
    table a condition reads names it (spread over machines by workspace, a statement is sent
    whole to the one that holds the workspace only if every table it reads says which). In the
    neighbours' scan the workspace is a constant in the text: a large workspace's partial HNSW
    index serves the scan only if its predicate is proved from one (``memories.indexing``)."""
    scope = " AND n.scope_id = m.scope_id" if same_scope else ""
    sql = f"""
        SELECT m.id, o.id, o.similarity{", " + columns if columns else ""}
        FROM memories_memory m
        CROSS JOIN LATERAL (
            SELECT n.id, n.session, n.source, 1 - (n.embedding <=> m.embedding) AS similarity
            FROM memories_memory n
            WHERE n.workspace_id = {int(workspace_id)} AND n.status = 'active'
                AND n.embedding IS NOT NULL AND n.embedding_model = m.embedding_model
                AND n.id <> m.id{scope}{" AND " + neighbour_where if neighbour_where else ""}
            ORDER BY n.embedding <=> m.embedding
            LIMIT {int(neighbours)}
        ) AS o
        WHERE m.workspace_id = {int(workspace_id)} AND m.id = ANY(%(batch)s)
            AND o.similarity >= %(min_similarity)s
            {"AND " + pair_where if pair_where else ""}
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                **(params or {}),
                "workspace": int(workspace_id),
                "batch": [Int8(i) for i in batch],
                "min_similarity": float(min_similarity),
            },
        )
        return cursor.fetchall()
