"""A search's filters as the WHERE fragments of the ranking statement."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memories import metadata_filter
from memories.commands import COLUMN_FILTERS, Search
from memories.models import STARE_DIMENSIONS, Memory
from memories.search.relational import NAMES as RELATIONAL_NAMES
from memories.search.relational import RelationalFilter
from memories.temporal.validity import ended_by_sql, valid_at_sql

#: Statuses a search can return. A superseded memory's window closes where its replacement's
#: begins, so it is found by ``as_of`` inside its window, by ``currently_valid: false`` once the
#: window has ended, and as valid now only until a replacement that starts later takes over.
SEARCHABLE_STATUSES = (Memory.Status.ACTIVE.value, Memory.Status.SUPERSEDED.value)


@dataclass(frozen=True)
class SearchFilters:
    """The filters of one search (``memories.commands.Search``): a filter added there is read
    here by name, in ``sql``, or by ``memories.search.relational``, and nowhere else."""

    search: Search

    def sql(
        self, now: datetime, relational: RelationalFilter | None = None
    ) -> tuple[str, dict[str, object]]:
        """WHERE fragments (beyond workspace and scope) and their named parameters. The filters
        that read links come resolved for the reader (``relational``)."""
        search = self.search
        for name in RELATIONAL_NAMES:
            if getattr(search, name) is not None and relational is None:
                raise TypeError(f"the {name} filter needs its resolution (relational_filter)")
        clauses = ["status = ANY(%(statuses)s)"]
        params: dict[str, object] = {"statuses": list(SEARCHABLE_STATUSES)}
        as_of, currently_valid = search.as_of, search.currently_valid
        if as_of is None and currently_valid is None:
            currently_valid = True  # the default: what is valid now
        if as_of is not None:
            clauses.append(valid_at_sql("as_of"))
            params["as_of"] = as_of
        if currently_valid is not None:
            clauses.append(valid_at_sql("now") if currently_valid else ended_by_sql("now"))
            params["now"] = now
        if search.written_from is not None:
            clauses.append("created_at >= %(written_from)s")
            params["written_from"] = search.written_from
        if search.written_until is not None:
            clauses.append("created_at < %(written_until)s")
            params["written_until"] = search.written_until
        for column in COLUMN_FILTERS:
            if value := getattr(search, column):
                clauses.append(f"{column} = %({column})s")
                params[column] = value
        if search.metadata is not None:
            clauses.append(metadata_filter.named(search.metadata, "metadata", params))
        for dim in STARE_DIMENSIONS:
            minimum = getattr(search, f"min_{dim}_score")
            if minimum is not None:  # NULL (no score) never passes
                clauses.append(f"{dim}_score >= %(min_{dim}_score)s")
                params[f"min_{dim}_score"] = minimum
        if relational is not None:
            more, more_params = relational.sql()
            clauses += more
            params |= more_params
        return " AND ".join(clauses), params
