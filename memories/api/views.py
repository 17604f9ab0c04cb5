"""REST API for agents: thin adapters over memories.services and memories.search."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import services
from memories.presenters import hit_to_dict, memory_detail, results_table
from memories.search import memory_search
from memories.selectors import memory_get
from memories.serializers import (
    FeedbackInput,
    ForgetInput,
    RememberInput,
    SearchInput,
    parse,
)


class MemoryCreateApi(APIView):
    @extend_schema(
        request=RememberInput,
        responses={201: OpenApiTypes.OBJECT},
        summary="Remember: store a memory",
    )
    def post(self, request: Request) -> Response:
        memory = services.memory_remember(agent=request.user, **parse(RememberInput, request.data))
        return Response(memory_detail(memory), status=status.HTTP_201_CREATED)


class MemoryDetailApi(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT}, summary="A memory with its scores and provenance"
    )
    def get(self, request: Request, mem_id: str) -> Response:
        return Response(memory_detail(memory_get(agent=request.user, mem_id=mem_id)))


class MemoryFeedbackApi(APIView):
    @extend_schema(
        request=FeedbackInput,
        responses={200: OpenApiTypes.OBJECT},
        summary="Feedback: important, demote, pin or unpin, with a reason",
    )
    def post(self, request: Request, mem_id: str) -> Response:
        memory = services.memory_feedback(
            agent=request.user, mem_id=mem_id, **parse(FeedbackInput, request.data)
        )
        return Response(memory_detail(memory))


class MemoryForgetApi(APIView):
    @extend_schema(
        request=ForgetInput,
        responses={200: OpenApiTypes.OBJECT},
        summary="Forget (soft delete) a memory, with a reason",
    )
    def post(self, request: Request, mem_id: str) -> Response:
        memory = services.memory_forget(
            agent=request.user, mem_id=mem_id, **parse(ForgetInput, request.data)
        )
        return Response(memory_detail(memory))


class SearchApi(APIView):
    @extend_schema(
        request=SearchInput,
        responses={200: OpenApiTypes.OBJECT},
        summary="Search: ranked memories with explanations and a markdown table",
    )
    def post(self, request: Request) -> Response:
        hits = memory_search(agent=request.user, **parse(SearchInput, request.data))
        return Response(
            {
                "results": [hit_to_dict(hit, position) for position, hit in enumerate(hits, 1)],
                "table": results_table(hits),
            }
        )
