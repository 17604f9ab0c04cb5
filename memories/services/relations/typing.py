"""The recogniser's type of an entity is the one most of its mentions agree on.

The model labels each name it finds (``memories.relational.extraction.LABEL_TYPES``: PERSON a
person, ORG an organisation...), and its label for one name can change from text to text
("Maria" a person here, an organisation there). An entity whose type is the recogniser's
(``Entity.TypedBy.EXTRACTION``) takes the type most of the model's mentions of it agree on,
counted over every mention (those of entities merged into it too); on a tie it keeps the one it
has. A type a curator, the team, a writer or a conversation's speaker gave is never changed
here. Consolidation's ``link`` phase counts again the entities that memories written since its
last run mention.
"""

from __future__ import annotations

from collections import Counter

from django.db import connection

from memories.models import Entity
from memories.relational.extraction import LABEL_TYPES
from memories.services.relations import namesakes


def retype_by_mentions(workspace_id: int, since_id: int = 0, *, dry_run: bool = False) -> int:
    """Give each entity the recogniser typed, mentioned by a memory with a primary key above
    ``since_id``, the type most of its model mentions agree on; returns how many changed
    (``dry_run``: how many would)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH touched AS (
                SELECT DISTINCT COALESCE(m.merged_into_id, m.id) AS id
                FROM memories_link l
                JOIN memories_entity m
                    ON m.workspace_id = l.workspace_id AND m.id = l.target_entity_id
                WHERE l.workspace_id = %(workspace)s AND l.source_id > %(since)s
                    AND l.removed_at IS NULL AND l.origin = 'extraction'
            )
            SELECT e.id, e.kind, l.evidence->>'label', count(*)
            FROM touched t
            JOIN memories_entity e ON e.workspace_id = %(workspace)s AND e.id = t.id
            JOIN memories_entity m ON COALESCE(m.merged_into_id, m.id) = e.id
                AND m.workspace_id = %(workspace)s
            JOIN memories_link l ON l.target_entity_id = m.id AND l.workspace_id = %(workspace)s
            WHERE e.typed_by = 'extraction' AND e.merged_into_id IS NULL
                AND l.origin = 'extraction' AND l.removed_at IS NULL AND l.evidence ? 'label'
            GROUP BY 1, 2, 3
            """,
            {"workspace": workspace_id, "since": since_id},
        )
        rows = cursor.fetchall()
    votes: dict[int, Counter] = {}
    current: dict[int, str] = {}
    for pk, kind, label, count in rows:
        current[pk] = kind
        if label in LABEL_TYPES:
            votes.setdefault(pk, Counter())[LABEL_TYPES[label]] += count
    changed: dict[int, str] = {}
    for pk, counted in votes.items():
        most = max(counted.values())
        if counted.get(current[pk], 0) < most:
            changed[pk] = min(kind for kind, n in counted.items() if n == most)
    # Never the type of a namesake: two entities would be one name and type.
    for pk in namesakes.collisions(workspace_id, changed):
        del changed[pk]
    if changed and not dry_run:
        for kind in set(changed.values()):
            Entity.objects.filter(
                workspace_id=workspace_id,
                pk__in=[pk for pk, k in changed.items() if k == kind],
                typed_by=Entity.TypedBy.EXTRACTION,
            ).update(kind=kind)
    return len(changed)
