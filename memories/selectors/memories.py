"""Memories by id as a reader sees them (an agent its scopes, a team member the whole
workspace), with their history and supersession chain, and browsed by the list's filters."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import BooleanField, Exists, OuterRef, QuerySet
from django.db.models.expressions import RawSQL

from memories import metadata_filter
from memories.commands import COLUMN_FILTERS
from memories.errors import NotFound
from memories.models import (
    STARE_DIMENSIONS,
    Link,
    Memory,
    MemoryEnrichment,
    ProvenanceEvent,
)
from memories.reading import reader as database
from memories.selectors.paging import page_with_more
from memories.selectors.reader import Reader
from memories.selectors.relations import attach_references, entities_named, entity_members
from memories.temporal.validity import ended_by_q, valid_at_q

MEM_ID = re.compile(r"[0-9a-f]{16}")
#: How many replacements (and replaced memories) the chain of a memory shows each way.
CHAIN_MAX = 20


def is_mem_id(value: object) -> bool:
    """The shape of a ``mem_id`` (16 lowercase hex characters): anything else names nothing,
    and is refused before it reaches the database (a NUL character would be an error there)."""
    return isinstance(value, str) and MEM_ID.fullmatch(value) is not None


def memory_get(reader: Reader, mem_id: str, *, for_update: bool = False) -> Memory:
    """One memory ``reader`` may see. Anything else — another workspace's, another agent's
    private one, or an id that does not exist — is the same NotFound."""
    if not is_mem_id(mem_id):
        raise NotFound(f"no memory {mem_id!r}")
    queryset = reader.sees(Memory.objects.filter(mem_id=mem_id))
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    memory = queryset.select_related("scope", "superseded_by").first()
    if memory is None:
        raise NotFound(f"no memory {mem_id!r}")
    return memory


def memory_history(memory: Memory) -> QuerySet[ProvenanceEvent]:
    """The memory's provenance, oldest first, with who acted."""
    return memory.provenance.select_related("agent", "user").order_by("created_at", "id")


_CHAIN_SQL = f"""
    WITH RECURSIVE newer(id, step) AS (
        SELECT superseded_by_id, 1 FROM {Memory._meta.db_table}
        WHERE workspace_id = %(workspace)s AND id = %(id)s AND superseded_by_id IS NOT NULL
        UNION ALL
        SELECT m.superseded_by_id, n.step + 1 FROM newer n
        JOIN {Memory._meta.db_table} m ON m.workspace_id = %(workspace)s AND m.id = n.id
        WHERE m.superseded_by_id IS NOT NULL AND n.step < %(max)s
    ),
    older(id, step) AS (
        SELECT id, 1 FROM {Memory._meta.db_table}
        WHERE workspace_id = %(workspace)s AND superseded_by_id = %(id)s
        UNION ALL
        SELECT m.id, o.step + 1 FROM older o
        JOIN {Memory._meta.db_table} m
            ON m.workspace_id = %(workspace)s AND m.superseded_by_id = o.id
        WHERE o.step < %(max)s
    )
    SELECT id, step FROM newer UNION ALL SELECT id, -step FROM older
"""


def supersession_chain(memory: Memory) -> tuple[list[Memory], list[Memory]]:
    """The memories that replaced this one (newest last) and those it replaced (oldest last),
    at most ``CHAIN_MAX`` each way, in one query for the chain and one for its memories."""
    with database.cursor() as cursor:
        cursor.execute(
            _CHAIN_SQL, {"workspace": memory.workspace_id, "id": memory.pk, "max": CHAIN_MAX}
        )
        steps = dict(cursor.fetchall())
    loaded = (
        Memory.objects.filter(workspace_id=memory.workspace_id)
        .only("mem_id", "text", "superseded_by")
        .in_bulk(list(steps))
    )
    ordered = sorted(steps, key=lambda pk: abs(steps[pk]))
    newer = [loaded[pk] for pk in ordered if steps[pk] > 0]
    older = [loaded[pk] for pk in ordered if steps[pk] < 0]
    return newer, older


def memory_texts(reader: Reader, mem_ids: list[str]) -> dict[str, str]:
    """The text of each of ``mem_ids`` ``reader`` sees, by mem_id."""
    return dict(
        reader.sees(Memory.objects.filter(mem_id__in=mem_ids)).values_list("mem_id", "text")
    )


