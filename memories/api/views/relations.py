"""What memories connect to and disagree on: entities, sources, divergences."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import services
from memories.api.answers import (
    DivergenceAnswer,
    DivergencePageAnswer,
    EntityAnswer,
    EntityDetailAnswer,
    EntityPageAnswer,
    SourceDetailAnswer,
    SourcePageAnswer,
)
from memories.errors import NotFound
from memories.presenters import (
    divergence_to_dict,
    entity_to_dict,
    memory_to_dict,
    source_detail_to_dict,
    source_to_dict,
)
from memories.selectors.divergences import divergence_get, divergences_visible
from memories.selectors.first_seen import as_known
from memories.selectors.paging import page_of
from memories.selectors.reader import Reader
from memories.selectors.relations import (
    entity_get,
    entity_list,
    entity_memories,
)
from memories.selectors.sources import source_detail, source_events, source_list, source_records
from memories.serializers import (
    SOURCE_KINDS_LISTED,
    DivergenceListInput,
    EntityDeclareInput,
    EntityListInput,
    PageInput,
    SourceListInput,
    parse,
    query_values,
)


class DivergencesApi(APIView):
    @extend_schema(
        parameters=[DivergenceListInput],
        operation_id="divergences_list",
        responses={200: DivergencePageAnswer},
        summary="Memories by different writers that disagree (MM_DIVERGENCE), newest first",
        description="Each with both memories, its score, the detector that decided, its evidence "
        "and its state (open, resolved, dismissed). Only divergences between two memories you "
        "may see. 403 while MM_DIVERGENCE is off.",
    )
    def get(self, request: Request) -> Response:
        values = parse(DivergenceListInput, query_values(request.query_params), from_text=True)
        rows, page = page_of(
            divergences_visible(Reader.of_agent(request.user), status=values.get("status") or None),
            values,
        )
        return Response({**page, "results": [divergence_to_dict(d) for d in rows]})


class DivergenceDetailApi(APIView):
    @extend_schema(
        responses={200: DivergenceAnswer},
        summary="One divergence (MM_DIVERGENCE)",
        description="One with a memory you cannot see is a 404, as one that does not exist.",
    )
    def get(self, request: Request, divergence_id: str) -> Response:
        return Response(
            divergence_to_dict(divergence_get(Reader.of_agent(request.user), divergence_id))
        )


class SourcesApi(APIView):
    @extend_schema(
        parameters=[SourceListInput],
        operation_id="sources_list",
        responses={200: SourcePageAnswer},
        summary="Sources and their records: how often their memories were found right",
        description="Writers (a memory's source) and the entities claims are attributed to, "
        "each with its memories you see, how many were found right (marked important, a "
        "divergence resolved for them) and wrong (demoted, superseded by another source, a "
        "divergence resolved against them), and its estimate shrunk toward the workspace's "
        "prior (``prior``). Most judged first.",
    )
    def get(self, request: Request) -> Response:
        values = parse(SourceListInput, query_values(request.query_params), from_text=True)
        records = source_records(Reader.of_agent(request.user))
        found, page = page_of(
            source_list(records, kind=values.get("kind", ""), query=values.get("query", "")),
            values,
        )
        return Response(
            {
                **page,
                "prior": round(records.prior, 6),
                "prior_strength": records.strength,
                "results": [source_to_dict(r) for r in found],
            }
        )


class SourceDetailApi(APIView):
    @extend_schema(
        operation_id="sources_detail",
        responses={200: SourceDetailAnswer},
        summary="One source's record, its records on topics, and the events behind it",
        description="kind: writer (key: the writer's name) or entity (key: its entity_id). A "
        "source none of whose memories you see is a 404, as one that does not exist.",
    )
    def get(self, request: Request, kind: str, key: str) -> Response:
        if kind not in SOURCE_KINDS_LISTED:
            raise NotFound(f"no source kind {kind!r} (writer or entity).")
        reader = Reader.of_agent(request.user)
        records = source_records(reader)
        record = source_detail(records, kind=kind, key=key)
        events = source_events(reader, kind=kind, key=key)
        return Response(source_detail_to_dict(record, events))


class EntitiesApi(APIView):
    @extend_schema(
        parameters=[EntityListInput],
        operation_id="entities_list",
        responses={200: EntityPageAnswer},
        summary="The workspace's entities you may know of, most mentioned first",
    )
    def get(self, request: Request) -> Response:
        values = parse(EntityListInput, query_values(request.query_params), from_text=True)
        reader = Reader.of_agent(request.user)
        entities, page = page_of(
            entity_list(
                reader,
                query=values.get("query", ""),
                kind=values.get("type", ""),
            ),
            values,
        )
        seen = as_known(reader, entities)
        return Response(
            {**page, "results": [entity_to_dict(e, e.mentions, seen) for e in entities]}
        )

    @extend_schema(
        request=EntityDeclareInput,
        responses={
            201: OpenApiResponse(EntityAnswer, description="A new entity, declared."),
            200: OpenApiResponse(
                EntityAnswer, description="One already known, now declared with these aliases."
            ),
        },
        summary="Declare an entity in the workspace's gazetteer",
        description="Its name and aliases are then found in every text written. 201 for a new "
        "entity, 200 for one already known (now declared, with these aliases too).",
    )
    def post(self, request: Request) -> Response:
        agent = request.user
        result = services.entity_declare(
            workspace_id=agent.workspace_id, agent=agent, **parse(EntityDeclareInput, request.data)
        )
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        seen = as_known(Reader.of_agent(agent), [result.entity])
        return Response(entity_to_dict(result.entity, seen=seen), status=code)


class EntityDetailApi(APIView):
    @extend_schema(
        parameters=[PageInput],
        responses={200: EntityDetailAnswer},
        summary="An entity and the memories that mention it, newest first",
    )
    def get(self, request: Request, entity_id: str) -> Response:
        values = parse(PageInput, query_values(request.query_params), from_text=True)
        reader = Reader.of_agent(request.user)
        entity = entity_get(reader, entity_id)
        memories, page = page_of(entity_memories(reader, entity), values)
        return Response(
            {
                "entity": entity_to_dict(entity, seen=as_known(reader, [entity])),
                **page,
                "memories": [memory_to_dict(m) for m in memories],
            }
        )
