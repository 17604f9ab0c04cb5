"""The team's pages: agents and their tokens, members and their roles, erasure."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memories import services
from memories.errors import MemoryEngineError, ValidationFailed
from memories.forms import (
    AgentForm,
    EraseForm,
    MemberForm,
)
from memories.selectors import (
    memory_texts,
    workspace_agents,
    workspace_members,
)
from memories.views.common import (
    error_text,
    form_errors,
    page_context,
    page_error,
    page_membership,
    page_reader,
    posted_id,
)


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
                    agent_id=posted_id(request, "revoke"),
                )
            except ValidationFailed as exc:
                messages.error(request, error_text(exc))
            except MemoryEngineError as exc:
                raise page_error(exc) from exc
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
                form_errors(form, exc, rename={"scopes": "__all__", "workspace": "__all__"})
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
                    membership_id=posted_id(request, "remove"),
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
                messages.error(request, error_text(exc))
                return redirect("dashboard:members", slug=slug)
            form_errors(form, exc)
        except MemoryEngineError as exc:
            raise page_error(exc) from exc
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
    reader = page_reader(request, slug, "erase")  # the page, its preview too
    membership, workspace = reader.membership, reader.workspace
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
            form_errors(form, exc)
        except MemoryEngineError as exc:
            raise page_error(exc) from exc
        try:
            found = services.memories_erase_by_user(
                user=request.user, workspace=workspace, reason="", dry_run=True, **chosen
            )
        except ValidationFailed as exc:
            form_errors(form, exc)
        except MemoryEngineError as exc:
            raise page_error(exc) from exc
        else:
            shown = found.mem_ids[:ERASE_PREVIEW]
            texts = memory_texts(reader, shown)
            preview = {"count": found.count, "memories": [(m, texts[m]) for m in shown]}
    return render(
        request,
        "memories/erase.html",
        page_context(request, membership, form=form, preview=preview),
    )