def metadata_filtered(queryset: QuerySet[Memory], found: metadata_filter.Filter) -> QuerySet:
    """``queryset`` narrowed to the memories whose metadata matches ``found``."""
    table = connection.ops.quote_name(Memory._meta.db_table)
    condition, params = metadata_filter.positional(found, f"{table}.metadata")
    return queryset.filter(RawSQL(condition, params, output_field=BooleanField()))


#: How a list of memories may be ordered (``memory_list``), each ending on the primary key so
#: that the order is total (a cursor needs one).
LIST_ORDERINGS = {
    "newest": ("-created_at", "-id"),
    "significance": ("-significance", "-created_at", "-id"),
}


def memory_list(reader: Reader, values: dict[str, Any], now: datetime) -> QuerySet[Memory]:
    """The memories ``reader`` sees, browsed without a query: the search's filters that need none,
    read by name from ``values`` (the validated ``MemoryListInput``), ordered by ``ordering``.
    Forgotten and merged memories are never listed; without ``as_of`` or ``currently_valid``,
    what is valid now.
    """
    values = dict(values)
    queryset = reader.sees(
        Memory.objects.filter(status__in=[Memory.Status.ACTIVE, Memory.Status.SUPERSEDED])
    )
    as_of = values.pop("as_of", None)
    currently_valid = values.pop("currently_valid", None)
    if as_of is None and currently_valid is None:
        currently_valid = True
    if as_of is not None:
        queryset = queryset.filter(valid_at_q(as_of))
    if currently_valid is not None:
        queryset = queryset.filter(valid_at_q(now) if currently_valid else ended_by_q(now))
    if (start := values.pop("written_from", None)) is not None:
        queryset = queryset.filter(created_at__gte=start)
    if (end := values.pop("written_until", None)) is not None:
        queryset = queryset.filter(created_at__lt=end)
    for column in COLUMN_FILTERS:
        if value := values.pop(column, None):
            queryset = queryset.filter(**{column: value})
    if (found := values.pop("metadata", None)) is not None:
        queryset = metadata_filtered(queryset, found)
    for dim in STARE_DIMENSIONS:
        minimum = values.pop(f"min_{dim}_score", None)
        if minimum is not None:
            queryset = queryset.filter(**{f"{dim}_score__gte": minimum})
    for name, lookup in (("entity", "mentioned"), ("attributed_to", "attributed")):
        reference = values.pop(name, None)
        if not reference:
            continue
        entities = entities_named(name, reference, reader)
        members = [pk for entity in entities for pk in entity_members(entity)]
        if lookup == "attributed":
            queryset = queryset.filter(attributed_to__in=members)
        else:
            mentions = Link.objects.filter(
                workspace_id=reader.workspace_id,
                source=OuterRef("pk"),
                target_entity__in=members,
                removed_at__isnull=True,
            )
            queryset = queryset.filter(Exists(mentions))
    ordering = values.pop("ordering", None) or "newest"
    for paging in ("limit", "cursor", "page", "page_size"):  # the caller's to use
        values.pop(paging, None)
    if values:
        raise TypeError(f"unknown list filters: {', '.join(sorted(values))}")
    # What superseded each (and who made its claim) is read for a page by ``attach_references``,
    # within the workspace, not joined on the id alone.
    return queryset.select_related("scope").order_by(*LIST_ORDERINGS[ordering])


def memory_list_page(
    reader: Reader, values: dict[str, Any], now: datetime
) -> tuple[list[Memory], dict[str, Any]]:
    """One page (``values``' ``page`` and ``page_size``) of ``memory_list`` as ``reader`` sees
    it, with what its rows name attached, and where it stands (``page_with_more``): the MCP
    tool's and the command's (the REST API pages by cursor)."""
    memories = memory_list(reader, values, now)
    rows, page = page_with_more(memories, values)
    attach_references(rows)
    return rows, page


def enrichment_state(memory: Memory) -> str:
    """``done``, ``pending`` (its enrichment is still to come: ``memories.services.enrichment``)
    or ``failed`` (given up on, until a curator retries it)."""
    state = (
        MemoryEnrichment.objects.filter(workspace_id=memory.workspace_id, memory_id=memory.pk)
        .values_list("state", flat=True)
        .first()
    )
    return state or "done"
