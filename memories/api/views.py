"""REST API for agents: thin adapters over memories.services and memories.search."""

from __future__ import annotations

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import rules, services
from memories.api import schema  # noqa: F401 (the schema's extensions register on import)
from memories.compile import compiled_memory_file
from memories.errors import NotFound, ValidationFailed
from memories.presenters import (
    bulk_results_to_dict,
    compiled_to_dict,
    divergence_to_dict,
    entity_to_dict,
    erasure_to_dict,
    hits_to_list,
    memory_detail,
    memory_to_dict,
    path_to_dict,
    results_table,
    source_detail_to_dict,
    source_to_dict,
    stored_link_to_dict,
    traversal_to_dict,
)
from memories.reading import read_as
from memories.search import memory_search
from memories.selectors import memory_get, visible_scope_ids
from memories.selectors.divergences import divergence_get, divergences_visible
from memories.selectors.first_seen import first_seen
from memories.selectors.memories import LIST_ORDERINGS, memory_list
from memories.selectors.relations import (
    attach_references,
    entity_get,
    entity_list,
    entity_memories,
)
from memories.selectors.sources import source_detail, source_events, source_list, source_records
from memories.selectors.traversal import path_between, traverse_from
from memories.serializers import (
    LIST_LIMIT_MAX,
    SOURCE_KINDS_LISTED,
    CompileInput,
    DivergenceListInput,
    EntityDeclareInput,
    EntityListInput,
    EraseInput,
    ExplainPathInput,
    FeedbackInput,
    ForgetInput,
    LinkAddInput,
    LinkRemoveInput,
    MemoryListInput,
    PageInput,
    RememberInput,
    SearchInput,
    SourceListInput,
    StrictSerializer,
    TraverseInput,
    parse,
    parse_bulk,
    query_values,
)
from memories.services.divergence import require_divergence
from memories.signals import bulk_imported


class MemoryCursor(CursorPagination):
    """DRF's cursor pagination over ``memory_list``: the order is the request's (``ordering``),
    the page size ``limit``."""

    page_size = 20
    page_size_query_param = "limit"
    max_page_size = LIST_LIMIT_MAX

    def get_ordering(self, request, queryset, view) -> tuple[str, ...]:
        return LIST_ORDERINGS[request.query_params.get("ordering") or "newest"]


class MemoryCreateApi(APIView):
    @extend_schema(
        parameters=[MemoryListInput],
        operation_id="memories_list",
        responses={200: OpenApiTypes.OBJECT},
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

        def listed() -> list[dict]:
            memories = memory_list(
                workspace_id=agent.workspace_id,
                scope_ids=visible_scope_ids(agent),
                values=values,
                now=timezone.now(),
            )
            page = paginator.paginate_queryset(memories, request, view=self)
            attach_references(page)
            return [memory_to_dict(m) for m in page]

        return paginator.get_paginated_response(read_as(agent, listed))

    @extend_schema(
        request=RememberInput,
        responses={201: OpenApiTypes.OBJECT},
        summary="Remember: store a memory",
    )
    def post(self, request: Request) -> Response:
        result = services.memory_remember(agent=request.user, **parse(RememberInput, request.data))
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(memory_detail(result.memory, request.user), status=code)


class BulkRememberInput(StrictSerializer):
    """The bulk body as the schema shows it (``parse_bulk`` reads it)."""

    memories = serializers.ListField(
        child=RememberInput(), min_length=1, max_length=settings.MM_BULK_MAX_ITEMS
    )


class MemoryBulkApi(APIView):
    @extend_schema(
        request=BulkRememberInput,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
        summary="Remember many: all validated first, stored once each, scored",
        description='Body `{"memories": [...]}`, each item the remember arguments, at most '
        "MM_BULK_MAX_ITEMS. One bad item refuses the batch (400 naming `memories[i].field`). "
        "Items already stored (same idempotency_key, or same scope, source and text) come back "
        "as `existing`; 201 when at least one was stored.",
    )
    def post(self, request: Request) -> Response:
        results = services.memory_remember_bulk(agent=request.user, items=parse_bulk(request.data))
        data = bulk_results_to_dict(results)
        if data["stored"]:
            bulk_imported.send(
                sender=type(self), workspace_id=request.user.workspace_id, stored=data["stored"]
            )
        return Response(
            data, status=status.HTTP_201_CREATED if data["stored"] else status.HTTP_200_OK
        )


class MemoryDetailApi(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT}, summary="A memory with its scores and provenance"
    )
    def get(self, request: Request, mem_id: str) -> Response:
        memory = memory_get(agent=request.user, mem_id=mem_id)
        return Response(memory_detail(memory, request.user))


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
        return Response(memory_detail(memory, request.user))


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
        return Response(memory_detail(memory, request.user))


