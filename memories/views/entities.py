"""Entities: the list, the gazetteer, an entity's page and a curator's corrections."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from memories import services
from memories.errors import MemoryEngineError, ValidationFailed
from memories.forms import (
    EntityFilterForm,
    EntityForm,
    MergeForm,
    RetypeForm,
    SplitForm,
    UndoSupersessionForm,
    UnmergeForm,
)
from memories.models import Entity, Memory
from memories.selectors.hub import entity_hub
from memories.selectors.reader import Reader
from memories.selectors.relations import (
    entity_by_name,
    entity_get,
    entity_list,
    entity_memories,
)
from memories.serializers import EntityListInput, parse
from memories.views.common import (
    bars,
    by_day,
    by_month,
    form_errors,
    page_context,
    page_error,
    page_reader,
    paged,
)


def _entity(reader: Reader, entity_id: str):
    try:
        return entity_get(reader, entity_id)
    except MemoryEngineError as exc:
        raise page_error(exc) from exc


@login_required
@require_http_methods(["GET", "POST"])
def entities(request: HttpRequest, slug: str) -> HttpResponse:
    """The workspace's entities, most mentioned first; curators declare entities for the
    gazetteer here (a name, a type, aliases)."""
    reader = page_reader(request, slug)
    membership = reader.membership
    form = EntityForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            result = services.entity_declare(
                workspace_id=membership.workspace_id,
                user=request.user,
                **form.service_arguments(),
            )
        except ValidationFailed as exc:
            form_errors(form, exc, rename={"type": "kind"})
        else:
            verb = "Declared" if result.created else "Now declared"
            messages.success(request, f"{verb}: {result.entity.name} ({result.entity.kind}).")
            return redirect("dashboard:entity", slug=slug, entity_id=result.entity.entity_id)
    filters = EntityFilterForm(request.GET or None)
    values: dict[str, Any] = {}
    if filters.is_bound:
        try:
            values = parse(
                EntityListInput,
                {k: v for k, v in request.GET.items() if v and k in ("query", "type")},
                from_text=True,
            )
        except ValidationFailed as exc:
            form_errors(filters, exc)
    listed = entity_list(
        reader,
        query=values.get("query", ""),
        kind=values.get("type", ""),
    )
    return render(
        request,
        "memories/entities.html",
        page_context(request, membership, form=form, filters=filters,
                 page=paged(request, listed)),
    )  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def entity_page(request: HttpRequest, slug: str, entity_id: str) -> HttpResponse:
    """An entity: its names, the memories that mention it over time and newest first, and,
    for curators, merging it into another entity or undoing its merge, and correcting its type
    (each with a reason)."""
    reader = page_reader(request, slug)
    membership = reader.membership
    entity = _entity(reader, entity_id)
    merge = MergeForm(request.POST if "into" in request.POST else None)
    unmerge = UnmergeForm(request.POST if "unmerge" in request.POST else None)
    retype = RetypeForm(request.POST if "retype" in request.POST else None)
    split = SplitForm(request.POST if "split" in request.POST else None)
    undo = UndoSupersessionForm(request.POST if "undo" in request.POST else None)
    memories = entity_memories(reader, entity)
    if request.method == "POST":
        if undo.is_bound:
            done = _undo(request, memories, undo)
        else:
            done = _entity_change(request, reader, entity, merge, unmerge, retype, split)
        if done:
            messages.success(request, done)
            return redirect("dashboard:entity", slug=slug, entity_id=entity.entity_id)
    months = by_month(memories.values_list("created_at", flat=True))
    shown = memories.defer(*Memory.UNREAD_ON_PAGES)
    page = paged(request, shown.select_related("scope", "attributed_to"))
    events = entity.events.select_related("user", "agent").order_by("created_at", "id")
    return render(
        request,
        "memories/entity.html",
        page_context(request, membership, entity=entity, page=page, days=by_day(page),
                 over_time=bars(months), merge=merge, unmerge=unmerge, retype=retype,
                 events=events, merged=entity.merged.all(), split=split,
                 namesakes=_namesakes(entity), undo=undo,
                 hub=entity_hub(reader, entity, shown, timezone.now())),
    )  # fmt: skip


def _undo(request, memories, form) -> str | None:
    """Undo the supersession of one of the entity's memories (a curator's, with a reason): the
    message, or None with the form's errors set. A memory the reader does not see, or that does
    not mention the entity, is a 404 like a missing one."""
    mem_id = request.POST.get("undo", "")
    memory = memories.filter(mem_id=mem_id).first()
    if memory is None:
        raise Http404("No such memory.")
    if not form.is_valid():
        return None
    try:
        with transaction.atomic():
            services.supersession_undo(
                memory=memory, reason=form.cleaned_data["reason"], user=request.user
            )
    except ValidationFailed as exc:
        form_errors(form, exc, rename={"mem_id": "__all__"})
        return None
    except MemoryEngineError as exc:
        raise page_error(exc) from exc
    return f"Undone: {memory.text[:80]} is true again."


def _namesakes(entity):
    """The other entities of its name that stand for themselves: other things ("Jordan" the
    country beside Jordan the person)."""
    return (
        Entity.objects.filter(
            workspace_id=entity.workspace_id, normalized=entity.normalized, merged_into__isnull=True
        )
        .exclude(pk=entity.pk)
        .order_by("kind")
    )


def _entity_change(request, reader, entity, merge, unmerge, retype, split) -> str | None:
    """The curator's change the posted form asks for (merge, undo a merge, correct the type,
    split mentions off to a namesake): what was done, for the message, or None with the form's
    errors set."""
    form = next((f for f in (merge, unmerge, retype, split) if f.is_bound), None)
    if form is None or not form.is_valid():
        return None
    reason = form.cleaned_data["reason"]
    try:
        if form is merge:
            into = _merge_target(reader, form.cleaned_data["into"], entity)
            services.entity_merge(user=request.user, entity=entity, into=into, reason=reason)
            return f"{entity.name} is merged into {into.name}."
        if form is unmerge:
            services.entity_unmerge(user=request.user, entity=entity, reason=reason)
            return f"{entity.name} stands for itself again."
        if form is split:
            namesake = services.entity_split(
                user=request.user,
                entity=entity,
                kind=form.cleaned_data["split"],
                memories=form.memory_ids(),
                reason=reason,
            )
            moved = len(set(form.memory_ids()))
            plural = "" if moved == 1 else "s"
            return f"{moved} mention{plural} moved to {namesake.name} ({namesake.kind})."
        old = entity.kind
        entity = services.entity_retype(
            user=request.user, entity=entity, kind=form.cleaned_data["retype"], reason=reason
        )
        return f"{entity.name} is a {entity.kind} now (was {old})."
    except ValidationFailed as exc:
        field = "split" if form is split else "retype"
        form_errors(form, exc, rename={"entity": "__all__", "type": field})
        return None


def _merge_target(reader: Reader, given: str, entity):
    """The entity named by ``given``: its id, or a name or alias only one entity has."""
    given = given.strip()
    try:
        return entity_get(reader, given)
    except MemoryEngineError:
        pass
    found = [e for e in entity_by_name(reader, given) if e.pk != entity.pk]
    if len(found) != 1:
        detail = "no entity has" if not found else f"{len(found)} entities have"
        raise ValidationFailed.single(
            "into", f"{detail} that name: give the entity's id (shown on its page)."
        )
    return found[0]
