"""Reading across memories: search, the compiled file, traversal and paths."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.api.answers import CompiledAnswer, PathAnswer, SearchAnswer, TraversalAnswer
from memories.api.views.common import ErrorsAsJson, preferred
from memories.compile import compiled_memory_file
from memories.errors import ValidationFailed
from memories.operations import memory_search
from memories.presenters import (
    compiled_to_dict,
    hits_to_list,
    path_to_dict,
    results_table,
    traversal_to_dict,
)
from memories.reading import read_as
from memories.selectors.reader import Reader
from memories.selectors.traversal import path_between, traverse_from
from memories.serializers import (
    CompileInput,
    ExplainPathInput,
    SearchInput,
    TraverseInput,
    parse,
    query_values,
)


class CompiledFileApi(APIView):
    """The compiled memory file of the scopes the agent sees: markdown by default, JSON (with
    what was cut and why) for ``format=json`` or ``Accept: application/json``."""

    content_negotiation_class = ErrorsAsJson

    @extend_schema(
        parameters=[
            CompileInput,
            OpenApiParameter(
                "format", str, enum=["markdown", "json"], description="Default markdown."
            ),
            OpenApiParameter(
                "metadata",
                str,
                description="Only the memories whose metadata match this filter, as JSON text "
                '(e.g. one customer\'s: {"customer": "orion"}; see docs/metadata.md).',
            ),
        ],
        responses={
            (200, "text/markdown"): OpenApiTypes.STR,
            (200, "application/json"): CompiledAnswer,
        },
        summary="The compiled memory file, built to a token budget",
    )
    def get(self, request: Request) -> HttpResponse:
        params = query_values(request.query_params)
        representation = params.pop("format", None)
        if representation is None:
            representation = preferred(request.headers.get("Accept", ""))
        if representation not in ("markdown", "json"):
            raise ValidationFailed.single(
                "format", f"{representation!r} is not one of: markdown, json."
            )
        agent = request.user
        arguments = parse(CompileInput, params, from_text=True)
        reader = Reader.of_agent(agent)
        compiled = read_as(agent, lambda: compiled_memory_file(reader, **arguments))
        if representation == "json":
            return Response(compiled_to_dict(compiled))
        return HttpResponse(compiled.markdown, content_type="text/markdown; charset=utf-8")


class SearchApi(APIView):
    @extend_schema(
        request=SearchInput,
        responses={200: SearchAnswer},
        summary="Search: ranked memories with explanations and a markdown table",
    )
    def post(self, request: Request) -> Response:
        reader = Reader.of_agent(request.user)
        hits = read_as(request.user, lambda: memory_search(reader, arguments=request.data))
        return Response(
            {
                "results": hits_to_list(hits),
                "table": results_table(hits),
            }
        )


class TraverseApi(APIView):
    @extend_schema(
        request=TraverseInput,
        responses={200: TraversalAnswer},
        summary="Follow links from a memory or an entity (opt-in: MM_TRAVERSAL)",
        description="The nodes within depth links, nearest first, each with its shortest path: "
        "every step's link type, direction, who or what made it, evidence and time. Only what "
        "you may see is reached or passed through. 403 while MM_TRAVERSAL is off; a start you "
        "cannot see is a 404, as one that does not exist.",
    )
    def post(self, request: Request) -> Response:
        values = parse(TraverseInput, request.data)
        start, reached = traverse_from(
            Reader.of_agent(request.user), start=values.pop("from"), **values
        )
        return Response(traversal_to_dict(start, reached))


class ExplainPathApi(APIView):
    @extend_schema(
        request=ExplainPathInput,
        responses={200: PathAnswer},
        summary="The shortest path between two memories, or a memory and an entity (opt-in)",
        description="Links followed either way, up to depth; found false when none is within "
        "reach. 403 while MM_TRAVERSAL is off; an end you cannot see is a 404.",
    )
    def post(self, request: Request) -> Response:
        values = parse(ExplainPathInput, request.data)
        start, end, found = path_between(
            Reader.of_agent(request.user), start=values.pop("from"), end=values.pop("to"), **values
        )
        return Response(path_to_dict(start, end, found))