class MemoryEraseApi(APIView):
    @extend_schema(
        request=EraseInput,
        responses={200: OpenApiTypes.OBJECT},
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


class _ErrorsAsJson(BaseContentNegotiation):
    """Errors are JSON whatever the client accepts; a success picks its own representation."""

    def select_parser(self, request: Request, parsers: list) -> object:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: list, format_suffix=None):
        return renderers[0], renderers[0].media_type


def _preferred(accept: str) -> str:
    """``json`` when the Accept header prefers application/json to text/markdown (by q value;
    a tie or neither named gives markdown)."""
    quality = {"application/json": 0.0, "text/markdown": 0.0}
    for part in accept.split(","):
        media_type, *params = (piece.strip() for piece in part.split(";"))
        if media_type in quality:
            q = next((p[2:] for p in params if p.startswith("q=")), "1")
            try:
                quality[media_type] = max(quality[media_type], float(q))
            except ValueError:
                continue
    return "json" if quality["application/json"] > quality["text/markdown"] else "markdown"


class CompiledFileApi(APIView):
    """The compiled memory file of the scopes the agent sees: markdown by default, JSON (with
    what was cut and why) for ``format=json`` or ``Accept: application/json``."""

    content_negotiation_class = _ErrorsAsJson

    @extend_schema(
        parameters=[
            CompileInput,
            OpenApiParameter(
                "format", str, enum=["markdown", "json"], description="Default markdown."
            ),
        ],
        responses={
            (200, "text/markdown"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.OBJECT,
        },
        summary="The compiled memory file, built to a token budget",
    )
    def get(self, request: Request) -> HttpResponse:
        params = query_values(request.query_params)
        representation = params.pop("format", None)
        if representation is None:
            representation = _preferred(request.headers.get("Accept", ""))
        if representation not in ("markdown", "json"):
            raise ValidationFailed.single(
                "format", f"{representation!r} is not one of: markdown, json."
            )
        agent = request.user
        arguments = parse(CompileInput, params, from_text=True)
        compiled = read_as(
            agent,
            lambda: compiled_memory_file(workspace=agent.workspace, agent=agent, **arguments),
        )
        if representation == "json":
            return Response(compiled_to_dict(compiled))
        return HttpResponse(compiled.markdown, content_type="text/markdown; charset=utf-8")


class SearchApi(APIView):
    @extend_schema(
        request=SearchInput,
        responses={200: OpenApiTypes.OBJECT},
        summary="Search: ranked memories with explanations and a markdown table",
    )
    def post(self, request: Request) -> Response:
        hits = read_as(
            request.user, lambda: memory_search(agent=request.user, arguments=request.data)
        )
        return Response(
            {
                "results": hits_to_list(hits),
                "table": results_table(hits),
            }
        )


class TraverseApi(APIView):
    @extend_schema(
        request=TraverseInput,
        responses={200: OpenApiTypes.OBJECT},
        summary="Follow links from a memory or an entity (opt-in: MM_TRAVERSAL)",
        description="The nodes within depth links, nearest first, each with its shortest path: "
        "every step's link type, direction, who or what made it, evidence and time. Only what "
        "you may see is reached or passed through. 403 while MM_TRAVERSAL is off; a start you "
        "cannot see is a 404, as one that does not exist.",
    )
    def post(self, request: Request) -> Response:
        values = parse(TraverseInput, request.data)
        start, reached = traverse_from(request.user, start=values.pop("from"), **values)
        return Response(traversal_to_dict(start, reached))


class DivergencesApi(APIView):
    @extend_schema(
        parameters=[DivergenceListInput],
        operation_id="divergences_list",
        responses={200: OpenApiTypes.OBJECT},
        summary="Memories by different writers that disagree (MM_DIVERGENCE), newest first",
        description="Each with both memories, its score, the detector that decided, its evidence "
        "and its state (open, resolved, dismissed). Only divergences between two memories you "
        "may see. 403 while MM_DIVERGENCE is off.",
    )
    def get(self, request: Request) -> Response:
        require_divergence()
        values = parse(DivergenceListInput, query_values(request.query_params), from_text=True)
        rows, page = _page(
            divergences_visible(agent=request.user, status=values.get("status") or None), values
        )
        return Response({**page, "results": [divergence_to_dict(d) for d in rows]})


class DivergenceDetailApi(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="One divergence (MM_DIVERGENCE)",
        description="One with a memory you cannot see is a 404, as one that does not exist.",
    )
    def get(self, request: Request, divergence_id: str) -> Response:
        require_divergence()
        return Response(
            divergence_to_dict(divergence_get(divergence_id=divergence_id, agent=request.user))
        )


class ExplainPathApi(APIView):
    @extend_schema(
        request=ExplainPathInput,
        responses={200: OpenApiTypes.OBJECT},
        summary="The shortest path between two memories, or a memory and an entity (opt-in)",
        description="Links followed either way, up to depth; found false when none is within "
        "reach. 403 while MM_TRAVERSAL is off; an end you cannot see is a 404.",
    )
    def post(self, request: Request) -> Response:
        values = parse(ExplainPathInput, request.data)
        start, end, found = path_between(
            request.user, start=values.pop("from"), end=values.pop("to"), **values
        )
        return Response(path_to_dict(start, end, found))


def _page(items, values: dict) -> tuple[list, dict[str, int]]:
    """One page of a queryset (``page``, ``page_size``) and where it stands."""
    size = values.get("page_size", rules.PAGE_SIZE_DEFAULT)
    paginator = Paginator(items, size)
    number = values.get("page", 1)
    page = paginator.page(number) if number <= max(paginator.num_pages, 1) else None
    return (list(page.object_list) if page else []), {
        "page": number,
        "page_size": size,
        "pages": paginator.num_pages,
        "count": paginator.count,
    }


class MemoryLinksApi(APIView):
    @extend_schema(
        request=LinkAddInput,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
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
        responses={200: OpenApiTypes.OBJECT},
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


class SourcesApi(APIView):
    @extend_schema(
        parameters=[SourceListInput],
        operation_id="sources_list",
        responses={200: OpenApiTypes.OBJECT},
        summary="Sources and their records: how often their memories were found right",
        description="Writers (a memory's source) and the entities claims are attributed to, "
        "each with its memories you see, how many were found right (marked important, a "
        "divergence resolved for them) and wrong (demoted, superseded by another source, a "
        "divergence resolved against them), and its estimate shrunk toward the workspace's "
        "prior (``prior``). Most judged first.",
    )
    def get(self, request: Request) -> Response:
        values = parse(SourceListInput, query_values(request.query_params), from_text=True)
        agent = request.user
        records = source_records(agent.workspace_id, visible_scope_ids(agent))
        found, page = _page(
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
        responses={200: OpenApiTypes.OBJECT},
        summary="One source's record, its records on topics, and the events behind it",
        description="kind: writer (key: the writer's name) or entity (key: its entity_id). A "
        "source none of whose memories you see is a 404, as one that does not exist.",
    )
    def get(self, request: Request, kind: str, key: str) -> Response:
        if kind not in SOURCE_KINDS_LISTED:
            raise NotFound(f"no source kind {kind!r} (writer or entity).")
        agent = request.user
        scope_ids = visible_scope_ids(agent)
        records = source_records(agent.workspace_id, scope_ids)
        record = source_detail(records, kind=kind, key=key)
        events = source_events(agent.workspace_id, scope_ids, kind=kind, key=key)
        return Response(source_detail_to_dict(record, events))


class EntitiesApi(APIView):
    @extend_schema(
        parameters=[EntityListInput],
        operation_id="entities_list",
        responses={200: OpenApiTypes.OBJECT},
        summary="The workspace's entities you may know of, most mentioned first",
    )
    def get(self, request: Request) -> Response:
        values = parse(EntityListInput, query_values(request.query_params), from_text=True)
        agent = request.user
        entities, page = _page(
            entity_list(
                workspace_id=agent.workspace_id,
                scope_ids=visible_scope_ids(agent),
                query=values.get("query", ""),
                kind=values.get("type", ""),
            ),
            values,
        )
        seen = first_seen(entities, visible_scope_ids(agent))
        return Response(
            {**page, "results": [entity_to_dict(e, e.mentions, seen) for e in entities]}
        )

    @extend_schema(
        request=EntityDeclareInput,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
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
        seen = first_seen([result.entity], visible_scope_ids(agent))
        return Response(entity_to_dict(result.entity, seen=seen), status=code)


class EntityDetailApi(APIView):
    @extend_schema(
        parameters=[PageInput],
        responses={200: OpenApiTypes.OBJECT},
        summary="An entity and the memories that mention it, newest first",
    )
    def get(self, request: Request, entity_id: str) -> Response:
        values = parse(PageInput, query_values(request.query_params), from_text=True)
        agent = request.user
        scope_ids = visible_scope_ids(agent)
        entity = entity_get(
            workspace_id=agent.workspace_id, entity_id=entity_id, scope_ids=scope_ids
        )
        memories, page = _page(entity_memories(entity, scope_ids), values)
        return Response(
            {
                "entity": entity_to_dict(entity, seen=first_seen([entity], scope_ids)),
                **page,
                "memories": [memory_to_dict(m) for m in memories],
            }
        )
