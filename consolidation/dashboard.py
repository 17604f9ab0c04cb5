"""Consolidation where people look: its runs (with a "run now" for curators), the merges it made
(undone with a reason), its supersession proposals (accepted or rejected with a reason) and the
threads it found, each a page of the workspace's dashboard. Another workspace's run, memory,
proposal or thread is a 404, as one that does not exist; viewers read, curators act."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from django_q.tasks import async_task

from consolidation.forms import ProposalForm, RunNowForm, UndoMergeForm
from consolidation.models import ConsolidationRun, SupersessionProposal
from consolidation.presenters import phase_lines
from consolidation.services import (
    consolidation_start,
    enabled_phases,
    proposal_decide,
    proposal_undo,
)
from consolidation.tasks import RUN
from memories.errors import Conflict, ValidationFailed
from memories.models import Link, Memory, Thread
from memories.services import memory_restore
from memories.views import page_context, page_membership
from memories.views.common import by_day

PAGE_SIZE = 25


def _paged(request: HttpRequest, rows):
    return Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))


def _errors(form, exc: ValidationFailed) -> None:
    for field, messages_ in exc.errors.items():
        form.add_error(field if field in form.fields else None, " ".join(messages_))


@login_required
@require_http_methods(["GET", "POST"])
def runs(request: HttpRequest, slug: str) -> HttpResponse:
    """The workspace's consolidation runs, newest first: state, phases, each phase's counts and
    time, the error of a failed one; a curator starts one now (a worker runs it)."""
    membership = page_membership(request, slug)
    form = RunNowForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            run = consolidation_start(
                workspace=membership.workspace,
                trigger=ConsolidationRun.Trigger.API,
                dry_run=form.cleaned_data["dry_run"],
                user=request.user,
            )
        except Conflict as exc:
            form.add_error(None, exc.message)
        else:
            async_task(RUN, run.pk)
            messages.success(request, f"Consolidation run {run.run_id} queued.")
            return redirect(request.path)
    rows = ConsolidationRun.objects.filter(workspace=membership.workspace).select_related(
        "started_by_agent", "started_by_user"
    )
    page = _paged(request, rows)
    for run in page.object_list:
        run.lines = phase_lines(run)
    return render(
        request,
        "consolidation/runs.html",
        page_context(request, membership, page=page, form=form,
                     phases=enabled_phases(), every=settings.MM_CONSOLIDATE_EVERY),
    )  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def merges(request: HttpRequest, slug: str) -> HttpResponse:
    """Memories consolidation merged into another (kept, linked ``same_as``), newest first; a
    curator undoes a merge with a reason."""
    membership = page_membership(request, slug)
    form = UndoMergeForm(request.POST or None)
    if request.method == "POST":
        merged = Memory.objects.filter(
            workspace=membership.workspace, mem_id=request.POST.get("mem_id", "")
        ).first()
        if merged is None:
            raise Http404("No such memory.")
        if form.is_valid():
            try:
                memory_restore(merged=merged, reason=form.cleaned_data["reason"], user=request.user)
            except ValidationFailed as exc:
                _errors(form, exc)
            else:
                messages.success(request, f"Merge of {merged.mem_id} undone: it is active again.")
                return redirect(request.path)
    links = (
        Link.objects.filter(
            workspace=membership.workspace,
            kind="same_as",
            origin=Link.Origin.CONSOLIDATION,
            removed_at__isnull=True,
            source__status=Memory.Status.MERGED,
        )
        .select_related("source", "target_memory")
        .order_by("-created_at", "-id")
    )
    return render(
        request,
        "consolidation/merges.html",
        page_context(request, membership, page=_paged(request, links), form=form,
                     failed=request.POST.get("mem_id") if form.errors else None),
    )  # fmt: skip


PROPOSAL_STATES = ("open", "applied", "accepted", "rejected", "undone", "all")


@login_required
@require_http_methods(["GET", "POST"])
def proposals(request: HttpRequest, slug: str) -> HttpResponse:
    """Supersessions consolidation proposes (open first) or applied by its rule, each with the
    rule that found it and its score; a curator accepts (the older memory is superseded) or
    rejects an open one, and undoes an applied or accepted one (the older memory is active
    again), with a reason."""
    membership = page_membership(request, slug)
    form = ProposalForm(request.POST or None)
    if request.method == "POST":
        proposal = SupersessionProposal.objects.filter(
            workspace=membership.workspace, proposal_id=request.POST.get("proposal", "")
        ).first()
        if proposal is None:
            raise Http404("No such proposal.")
        if form.is_valid():
            decision = form.cleaned_data["decision"]
            try:
                if decision == "undo":
                    proposal_undo(
                        proposal=proposal, user=request.user, reason=form.cleaned_data["reason"]
                    )
                else:
                    proposal_decide(
                        proposal=proposal,
                        user=request.user,
                        accept=decision == "accept",
                        reason=form.cleaned_data["reason"],
                    )
            except ValidationFailed as exc:
                _errors(form, exc)
            else:
                verb = {"accept": "accepted", "reject": "rejected", "undo": "undone"}[decision]
                messages.success(request, f"Proposal {proposal.proposal_id} {verb}.")
                return redirect(f"{request.path}?status={request.GET.get('status', 'open')}")
    status = request.GET.get("status", "open")
    if status not in PROPOSAL_STATES:
        raise Http404("No such state.")
    rows = SupersessionProposal.objects.filter(workspace=membership.workspace).select_related(
        "older", "newer", "entity", "decided_by"
    )
    if status != "all":
        rows = rows.filter(status=status)
    return render(
        request,
        "consolidation/proposals.html",
        page_context(request, membership, page=_paged(request, rows), form=form, status=status,
                     states=PROPOSAL_STATES, every=settings.MM_CONSOLIDATE_EVERY,
                     failed=request.POST.get("proposal") if form.errors else None),
    )  # fmt: skip


THREAD_STATES = ("open", "resolved", "all")


@login_required
def threads(request: HttpRequest, slug: str) -> HttpResponse:
    """Open Threads (pilot): the threads of two memories or more, most recently seen first."""
    membership = page_membership(request, slug)
    status = request.GET.get("status", "open")
    if status not in THREAD_STATES:
        raise Http404("No such state.")
    rows = Thread.objects.filter(workspace=membership.workspace, size__gte=2).select_related(
        "scope"
    )
    if status != "all":
        rows = rows.filter(status=status)
    return render(
        request,
        "consolidation/threads.html",
        page_context(request, membership, page=_paged(request, rows), status=status,
                     states=THREAD_STATES, threads_on=settings.MM_OPEN_THREADS),
    )  # fmt: skip


@login_required
def thread_page(request: HttpRequest, slug: str, thread_id: str) -> HttpResponse:
    """One thread: its members on a time line, by session, with the cues that keep it open."""
    membership = page_membership(request, slug)
    thread = (
        Thread.objects.filter(workspace=membership.workspace, thread_id=thread_id)
        .select_related("scope")
        .prefetch_related(Prefetch("members__memory"))
        .first()
    )
    if thread is None:
        raise Http404("No such thread.")
    members = sorted(
        (member.memory for member in thread.members.all()), key=lambda m: (m.created_at, m.pk)
    )
    cued = {cue["mem_id"]: cue for cue in thread.cues}
    return render(
        request,
        "consolidation/thread.html",
        page_context(request, membership, thread=thread, days=by_day(members), cued=cued),
    )
