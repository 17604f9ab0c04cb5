"""The graph a team walks: an entity-centred view (a customer, its people, related customers,
the memories connecting them), its data as JSON for the page's script, and the path between
two of its nodes."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.errors import MemoryEngineError
from memories.selectors.entity_graph import entity_graph
from memories.selectors.reader import Reader
from memories.selectors.relations import entity_get, entity_list
from memories.selectors.traversal import resolve_node, shortest_path
from memories.views.common import page_context, page_reader

#: How many links a path between two nodes may take.
PATH_DEPTH = 4


def _centre(reader: Reader, entity_id: str):
    try:
        return entity_get(reader, entity_id)
    except MemoryEngineError as exc:
        raise Http404("No such entity.") from exc


@login_required
@require_GET
def graph_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The graph around ``?entity=`` (else the most mentioned entity), drawn by the page's
    script; the same neighbours and memories listed below it, which read without one."""
    reader = page_reader(request, slug)
    entity_id = request.GET.get("entity", "")
    centre = _centre(reader, entity_id) if entity_id else entity_list(reader).first()
    graph = entity_graph(reader, centre) if centre is not None else None
    return render(
        request,
        "memories/graph.html",
        page_context(request, reader.membership, centre=centre, graph=graph,
                 traversal=settings.MM_TRAVERSAL),
    )  # fmt: skip


@login_required
@require_GET
def graph_data(request: HttpRequest, slug: str) -> JsonResponse:
    """The graph around ``?entity=`` as JSON (nodes and mention edges); 404 like a missing
    entity for another workspace's."""
    reader = page_reader(request, slug)
    centre = _centre(reader, request.GET.get("entity", ""))
    return JsonResponse(entity_graph(reader, centre).as_json())


@login_required
@require_GET
def graph_path(request: HttpRequest, slug: str) -> JsonResponse:
    """A shortest path between two nodes (``?from=`` and ``?to=``: ``e:<entity_id>`` or
    ``m:<mem_id>``), each step with its link's type: 403 naming the setting while traversal
    is off, 404 for a node the reader does not see."""
    reader = page_reader(request, slug)
    if not settings.MM_TRAVERSAL:
        return JsonResponse(
            {"detail": "Paths are switched off on this engine (MM_TRAVERSAL); an operator "
             "turns them on."}, status=403)  # fmt: skip
    ends = []
    for name in ("from", "to"):
        given = request.GET.get(name, "")
        kind, _, public_id = given.partition(":")
        if kind not in ("e", "m") or not public_id:
            return JsonResponse(
                {name: ["must be e:<entity_id> or m:<mem_id>."]}, status=400
            )  # fmt: skip
        try:
            ends.append(resolve_node(reader, public_id, name))
        except MemoryEngineError as exc:
            raise Http404("No such node.") from exc
    found = shortest_path(reader, ends[0], ends[1], depth=PATH_DEPTH)
    if found is None:
        return JsonResponse({"nodes": [], "steps": []})
    return JsonResponse({
        "nodes": [_node(n) for n in found.nodes],
        "steps": [{"kind": s.kind, "direction": s.direction} for s in found.steps],
    })  # fmt: skip


def _node(node) -> dict:
    if hasattr(node, "mem_id"):
        return {"id": f"m:{node.mem_id}", "label": node.text[:80], "type": "memory"}
    return {"id": f"e:{node.entity_id}", "label": node.name, "type": "entity", "kind": node.kind}
