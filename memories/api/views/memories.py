"""A memory: written alone or in bulk, read, listed, given feedback, forgotten, erased, linked."""

from __future__ import annotations

import math

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import services
from memories.api.answers import (
    BulkAnswer,
    ErasureAnswer,
    MemoryDetailAnswer,
    MemoryPageAnswer,
    StoredLinkAnswer,
)
from memories.errors import ValidationFailed
from memories.operations import remember_command, remember_commands
from memories.presenters import (
    bulk_results_to_dict,
    erasure_to_dict,
    memory_detail,
    memory_to_dict,
    stored_link_to_dict,
)
from memories.reading import read_as
from memories.selectors import memory_get
from memories.selectors.memories import LIST_ORDERINGS, memory_list
from memories.selectors.reader import Reader
from memories.selectors.relations import (
    attach_references,
)
from memories.serializers import (
    LIST_LIMIT_MAX,
    EraseInput,
    FeedbackInput,
    ForgetInput,
    LinkAddInput,
    LinkRemoveInput,
    MemoryListInput,
    RememberInput,
    StrictSerializer,
    parse,
    query_values,
)


class MemoryCursor(CursorPagination):
    """DRF's cursor pagination over ``memory_list``: the order is the request's (``ordering``),
    the page size ``limit``."""

    page_size = 20
    page_size_query_param = "limit"
    max_page_size = LIST_LIMIT_MAX

    def get_ordering(self, request, queryset, view) -> tuple[str, ...]:
        return LIST_ORDERINGS[request.query_params.get("ordering") or "newest"]

    def decode_cursor(self, request):
        """DRF's cursor, its position checked against the order's first field (a cursor is
        base64 anyone can edit): anything but a cursor a page of this order gave is a 400
        naming ``cursor``, never a query that fails."""
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            cursor = None
            position = ""
        else:
            position = None if cursor is None else cursor.position
        if position is not None and not _position_fits(request, position):
            raise ValidationFailed.single(
                "cursor",
                "is not a cursor a page of this list gave (with this ordering): follow a "
                "page's next or previous link, or leave it out for the first page.",
            )
        return cursor


def _position_fits(request: Request, position: str) -> bool:
    """Whether ``position`` is a value of the first field of the request's order: a time for
    the newest first, a finite number for the most significant."""
    if (request.query_params.get("ordering") or "newest") == "significance":
        try:
            return math.isfinite(float(position))
        except ValueError:
            return False
    try:
        return parse_datetime(position) is not None
    except ValueError:
        return False


class MemoryCreateApi(APIView):
    @extend_schema(
        parameters=[
            MemoryListInput,
            OpenApiParameter(
                "metadata",
                str,
                description="Only memories whose metadata matches this filter, as JSON text "
                '(the search\'s metadata filter: {"customer": "orion", "seats": {"gte": 50}}; '
                "see docs/metadata.md).",
            ),
        ],
        operation_id="memories_list",
        responses={200: MemoryPageAnswer},
        summary="Browse memories: the search's filters without a query, newest or most "
        "significant first, a cursor page at a time",
        description="The answer is DRF's cursor page: results, and next / previous links "
        "(null at an end). Forgotten and merged memories are never listed; without as_of or "
        "currently_valid, the memories valid now.",
    )
    def get(self, request: Request) -> Response:
        values = parse(MemoryListInput, query_values(request.query_params), from_text=True)
        agent = request.user
        paginator = MemoryCursor()

        reader = Reader.of_agent(agent)

        def listed() -> list[dict]:
            memories = memory_list(reader, values, timezone.now())
            page = paginator.paginate_queryset(memories, request, view=self)
            attach_references(page)
            return [memory_to_dict(m) for m in page]

        return paginator.get_paginated_response(read_as(agent, listed))

    @extend_schema(
        request=RememberInput,
        responses={
            201: OpenApiResponse(MemoryDetailAnswer, description="The memory, stored."),
            200: OpenApiResponse(
                MemoryDetailAnswer,
                description="The memory stored before with this idempotency_key (in this "
                "scope): nothing new was stored.",
            ),
        },
        summary="Remember: store a memory",
    )
    def post(self, request: Request) -> Response:
        result = services.remember(request.user, remember_command(request.data))
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        answer = memory_detail(
            result.memory, Reader.of_agent(request.user), written_now=result.created
        )
        return Response(answer, status=code)


