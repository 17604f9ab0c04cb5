"""The team dashboard: server-rendered pages over the same services and selectors as the API.

A page belongs to one workspace (``/w/<slug>/…``) and needs a membership in it; anything else,
a workspace the user is not a member of or a memory of another workspace, is a 404. Viewers
read; curators and admins also give feedback and manage agents (a viewer's forged POST is a
403, and nothing changes).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from memories import services
from memories.compile import compile_options, compiled_memory_file, stare_marks
from memories.compile.selection import PROTECTED_SIGNIFICANCE
from memories.errors import MemoryEngineError, NotFound, ValidationFailed
from memories.forms import (
    AgentForm,
    CompileForm,
    DivergenceCloseForm,
    EntityFilterForm,
    EntityForm,
    EraseForm,
    FeedbackForm,
    MemberForm,
    MemoryListForm,
    MergeForm,
    RetypeForm,
    SearchForm,
    SourceFilterForm,
    UnmergeForm,
)
from memories.kinds import ENTITY_TYPES
from memories.models import DEFAULT_SIGNIFICANCE, Membership, Memory
from memories.neighbourhood import neighbourhood
from memories.presenters import SOURCE_TOPICS_LISTED, error_status
from memories.search import memory_search
from memories.selectors import (
    membership_of,
    memberships_of,
    memory_history,
    memory_texts,
    require_role,
    supersession_chain,
    workspace_agents,
    workspace_members,
    workspace_memory,
    workspace_overview,
)
from memories.selectors.divergences import divergence_get, divergences_visible
from memories.selectors.memories import memory_list
from memories.selectors.relations import (
    entity_by_name,
    entity_get,
    entity_list,
    entity_memories,
    memory_entities,
    memory_links,
)
from memories.selectors.sources import source_detail, source_events, source_list, source_records
from memories.serializers import EntityListInput, MemoryPageInput, SearchInput, parse
from memories.services.divergence import divergence_close

FEEDBACK_LABELS = {
    "important": "Important",
    "demote": "Demote",
    "pin": "Pin",
    "unpin": "Unpin",
    "forget": "Forget",
}


def page_membership(request: HttpRequest, slug: str) -> Membership:
    """The user's membership of the page's workspace; 404 when the user does not see it."""
    try:
        return membership_of(request.user, slug)
    except MemoryEngineError as exc:
        raise _page_error(exc) from exc


def _page_error(exc: MemoryEngineError) -> Exception:
    """The page's answer to an engine error that is not a form error, by the one table of
    statuses (``presenters.error_status``): 404 and 403 as Django's own pages."""
    status = error_status(exc)
    if status == 404:
        return Http404(exc.message)
    if status == 403:
        return PermissionDenied(exc.message)
    return exc


def _error_text(exc: ValidationFailed) -> str:
    """A ValidationFailed as a message for a page without a form field to put it under."""
    return " ".join(message for messages_ in exc.errors.values() for message in messages_)


def _posted_id(request: HttpRequest, name: str) -> int:
    """A row's id posted by a button; 404 for anything that cannot be one (as for a row that
    does not exist)."""
    value = request.POST.get(name, "")
    if not (value.isdigit() and len(value) < 19):
        raise Http404("No such row.")
    return int(value)


def _form_errors(
    form: Form, exc: ValidationFailed, *, rename: dict[str, str] | None = None
) -> None:
    """A ValidationFailed as the form's errors: each field's under it, the rest on top."""
    for field, field_errors in exc.errors.items():
        field = (rename or {}).get(field, field)
        if field not in form.errors or field not in form.fields:
            form.add_error(field if field in form.fields else None, " ".join(field_errors))


def page_context(request: HttpRequest, membership: Membership, **extra: Any) -> dict[str, Any]:
    """What every workspace page's template gets (the navigation, the role) and ``extra``."""
    return {
        "membership": membership,
        "workspace": membership.workspace,
        "can_curate": membership.can_curate,
        "is_admin": membership.role == Membership.Role.ADMIN,
        "workspaces": memberships_of(request.user),
        "entity_types": ENTITY_TYPES,
        **extra,
    }


