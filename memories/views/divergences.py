"""Divergences: memories by different writers that disagree, and a curator's decision on each."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memories.errors import MemoryEngineError, ValidationFailed
from memories.forms import (
    DivergenceCloseForm,
)
from memories.selectors.divergences import divergence_get, divergences_visible
from memories.selectors.reader import Reader
from memories.services.divergence import divergence_close
from memories.views.common import (
    form_errors,
    page_context,
    page_error,
    page_reader,
    paged,
)


@login_required
@require_http_methods(["GET", "POST"])
def divergences(request: HttpRequest, slug: str) -> HttpResponse:
    """Memories by different writers that disagree, as divergence detection found them (open
    first by default; ``status`` filters); curators resolve or dismiss each with a reason."""
    reader = page_reader(request, slug)
    membership = reader.membership
    form = DivergenceCloseForm(request.POST or None)
    if request.method == "POST":
        # A divergence of another workspace, or none, is a 404 like a missing one.
        divergence = _divergence(reader, request.POST.get("divergence", ""))
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
                form_errors(form, exc)
            else:
                verb = form.cleaned_data["status"]
                messages.success(request, f"Divergence {divergence.divergence_id} {verb}.")
                return redirect(f"{request.path}?status={request.GET.get('status', 'open')}")
    status = request.GET.get("status", "open")
    if status not in ("open", "resolved", "dismissed", "all"):
        raise Http404("No such state.")
    rows = divergences_visible(reader, status=None if status == "all" else status)
    return render(
        request,
        "memories/divergences.html",
        page_context(request, membership, page=paged(request, rows), status=status, form=form,
                 failed=request.POST.get("divergence") if form.errors else None,
                 detection_on=settings.MM_DIVERGENCE),
    )  # fmt: skip


def _divergence(reader: Reader, divergence_id: str):
    try:
        return divergence_get(reader, divergence_id)
    except MemoryEngineError as exc:
        raise page_error(exc) from exc