class BulkRememberInput(StrictSerializer):
    """The bulk body as the schema shows it (``parse_bulk`` reads it)."""

    memories = serializers.ListField(
        child=RememberInput(), min_length=1, max_length=settings.MM_BULK_MAX_ITEMS
    )


class MemoryBulkApi(APIView):
    @extend_schema(
        request=BulkRememberInput,
        responses={
            201: OpenApiResponse(BulkAnswer, description="At least one memory was stored."),
            200: OpenApiResponse(BulkAnswer, description="Every one was stored already."),
        },
        summary="Remember many: all validated first, stored once each, scored",
        description='Body `{"memories": [...]}`, each item the remember arguments, at most '
        "MM_BULK_MAX_ITEMS. One bad item refuses the batch (400 naming `memories[i].field`). "
        "Items already stored (same idempotency_key, or same scope, source and text) come back "
        "as `existing`; 201 when at least one was stored.",
    )
    def post(self, request: Request) -> Response:
        results = services.remember_many(
            agent=request.user, commands=remember_commands(request.data, request=True)
        )
        data = bulk_results_to_dict(results)
        return Response(
            data, status=status.HTTP_201_CREATED if data["stored"] else status.HTTP_200_OK
        )


class MemoryDetailApi(APIView):
    @extend_schema(
        responses={200: MemoryDetailAnswer}, summary="A memory with its scores and provenance"
    )
    def get(self, request: Request, mem_id: str) -> Response:
        memory = memory_get(Reader.of_agent(request.user), mem_id)
        return Response(memory_detail(memory, Reader.of_agent(request.user)))


class MemoryFeedbackApi(APIView):
    @extend_schema(
        request=FeedbackInput,
        responses={200: MemoryDetailAnswer},
        summary="Feedback: important, demote, pin or unpin, with a reason",
    )
    def post(self, request: Request, mem_id: str) -> Response:
        memory = services.memory_feedback(
            agent=request.user, mem_id=mem_id, **parse(FeedbackInput, request.data)
        )
        return Response(memory_detail(memory, Reader.of_agent(request.user)))


class MemoryForgetApi(APIView):
    @extend_schema(
        request=ForgetInput,
        responses={200: MemoryDetailAnswer},
        summary="Forget (soft delete) a memory, with a reason",
    )
    def post(self, request: Request, mem_id: str) -> Response:
        memory = services.memory_forget(
            agent=request.user, mem_id=mem_id, **parse(ForgetInput, request.data)
        )
        return Response(memory_detail(memory, Reader.of_agent(request.user)))


class MemoryEraseApi(APIView):
    @extend_schema(
        request=EraseInput,
        responses={200: ErasureAnswer},
        summary="Erase a memory for good, with a reason",
        description="Its text, vectors, metadata, links, history and every copy of its words "
        "(the episodes of the memories after it, entities only it named, threads) are removed; "
        "a tombstone in the workspace's provenance says which memory, who, when and why. "
        "forget is the soft delete.",
    )
    def post(self, request: Request, mem_id: str) -> Response:
        erasure = services.memory_erase(
            agent=request.user, mem_id=mem_id, **parse(EraseInput, request.data)
        )
        return Response(erasure_to_dict(erasure))


class MemoryLinksApi(APIView):
    @extend_schema(
        request=LinkAddInput,
        responses={
            201: OpenApiResponse(StoredLinkAnswer, description="The new link."),
            200: OpenApiResponse(StoredLinkAnswer, description="The link, there already."),
        },
        summary="Link a memory to another memory or to an entity",
        description="201 with the new link; 200 with the link already there. A memory or an "
        "entity you cannot see is a 404, as one that does not exist.",
    )
    def post(self, request: Request, mem_id: str) -> Response:
        result = services.link_add(
            agent=request.user, mem_id=mem_id, **parse(LinkAddInput, request.data)
        )
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(stored_link_to_dict(result.link), status=code)


class MemoryLinkRemoveApi(APIView):
    @extend_schema(
        request=LinkRemoveInput,
        responses={200: StoredLinkAnswer},
        summary="Remove one of a memory's links, with a reason (kept in its history)",
    )
    def post(self, request: Request, mem_id: str, link_id: str) -> Response:
        link = services.link_remove(
            agent=request.user,
            mem_id=mem_id,
            link_id=link_id,
            **parse(LinkRemoveInput, request.data),
        )
        return Response(stored_link_to_dict(link))
