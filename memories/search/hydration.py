"""Search hits: the memories of the ranking statement's rows, with the figures that explain
their place."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.db.models import Field, Model
from django.db.models.expressions import Col

from memories.models import Memory, Scope
from memories.reading import reader
from memories.search.recipe import SOURCES


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    similarity: float
    keyword_rank: float
    episode_similarity: float
    similarity_z: float
    keyword_z: float
    episode_z: float
    fused: float
    neighbour: float
    relevance: float
    age_days: float
    age_factor: float
    asymmetry_factor: float
    score: float
    gated: bool
    eligible: str
    #: What let it through the filters that read links (``memories.search.relational``).
    relations: dict = field(default_factory=dict)
    #: With ``expand: "graph"``, the graph's share of its relevance (``memories.search.graph``).
    graph: dict = field(default_factory=dict)
    #: With ``MM_SEARCH_LEARNED``, the model's score and each feature's share
    #: (``memories.search.learned``).
    learned: dict = field(default_factory=dict)
    #: The candidate sources that found it (``memories.search.recipe.SOURCES``).
    found_by: tuple[str, ...] = ()
    #: The pieces after the sources that placed it (``Recipe.placed_by``), and whether a
    #: session's cap moved it down (``memories.search.sessions``).
    placed_by: tuple[str, ...] = ()
    capped: bool = False
    #: A candidate's row, while its memory holds only ``CANDIDATE_MEMORY_FIELDS``
    #: (``hit_from_row(row, candidate=True)``); ``hydrated`` reads the rest from it.
    row: tuple | None = field(default=None, repr=False, compare=False)

    def explanation(self) -> dict[str, Any]:
        return {
            "similarity": round(self.similarity, 6),
            "keyword_rank": round(self.keyword_rank, 6),
            "episode_similarity": round(self.episode_similarity, 6),
            "similarity_z": round(self.similarity_z, 6),
            "keyword_z": round(self.keyword_z, 6),
            "episode_z": round(self.episode_z, 6),
            "fused": round(self.fused, 6),
            "neighbour": round(self.neighbour, 6),
            "relevance": round(self.relevance, 6),
            "significance": self.memory.significance,
            "age_days": round(self.age_days, 3),
            "age_factor": round(self.age_factor, 6),
            # A (memories.asymmetry.score): shown always, in the score only with
            # MM_ASYMMETRY_RANKING.
            "a_score": self.memory.a_score,
            **(
                {"asymmetry_factor": round(self.asymmetry_factor, 6)}
                if settings.MM_ASYMMETRY_RANKING
                else {}
            ),
            "score": round(self.score, 6),
            "passed_gate": self.gated,
            **({"relations": self.relations} if self.relations else {}),
            **({"graph": self.graph} if self.graph else {}),
            **({"learned": self.learned} if self.learned else {}),
            "pieces": {
                "found_by": list(self.found_by),
                "placed_by": list(self.placed_by),
                **({"capped": True} if self.capped else {}),
            },
        }


#: What a search loads of each memory it shows: everything but the vectors.
SHOWN_MEMORY_FIELDS = tuple(
    model_field
    for model_field in Memory._meta.concrete_fields
    if model_field.name not in {"embedding", "episode_embedding", "search_vector"}
)
SCOPE_FIELDS = tuple(Scope._meta.concrete_fields)
#: What the learned ranking and the gate read of every candidate before the few shown are
#: chosen (``memories.search.learned``, ``memories.search.gate``): reading every field of the
#: dozens of candidates a search returns cost more CPU than the rest of the search's Python.
CANDIDATE_MEMORY_FIELDS = tuple(
    model_field
    for model_field in SHOWN_MEMORY_FIELDS
    if model_field.name in {"id", "text", "session", "created_at", "significance"}
)
_CANDIDATE_COLUMNS = tuple(SHOWN_MEMORY_FIELDS.index(f) for f in CANDIDATE_MEMORY_FIELDS)


def hit_from_row(
    row: tuple, *, candidate: bool = False, placed_by: tuple[str, ...] = ()
) -> SearchHit:
    """A search hit from a row of the ranking statement (``ranking.ranked``): the memory with
    its scope and replacement, and the figures that explain its place (``placed_by``: the
    recipe's pieces). A ``candidate``'s memory holds only ``CANDIDATE_MEMORY_FIELDS`` until
    ``hydrated``."""
    memory_end = len(SHOWN_MEMORY_FIELDS)
    scope_end = memory_end + len(SCOPE_FIELDS)
    replacement_mem_id, *figures = row[scope_end:]
    if candidate:
        memory = _instance(
            Memory, CANDIDATE_MEMORY_FIELDS, tuple(row[i] for i in _CANDIDATE_COLUMNS)
        )
    else:
        memory = _instance(Memory, SHOWN_MEMORY_FIELDS, row[:memory_end])
        memory.scope = _instance(Scope, SCOPE_FIELDS, row[memory_end:scope_end])
        if memory.superseded_by_id is not None:
            memory.superseded_by = Memory.from_db(
                reader.alias, ["id", "mem_id"], [memory.superseded_by_id, replacement_mem_id]
            )
    (similarity, keyword_rank, episode_similarity, *rest) = figures
    similarity_z, keyword_z, episode_z, fused, neighbour, relevance, *rest = rest
    age_days, age_factor, asymmetry_factor, score, gated, found_by = rest
    return SearchHit(
        memory=memory,
        similarity=similarity,
        keyword_rank=keyword_rank,
        episode_similarity=episode_similarity,
        similarity_z=similarity_z,
        keyword_z=keyword_z,
        episode_z=episode_z,
        fused=fused,
        neighbour=neighbour,
        relevance=relevance,
        age_days=age_days,
        age_factor=age_factor,
        asymmetry_factor=asymmetry_factor,
        score=score,
        gated=gated,
        found_by=tuple(source for source in SOURCES if source in found_by),
        placed_by=placed_by,
        eligible="",  # set by ``ranked`` for all hits at once
        row=row if candidate else None,
    )


def hydrated(hit: SearchHit) -> SearchHit:
    """``hit`` with its whole memory, its scope and replacement, if it was a candidate's."""
    if hit.row is None:
        return hit
    return replace(hit, memory=hit_from_row(hit.row).memory, row=None)


def _instance(model: type[Model], fields: tuple[Field, ...], values: tuple) -> Model:
    """A model instance from a row's values for ``fields`` (the others deferred), converted
    from their database form as the ORM converts them (a JSON field's text, for one)."""
    converted = list(values)
    for index, column, converters in _converters(model, fields):
        for converter in converters:
            converted[index] = converter(converted[index], column, reader)
    return model.from_db(reader.alias, [model_field.attname for model_field in fields], converted)


@functools.cache
def _converters(model: type[Model], fields: tuple[Field, ...]) -> list[tuple[int, Col, list]]:
    """For each of ``fields`` that has any, the converters the ORM applies to its values."""
    found = []
    for index, model_field in enumerate(fields):
        column = model_field.get_col(model._meta.db_table)
        converters = reader.ops.get_db_converters(column)
        converters += column.get_db_converters(reader)
        if converters:
            found.append((index, column, converters))
    return found