@login_required
def home(request: HttpRequest) -> HttpResponse:
    chosen = request.GET.get("ws", "")
    if chosen:  # the workspace switcher, without JavaScript
        if not re.fullmatch(r"[-a-zA-Z0-9_]+", chosen):
            raise Http404("No such workspace.")
        return redirect("dashboard:overview", slug=chosen)
    visible = memberships_of(request.user)
    if not visible:
        return render(request, "memories/no_workspace.html")
    return redirect("dashboard:overview", slug=visible[0].workspace.slug)


@login_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    membership = page_membership(request, slug)
    counts = workspace_overview(membership.workspace)
    return render(
        request,
        "memories/overview.html",
        page_context(
            request,
            membership,
            total=counts.total,
            by_category=counts.by_category,
            by_type=counts.by_type,
            by_scope=counts.by_scope,
            per_week=_bars([(week.strftime("%d %b"), n) for week, n in counts.per_week]),
            significance=_bars([(f"{i / 10:.1f}", n) for i, n in enumerate(counts.significance)]),
            recent=counts.recent,
        ),
    )


#: A bar chart's frame (SVG units): the y axis's labels on the left, bars 100 high from
#: ``BAR_TOP``, the x axis's labels below, each bar's value above it.
BAR_LEFT, BAR_TOP, BAR_HEIGHT, BAR_STEP = 30, 14, 100, 36


def _bars(points: list[tuple[str, int]]) -> dict[str, Any]:
    """A bar chart's geometry for the template's inline SVG: bars with their values, a y axis
    from 0 to the largest count, labels under the bars, each bar's title for hovering."""
    top = max((n for _, n in points), default=0)
    scale = top or 1
    base = BAR_TOP + BAR_HEIGHT
    return {
        "bars": [
            {
                "label": label,
                "n": n,
                "x": BAR_LEFT + i * BAR_STEP + 3,
                "middle": BAR_LEFT + i * BAR_STEP + 18,
                "height": round(BAR_HEIGHT * n / scale),
                "y": base - round(BAR_HEIGHT * n / scale),
                "value_y": base - round(BAR_HEIGHT * n / scale) - 3,
            }
            for i, (label, n) in enumerate(points)
        ],
        "width": BAR_LEFT + max(len(points), 1) * BAR_STEP,
        "left": BAR_LEFT,
        "top": BAR_TOP,
        "base": base,
        "label_y": base + 13,
        "height": base + 20,
        "max": top,
        "empty": top == 0,
    }


@login_required
def search(request: HttpRequest, slug: str) -> HttpResponse:
    membership = page_membership(request, slug)
    form = SearchForm(request.GET or None)
    hits, errors = [], {}
    if request.GET.get("query"):
        data = {k: v for k, v in request.GET.items() if v != "" and k in SearchInput().fields}
        try:
            hits = memory_search(workspace=membership.workspace, arguments=data, from_text=True)
        except ValidationFailed as exc:
            errors = exc.errors
            _form_errors(form, exc)
    elif request.GET:
        form.add_error("query", "Type what you are looking for.")
    rows = [{"hit": hit, "marks": stare_marks(hit.memory.stare_scores, "marks")} for hit in hits]
    return render(
        request,
        "memories/search.html",
        page_context(request, membership, form=form, rows=rows, errors=errors,
                 feedback=FeedbackForm(), labels=FEEDBACK_LABELS),
    )  # fmt: skip


