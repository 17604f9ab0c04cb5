"""The team dashboard: server-rendered pages over the same services and selectors as the API.

A page belongs to one workspace (``/w/<slug>/…``) and needs a membership in it; anything else,
a workspace the user is not a member of or a memory of another workspace, is a 404. Viewers
read; curators and admins also give feedback and manage agents (a viewer's forged POST is a
403, and nothing changes).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Func, IntegerField, Value
from django.db.models.functions import TruncWeek
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from memories import services
from memories.compile import compile_options, compiled_memory_file, stare_marks
from memories.errors import MemoryEngineError, ValidationFailed
from memories.forms import AgentForm, CompileForm, FeedbackForm, MemberForm, SearchForm
from memories.models import Agent, Membership, Memory, ProvenanceEvent, Workspace
from memories.search import memory_search
from memories.selectors import is_mem_id
from memories.serializers import SearchInput, parse

FEEDBACK_LABELS = {
    "important": "Important",
    "demote": "Demote",
    "pin": "Pin",
    "unpin": "Unpin",
    "forget": "Forget",
}


def _memberships(user: Any) -> list[Membership]:
    """The workspaces the user sees, each with the user's role: a superuser sees every
    workspace, as an admin (an unsaved membership where there is none)."""
    own = list(Membership.objects.filter(user=user).select_related("workspace"))
    if not user.is_superuser:
        return own
    by_workspace = {membership.workspace_id: membership for membership in own}
    return [
        by_workspace.get(workspace.pk)
        or Membership(user=user, workspace=workspace, role=Membership.Role.ADMIN)
        for workspace in Workspace.objects.order_by("slug")
    ]


def _membership(request: HttpRequest, slug: str) -> Membership:
    membership = (
        Membership.objects.select_related("workspace")
        .filter(user=request.user, workspace__slug=slug)
        .first()
    )
    if request.user.is_superuser:  # an admin of every workspace, member or not
        workspace = membership.workspace if membership else None
        workspace = workspace or Workspace.objects.filter(slug=slug).first()
        if workspace is not None:
            membership = Membership(user=request.user, workspace=workspace, role="admin")
    if membership is None:
        raise Http404("No such workspace.")
    return membership


def _context(request: HttpRequest, membership: Membership, **extra: Any) -> dict[str, Any]:
    return {
        "membership": membership,
        "workspace": membership.workspace,
        "can_curate": membership.can_curate,
        "is_admin": membership.role == Membership.Role.ADMIN,
        "workspaces": _memberships(request.user),
        **extra,
    }


@login_required
def home(request: HttpRequest) -> HttpResponse:
    chosen = request.GET.get("ws", "")
    if chosen:  # the workspace switcher, without JavaScript
        if not re.fullmatch(r"[-a-zA-Z0-9_]+", chosen):
            raise Http404("No such workspace.")
        return redirect("dashboard:overview", slug=chosen)
    visible = _memberships(request.user)
    if not visible:
        return render(request, "memories/no_workspace.html")
    return redirect("dashboard:overview", slug=visible[0].workspace.slug)


@login_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _membership(request, slug)
    memories = Memory.objects.filter(workspace=membership.workspace)
    this_week = _week_start(timezone.now())
    weeks = [this_week - timedelta(weeks=n) for n in range(11, -1, -1)]
    counted = {
        row["week"]: row["n"]
        for row in memories.filter(created_at__gte=weeks[0])
        .annotate(week=TruncWeek("created_at"))
        .values("week")
        .annotate(n=Count("id"))
    }
    per_week = [{"week": week, "n": counted.get(week, 0)} for week in weeks]
    buckets = dict(
        memories.filter(status=Memory.Status.ACTIVE)
        .annotate(
            bucket=Func(
                F("significance"),
                Value(0.0),
                Value(1.0),
                Value(10),
                function="width_bucket",
                output_field=IntegerField(),
            )
        )
        .values_list("bucket")
        .annotate(n=Count("id"))
    )
    # width_bucket puts 1.0 in an 11th bucket: it belongs with 0.9 to 1.0.
    significance = [
        buckets.get(b, 0) + (buckets.get(11, 0) if b == 10 else 0) for b in range(1, 11)
    ]
    return render(
        request,
        "memories/overview.html",
        _context(
            request,
            membership,
            total=memories.count(),
            by_category=memories.values("category").annotate(n=Count("id")).order_by("-n"),
            by_type=memories.values("memory_type").annotate(n=Count("id")).order_by("-n"),
            by_scope=memories.values("scope__name").annotate(n=Count("id")).order_by("-n"),
            per_week=_bars([(row["week"].strftime("%d %b"), row["n"]) for row in per_week]),
            significance=_bars([(f"{i / 10:.1f}", n) for i, n in enumerate(significance)]),
            recent=ProvenanceEvent.objects.filter(workspace=membership.workspace)
            .select_related("memory", "agent", "user")
            .order_by("-created_at", "-id")[:10],
        ),
    )


def _week_start(moment):
    """Monday 00:00 of the week, in the current time zone (as TruncWeek counts)."""
    local = timezone.localtime(moment)
    return (local - timedelta(days=local.weekday())).replace(
        hour=0, minute=0, second=0, microsecond=0
    )


def _bars(points: list[tuple[str, int]]) -> dict[str, Any]:
    """A bar chart's geometry for the template's inline SVG."""
    top = max((n for _, n in points), default=0) or 1
    width = 36
    return {
        "bars": [
            {
                "label": label,
                "n": n,
                "x": i * width,
                "height": round(100 * n / top),
                "y": 100 - round(100 * n / top),
            }
            for i, (label, n) in enumerate(points)
        ],
        "width": max(len(points), 1) * width,
    }


@login_required
def search(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _membership(request, slug)
    form = SearchForm(request.GET or None)
    hits, errors = [], {}
    if request.GET.get("query"):
        data = {k: v for k, v in request.GET.items() if v != "" and k in SearchInput().fields}
        try:
            hits = memory_search(workspace=membership.workspace, **parse(SearchInput, data))
        except ValidationFailed as exc:
            errors = exc.errors
            for field, field_errors in errors.items():
                if field not in form.errors:  # the form's own check said it already
                    form.add_error(field if field in form.fields else None, field_errors)
    elif request.GET:
        form.add_error("query", "Type what you are looking for.")
    rows = [{"hit": hit, "marks": stare_marks(hit.memory.stare_scores, "marks")} for hit in hits]
    return render(
        request,
        "memories/search.html",
        _context(request, membership, form=form, rows=rows, errors=errors,
                 feedback=FeedbackForm(), labels=FEEDBACK_LABELS),
    )  # fmt: skip


def _memory(membership: Membership, mem_id: str) -> Memory:
    if not is_mem_id(mem_id):
        raise Http404("No such memory.")
    memory = (
        Memory.objects.select_related("scope", "superseded_by", "follows")
        .filter(workspace=membership.workspace, mem_id=mem_id)
        .first()
    )
    if memory is None:
        raise Http404("No such memory.")
    return memory


@login_required
def memory_page(request: HttpRequest, slug: str, mem_id: str) -> HttpResponse:
    membership = _membership(request, slug)
    memory = _memory(membership, mem_id)
    newer, older = _chain(memory)
    events = memory.provenance.select_related("agent", "user").order_by("created_at", "id")
    scores = [
        {"dim": d.upper(), "score": memory.stare_scores[d], "origin": memory.stare_origins[d]}
        for d in "stare"
    ]
    return render(
        request,
        "memories/memory.html",
        _context(request, membership, memory=memory, scores=scores, events=events,
                 newer=newer, older=older, feedback=FeedbackForm(), labels=FEEDBACK_LABELS,
                 window=_window(memory),
                 marks=stare_marks(memory.stare_scores, "marks")),
    )  # fmt: skip


CHAIN_MAX = 20


def _chain(memory: Memory) -> tuple[list[Memory], list[Memory]]:
    """The memories that replaced this one (newest last) and those it replaced (oldest last),
    at most ``CHAIN_MAX`` each way: one query per step."""
    newer, current = [], memory
    while current.superseded_by_id and len(newer) < CHAIN_MAX:
        current = Memory.objects.only("mem_id", "text", "superseded_by").get(
            pk=current.superseded_by_id
        )
        newer.append(current)
    older, current = [], memory
    while len(older) < CHAIN_MAX:
        previous = Memory.objects.only("mem_id", "text").filter(superseded_by=current).first()
        if previous is None:
            break
        older.append(previous)
        current = previous
    return newer, older


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
    membership = _membership(request, slug)
    if not membership.can_curate:
        raise PermissionDenied("Viewers cannot change memories.")
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
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{FEEDBACK_LABELS[action]}: {memory.mem_id} ({reason})")
    return redirect(back)


@login_required
def compiled(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _membership(request, slug)
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
    mem_ids = [entry.mem_id for entry in result.cut]
    texts = dict(
        Memory.objects.filter(workspace=membership.workspace, mem_id__in=mem_ids).values_list(
            "mem_id", "text"
        )
    )
    return render(
        request,
        "memories/compiled.html",
        _context(request, membership, form=form, result=result,
                 cut=[{"entry": e, "text": texts.get(e.mem_id, "")} for e in result.cut]),
    )  # fmt: skip


@login_required
def readiness(request: HttpRequest, slug: str) -> HttpResponse:
    from readiness.report import readiness_report

    membership = _membership(request, slug)
    return render(
        request,
        "memories/readiness.html",
        _context(request, membership, reports=readiness_report()),
    )


@login_required
@require_http_methods(["GET", "POST"])
def agents(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _membership(request, slug)
    form = AgentForm(request.POST or None)
    token = None
    if request.method == "POST":
        if not membership.can_curate:
            raise PermissionDenied("Viewers cannot manage agents.")
        if "revoke" in request.POST:
            agent_id = request.POST["revoke"]
            agent = (
                Agent.objects.filter(workspace=membership.workspace, pk=int(agent_id)).first()
                if agent_id.isdigit() and len(agent_id) < 19
                else None
            )
            if agent is None:
                raise Http404("No such agent.")
            agent.is_active = False
            agent.save(update_fields=["is_active"])
            messages.success(request, f"Token of {agent.name} revoked.")
            return redirect("dashboard:agents", slug=slug)
        if form.is_valid():
            try:
                agent, token = services.agent_create(
                    workspace_slug=slug,
                    name=form.cleaned_data["name"],
                    shared_scopes=form.cleaned_data["scopes"],
                )
            except ValidationFailed as exc:
                for field, field_errors in exc.errors.items():
                    form.add_error("name" if field == "name" else None, " ".join(field_errors))
    listed = (
        Agent.objects.filter(workspace=membership.workspace)
        .select_related("private_scope")
        .prefetch_related("scopes")
        .order_by("name")
    )
    return render(
        request,
        "memories/agents.html",
        _context(request, membership, agents=listed, form=form, token=token),
    )


@login_required
@require_http_methods(["GET", "POST"])
def members(request: HttpRequest, slug: str) -> HttpResponse:
    """The workspace's members and their roles; its admins add members by username, change a
    role, or remove a member (never the last admin)."""
    membership = _membership(request, slug)
    workspace = membership.workspace
    form = MemberForm(request.POST if "username" in request.POST else None)
    if request.method == "POST":
        if membership.role != Membership.Role.ADMIN:
            raise PermissionDenied("Only the workspace's admins manage its members.")
        try:
            if "remove" in request.POST:
                member_id = request.POST["remove"]
                if not (member_id.isdigit() and len(member_id) < 19):
                    raise Http404("No such member.")
                removed = services.membership_remove(
                    by=request.user, workspace=workspace, membership_id=int(member_id)
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
            for field, field_errors in exc.errors.items():
                if field == "member":
                    messages.error(request, " ".join(field_errors))
                else:
                    form.add_error(field if field in form.fields else None, " ".join(field_errors))
            if "remove" in request.POST:
                return redirect("dashboard:members", slug=slug)
        except MemoryEngineError as exc:  # NotFound
            raise Http404(exc.message) from exc
    listed = (
        Membership.objects.filter(workspace=workspace)
        .select_related("user")
        .order_by("user__username")
    )
    return render(
        request,
        "memories/members.html",
        _context(request, membership, members=listed, form=form),
    )
