"""The compiled file's sections: one per category (the default), or one per entity
(``group_by="entity"``: a customer, a person, a product) with each line's date.

A memory that mentions several entities is filed once, under the one the workspace mentions
most (then the lower entity id), so that its line costs the budget once; a memory that mentions
none goes under "Other", the last section. Entity sections come in the order of their first
line, so the section of the file's most important memory comes first; a merged entity's
mentions are filed under the entity it was merged into.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memories.compile.options import CompileOptions
from memories.compile.render import SECTIONS
from memories.models import Entity, Link
from memories.reading import reader as database

#: The section of the memories that mention no entity (``group_by="entity"``).
OTHER = "other"
OTHER_HEADING = "Other"
_ENTITY = "entity:"
_CATEGORY_HEADINGS = dict(SECTIONS)


def category_group(category: str) -> str:
    return category


def heading_of(group: str) -> str:
    """A section's heading: a category's, an entity's name and type, or "Other"."""
    if group.startswith(_ENTITY):
        return group.split(":", 2)[2]
    if group == OTHER:
        return OTHER_HEADING
    return _CATEGORY_HEADINGS[group]


def sections_of(lines: Iterable[Any], options: CompileOptions) -> list[str]:
    """The sections that have lines, in the file's order."""
    present = list(dict.fromkeys(line.group for line in lines))
    if options.group_by != "entity":
        return [category for category, _ in SECTIONS if category in present]
    return [g for g in present if g != OTHER] + ([OTHER] if OTHER in present else [])


def entity_groups(workspace_id: int, ids: list[int]) -> dict[int, str]:
    """The section of each of these memories that mentions an entity (a link to it)."""
    links, entities = Link._meta.db_table, Entity._meta.db_table
    with database.cursor() as cursor:
        cursor.execute(
            f"""
            WITH mentions AS (
                SELECT l.source_id, COALESCE(e.merged_into_id, e.id) AS entity
                FROM {links} l
                JOIN {entities} e ON e.id = l.target_entity_id AND e.workspace_id = %(workspace)s
                WHERE l.workspace_id = %(workspace)s AND l.source_id = ANY(%(ids)s)
                    AND l.removed_at IS NULL
            ),
            named AS (
                SELECT t.id, t.entity_id, t.name, t.kind,
                    (SELECT count(*) FROM {links} k
                     WHERE k.workspace_id = %(workspace)s AND k.target_entity_id = t.id
                        AND k.removed_at IS NULL) AS mentioned
                FROM {entities} t
                WHERE t.workspace_id = %(workspace)s AND t.id IN (SELECT entity FROM mentions)
            )
            SELECT DISTINCT ON (m.source_id) m.source_id, n.entity_id, n.name, n.kind
            FROM mentions m JOIN named n ON n.id = m.entity
            ORDER BY m.source_id, n.mentioned DESC, n.entity_id
            """,
            {"workspace": workspace_id, "ids": ids},
        )
        return {
            pk: f"{_ENTITY}{entity_id}:{' '.join(name.split())} ({kind})"
            for pk, entity_id, name, kind in cursor.fetchall()
        }