@login_required
def memories_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Browse the workspace's memories without a query: the list's filters (in the URL), newest
    or most significant first, a page at a time; works without JavaScript."""
    membership = page_membership(request, slug)
    form = MemoryListForm(request.GET or None)
    fields = MemoryPageInput().fields
    data = {k: v for k, v in request.GET.items() if v != "" and k in fields and k != "page"}
    try:
        values = parse(MemoryPageInput, data, from_text=True)
        memories = memory_list(
            workspace_id=membership.workspace_id, scope_ids=None, values=values, now=timezone.now()
        )
    except ValidationFailed as exc:
        _form_errors(form, exc)
        memories = Memory.objects.none()
    page = _paged(request, memories)
    query = "&".join(f"{k}={quote(v)}" for k, v in data.items())
    return render(
        request,
        "memories/memories.html",
        page_context(request, membership, form=form, page=page, query=query,
                 filters_set=len(data),
                 rows=[{"memory": m, "marks": stare_marks(m.stare_scores, "marks")}
                       for m in page.object_list]),
    )  # fmt: skip


def _memory(membership: Membership, mem_id: str) -> Memory:
    try:
        return workspace_memory(workspace=membership.workspace, mem_id=mem_id)
    except MemoryEngineError as exc:
        raise _page_error(exc) from exc


@login_required
def memory_page(request: HttpRequest, slug: str, mem_id: str) -> HttpResponse:
    membership = page_membership(request, slug)
    memory = _memory(membership, mem_id)
    newer, older = supersession_chain(memory)
    links = memory_links(memory, None)
    scores = [
        {"dim": d.upper(), "score": memory.stare_scores[d], "origin": memory.stare_origins[d]}
        for d in "stare"
    ]
    return render(
        request,
        "memories/memory.html",
        page_context(request, membership, memory=memory, scores=scores,
                 events=memory_history(memory), newer=newer, older=older,
                 feedback=FeedbackForm(), labels=FEEDBACK_LABELS, window=_window(memory),
                 marks=stare_marks(memory.stare_scores, "marks"),
                 entities=memory_entities(memory), links=links,
                 neighbourhood=neighbourhood(memory, links), attributed=memory.claimant,
                 default_significance=DEFAULT_SIGNIFICANCE, protected=PROTECTED_SIGNIFICANCE),
    )  # fmt: skip


@login_required
def sources(request: HttpRequest, slug: str) -> HttpResponse:
    """Sources and their records (``memories.asymmetry``): writers and the entities claims are
    attributed to, most judged first, with their estimates shrunk toward the workspace's
    prior."""
    membership = page_membership(request, slug)
    form = SourceFilterForm(request.GET or None)
    kind, query = "", ""
    if form.is_bound and form.is_valid():
        kind, query = form.cleaned_data["kind"], form.cleaned_data["query"]
    records = source_records(membership.workspace_id)
    rows = source_list(records, kind=kind, query=query)
    return render(
        request,
        "memories/sources.html",
        page_context(request, membership, page=_paged(request, rows), records=records,
                 filters=form, ranking_on=settings.MM_ASYMMETRY_RANKING),
    )  # fmt: skip


@login_required
def source_page(request: HttpRequest, slug: str, kind: str, key: str) -> HttpResponse:
    """One source's record, its records on topics and the events behind it; a source with no
    memory in the workspace is a 404."""
    membership = page_membership(request, slug)
    if kind not in ("writer", "entity"):
        raise Http404("No such kind of source.")
    records = source_records(membership.workspace_id)
    try:
        record = source_detail(records, kind=kind, key=key)
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    topics = sorted(record.on_topics.values(), key=lambda r: (-r.judged, r.name.lower()))
    events = source_events(membership.workspace_id, None, kind=kind, key=key)
    return render(
        request,
        "memories/source.html",
        page_context(request, membership, record=record, records=records,
                 topics=topics[:SOURCE_TOPICS_LISTED], events=events),
    )  # fmt: skip


def _window(memory: Memory) -> dict[str, float]:
    """Where the validity window sits on a time line from the earliest to the latest of its
    dates, the memory's writing and now (percentages of the line)."""
    now = timezone.now()
    moments = [m for m in (memory.valid_from, memory.valid_until, memory.created_at, now) if m]
    start, end = min(moments), max(moments)
    span = max((end - start).total_seconds(), 1.0)

    def at(moment) -> float:
        return round(100 * (moment - start).total_seconds() / span, 1)

    left = at(memory.valid_from) if memory.valid_from else 0.0
    right = at(memory.valid_until) if memory.valid_until else 100.0
    return {"left": left, "width": max(right - left, 0.5), "now": at(now)}


@login_required
@require_POST
def feedback(request: HttpRequest, slug: str, mem_id: str) -> HttpResponse:
    membership = page_membership(request, slug)
    memory = _memory(membership, mem_id)
    form = FeedbackForm(request.POST)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("dashboard:memory", args=[slug, mem_id])
    if not form.is_valid():
        for field, field_errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(field_errors)}")
        return redirect(back)
    action, reason = form.cleaned_data["action"], form.cleaned_data["reason"]
    try:
        services.memory_curate_by_user(
            user=request.user, memory_pk=memory.pk, action=action, reason=reason
        )
    except MemoryEngineError as exc:
        if error_status(exc) in (403, 404):
            raise _page_error(exc) from exc
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{FEEDBACK_LABELS[action]}: {memory.mem_id} ({reason})")
    return redirect(back)


@login_required
def compiled(request: HttpRequest, slug: str) -> HttpResponse:
    membership = page_membership(request, slug)
    form = CompileForm(request.GET or None)
    options = compile_options()
    if form.is_bound and form.is_valid():
        options = compile_options(
            **{k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
        )
    result = compiled_memory_file(workspace=membership.workspace, options=options)
    if request.GET.get("download") and not form.errors:
        response = HttpResponse(result.markdown, content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="MEMORY-{slug}.md"'
        return response
    texts = memory_texts(
        workspace=membership.workspace, mem_ids=[entry.mem_id for entry in result.cut]
    )
    return render(
        request,
        "memories/compiled.html",
        page_context(request, membership, form=form, result=result,
                 cut=[{"entry": e, "text": texts.get(e.mem_id, "")} for e in result.cut]),
    )  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def agents(request: HttpRequest, slug: str) -> HttpResponse:
    membership = page_membership(request, slug)
    form = AgentForm(request.POST or None)
    token = None
    if request.method == "POST":
        if "revoke" in request.POST:
            try:
                agent = services.agent_revoke(
                    user=request.user,
                    workspace=membership.workspace,
                    agent_id=_posted_id(request, "revoke"),
                )
            except ValidationFailed as exc:
                messages.error(request, _error_text(exc))
            except MemoryEngineError as exc:
                raise _page_error(exc) from exc
            else:
                messages.success(request, f"Token of {agent.name} revoked.")
            return redirect("dashboard:agents", slug=slug)
        if form.is_valid():
            try:
                agent, token = services.agent_create(
                    by=request.user,
                    workspace_slug=slug,
                    name=form.cleaned_data["name"],
                    shared_scopes=form.cleaned_data["scopes"],
                )
            except ValidationFailed as exc:
                _form_errors(form, exc, rename={"scopes": "__all__", "workspace": "__all__"})
    listed = workspace_agents(membership.workspace)
    return render(
        request,
        "memories/agents.html",
        page_context(request, membership, agents=listed, form=form, token=token),
    )


@login_required
@require_http_methods(["GET", "POST"])
def members(request: HttpRequest, slug: str) -> HttpResponse:
    """The workspace's members and their roles; its admins add members by username, change a
    role, or remove a member (never the last admin)."""
    membership = page_membership(request, slug)
    workspace = membership.workspace
    form = MemberForm(request.POST if "username" in request.POST else None)
    if request.method == "POST":
        try:
            if "remove" in request.POST:
                removed = services.membership_remove(
                    by=request.user,
                    workspace=workspace,
                    membership_id=_posted_id(request, "remove"),
                )
                messages.success(request, f"{removed.user} is no longer a member.")
                return redirect("dashboard:members", slug=slug)
            if form.is_valid():
                saved = services.membership_set(
                    by=request.user,
                    workspace=workspace,
                    username=form.cleaned_data["username"],
                    role=form.cleaned_data["role"],
                )
                messages.success(request, f"{saved.user} is a {saved.role} of {workspace.slug}.")
                return redirect("dashboard:members", slug=slug)
        except ValidationFailed as exc:
            if "remove" in request.POST:
                messages.error(request, _error_text(exc))
                return redirect("dashboard:members", slug=slug)
            _form_errors(form, exc)
        except MemoryEngineError as exc:
            raise _page_error(exc) from exc
    return render(
        request,
        "memories/members.html",
        page_context(request, membership, members=workspace_members(workspace), form=form),
    )


#: How many of the memories an erasure would remove its preview lists.
ERASE_PREVIEW = 20


@login_required
@require_http_methods(["GET", "POST"])
def erase(request: HttpRequest, slug: str) -> HttpResponse:
    """Erase memories for good, as a workspace admin: a source's, an agent's, a session's or
    one memory. "Preview" lists what would go; "Erase" (with the box ticked) erases them and
    leaves a tombstone each. Other members: 403; another workspace: 404."""
    membership = page_membership(request, slug)
    workspace = membership.workspace
    try:
        require_role(request.user, workspace, "erase")  # the page, its preview too
    except MemoryEngineError as exc:
        raise _page_error(exc) from exc
    form = EraseForm(request.POST if request.method == "POST" else request.GET or None)
    preview = None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        chosen = {"by": data["by"], "value": data["value"].strip()}
        erasing = request.method == "POST" and "erase" in request.POST
        if erasing and not data["confirm"]:
            form.add_error("confirm", "Tick the box: an erasure cannot be undone.")
            erasing = False
        try:
            if erasing:
                done = services.memories_erase_by_user(
                    user=request.user, workspace=workspace, reason=data["reason"], **chosen
                )
                messages.success(
                    request,
                    f"Erased {done.count:,} memories for good "
                    f"({done.episodes_rewritten:,} episodes rewritten, "
                    f"{done.entities_removed:,} entities removed).",
                )
                return redirect("dashboard:erase", slug=slug)
        except ValidationFailed as exc:
            _form_errors(form, exc)
        except MemoryEngineError as exc:
            raise _page_error(exc) from exc
        try:
            found = services.memories_erase_by_user(
                user=request.user, workspace=workspace, reason="", dry_run=True, **chosen
            )
        except ValidationFailed as exc:
            _form_errors(form, exc)
        except MemoryEngineError as exc:
            raise _page_error(exc) from exc
        else:
            shown = found.mem_ids[:ERASE_PREVIEW]
            texts = memory_texts(workspace=workspace, mem_ids=shown)
            preview = {"count": found.count, "memories": [(m, texts[m]) for m in shown]}
    return render(
        request,
        "memories/erase.html",
        page_context(request, membership, form=form, preview=preview),
    )


# --- Entities --------------------------------------------------------------------------------


def _entity(membership: Membership, entity_id: str):
    try:
        return entity_get(workspace_id=membership.workspace_id, entity_id=entity_id, scope_ids=None)
    except MemoryEngineError as exc:
        raise _page_error(exc) from exc


def _paged(request: HttpRequest, items, size: int = 25):
    paginator = Paginator(items, size)
    return paginator.get_page(request.GET.get("page"))


@login_required
@require_http_methods(["GET", "POST"])
def entities(request: HttpRequest, slug: str) -> HttpResponse:
    """The workspace's entities, most mentioned first; curators declare entities for the
    gazetteer here (a name, a type, aliases)."""
    membership = page_membership(request, slug)
    form = EntityForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            result = services.entity_declare(
                workspace_id=membership.workspace_id,
                user=request.user,
                **form.service_arguments(),
            )
        except ValidationFailed as exc:
            _form_errors(form, exc, rename={"type": "kind"})
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
            _form_errors(filters, exc)
    listed = entity_list(
        workspace_id=membership.workspace_id,
        scope_ids=None,
        query=values.get("query", ""),
        kind=values.get("type", ""),
    )
    return render(
        request,
        "memories/entities.html",
        page_context(request, membership, form=form, filters=filters,
                 page=_paged(request, listed)),
    )  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def entity_page(request: HttpRequest, slug: str, entity_id: str) -> HttpResponse:
    """An entity: its names, the memories that mention it over time and newest first, and,
    for curators, merging it into another entity or undoing its merge, and correcting its type
    (each with a reason)."""
    membership = page_membership(request, slug)
    entity = _entity(membership, entity_id)
    merge = MergeForm(request.POST if "into" in request.POST else None)
    unmerge = UnmergeForm(request.POST if "unmerge" in request.POST else None)
    retype = RetypeForm(request.POST if "retype" in request.POST else None)
    if request.method == "POST":
        done = _entity_change(request, membership, entity, merge, unmerge, retype)
        if done:
            messages.success(request, done)
            return redirect("dashboard:entity", slug=slug, entity_id=entity.entity_id)
    memories = entity_memories(entity, None)
    months = _months(memories.values_list("created_at", flat=True))
    events = entity.events.select_related("user", "agent").order_by("created_at", "id")
    return render(
        request,
        "memories/entity.html",
        page_context(request, membership, entity=entity, page=_paged(request, memories),
                 over_time=_bars(months), merge=merge, unmerge=unmerge, retype=retype,
                 events=events, merged=entity.merged.all()),
    )  # fmt: skip


def _entity_change(request, membership, entity, merge, unmerge, retype) -> str | None:
    """The curator's change the posted form asks for (merge, undo a merge, correct the type):
    what was done, for the message, or None with the form's errors set."""
    form = next((f for f in (merge, unmerge, retype) if f.is_bound), None)
    if form is None or not form.is_valid():
        return None
    reason = form.cleaned_data["reason"]
    try:
        if form is merge:
            into = _merge_target(membership, form.cleaned_data["into"], entity)
            services.entity_merge(user=request.user, entity=entity, into=into, reason=reason)
            return f"{entity.name} is merged into {into.name}."
        if form is unmerge:
            services.entity_unmerge(user=request.user, entity=entity, reason=reason)
            return f"{entity.name} stands for itself again."
        old = entity.kind
        entity = services.entity_retype(
            user=request.user, entity=entity, kind=form.cleaned_data["retype"], reason=reason
        )
        return f"{entity.name} is a {entity.kind} now (was {old})."
    except ValidationFailed as exc:
        _form_errors(form, exc, rename={"entity": "__all__", "type": "retype"})
        return None


@login_required
@require_http_methods(["GET", "POST"])
def divergences(request: HttpRequest, slug: str) -> HttpResponse:
    """Memories by different writers that disagree, as divergence detection found them (open
    first by default; ``status`` filters); curators resolve or dismiss each with a reason."""
    membership = page_membership(request, slug)
    form = DivergenceCloseForm(request.POST or None)
    if request.method == "POST":
        # A divergence of another workspace, or none, is a 404 like a missing one.
        divergence = _divergence(membership, request.POST.get("divergence", ""))
        if form.is_valid():
            try:
                divergence_close(
                    divergence=divergence,
                    user=request.user,
                    status=form.cleaned_data["status"],
                    reason=form.cleaned_data["reason"],
                    right=form.cleaned_data["right"] or None,
                )
            except ValidationFailed as exc:
                _form_errors(form, exc)
            else:
                verb = form.cleaned_data["status"]
                messages.success(request, f"Divergence {divergence.divergence_id} {verb}.")
                return redirect(f"{request.path}?status={request.GET.get('status', 'open')}")
    status = request.GET.get("status", "open")
    if status not in ("open", "resolved", "dismissed", "all"):
        raise Http404("No such state.")
    rows = divergences_visible(
        workspace=membership.workspace, status=None if status == "all" else status
    )
    return render(
        request,
        "memories/divergences.html",
        page_context(request, membership, page=_paged(request, rows), status=status, form=form,
                 failed=request.POST.get("divergence") if form.errors else None,
                 detection_on=settings.MM_DIVERGENCE),
    )  # fmt: skip


def _divergence(membership: Membership, divergence_id: str):
    try:
        return divergence_get(divergence_id=divergence_id, workspace=membership.workspace)
    except MemoryEngineError as exc:
        raise _page_error(exc) from exc


#: The months the entity page's chart shows: at least the last 6, at most the last 24.
CHART_MONTHS = (6, 24)


def _months(moments) -> list[tuple[str, int]]:
    """Counts by month, every month from the first (or 24 months ago) to this one, at least
    the last 6, empty months included: a time line, not a list of busy months."""
    counts: dict[tuple[int, int], int] = {}
    for moment in moments:
        key = (moment.year, moment.month)
        counts[key] = counts.get(key, 0) + 1
    now = timezone.now()
    last = now.year * 12 + now.month - 1
    first = min((y * 12 + m - 1 for y, m in counts), default=last)
    first = max(min(first, last - CHART_MONTHS[0] + 1), last - CHART_MONTHS[1] + 1)
    return [
        (f"{date(n // 12, n % 12 + 1, 1):%b %y}", counts.get((n // 12, n % 12 + 1), 0))
        for n in range(first, last + 1)
    ]


def _merge_target(membership: Membership, given: str, entity):
    """The entity named by ``given``: its id, or a name or alias only one entity has."""
    given = given.strip()
    try:
        return entity_get(workspace_id=membership.workspace_id, entity_id=given, scope_ids=None)
    except MemoryEngineError:
        pass
    found = [
        e
        for e in entity_by_name(workspace_id=membership.workspace_id, name=given, scope_ids=None)
        if e.pk != entity.pk
    ]
    if len(found) != 1:
        detail = "no entity has" if not found else f"{len(found)} entities have"
        raise ValidationFailed.single(
            "into", f"{detail} that name: give the entity's id (shown on its page)."
        )
    return found[0]
