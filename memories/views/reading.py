"""The pages people read memories on: the overview, search, the Memories list, a memory (and
feedback on it), sources and the compiled file."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from memories import services
from memories.compile import compile_options, compiled_memory_file, stare_marks
from memories.compile.selection import PROTECTED_SIGNIFICANCE
from memories.eligibility import ELIGIBLE_WORDS
from memories.errors import MemoryEngineError, NotFound, ValidationFailed
from memories.forms import (
    CompileForm,
    FeedbackForm,
    MemoryListForm,
    SearchForm,
    SourceFilterForm,
)
from memories.models import DEFAULT_SIGNIFICANCE, Memory
from memories.operations import memory_search
from memories.presenters import SOURCE_TOPICS_LISTED, error_status
from memories.selectors import (
    Reader,
    enrichment_state,
    memberships_of,
    memory_get,
    memory_history,
    memory_texts,
    supersession_chain,
    workspace_overview,
)
from memories.selectors.hub import named_entities
from memories.selectors.memories import memory_list
from memories.selectors.relations import (
    memory_entities,
    memory_links,
)
from memories.selectors.sources import source_detail, source_events, source_list, source_records
from memories.serializers import MemoryPageInput, SearchInput, parse
from memories.views.common import (
    FEEDBACK_LABELS,
    bars,
    form_errors,
    page_context,
    page_error,
    page_membership,
    page_reader,
    paged,
    validity_words,
)
from memories.views.neighbourhood import neighbourhood


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
            per_week=bars([(week.strftime("%d %b"), n) for week, n in counts.per_week]),
            significance=bars([(f"{i / 10:.1f}", n) for i, n in enumerate(counts.significance)]),
            recent=counts.recent,
        ),
    )


#: The search filters a team sets most, shown first under "Filters" (the rest under "More").
COMMON_FILTERS = (
    "currently_valid", "category", "entity", "session", "written_from", "written_until", "as_of",
)  # fmt: skip


@login_required
def search(request: HttpRequest, slug: str) -> HttpResponse:
    reader = page_reader(request, slug)
    membership = reader.membership
    form = SearchForm(request.GET or None)
    hits, errors = [], {}
    if request.GET.get("query"):
        data = {k: v for k, v in request.GET.items() if v != "" and k in SearchInput().fields}
        try:
            hits = memory_search(reader, arguments=data, from_text=True)
        except ValidationFailed as exc:
            errors = exc.errors
            form_errors(form, exc)
    elif request.GET:
        form.add_error("query", "Type what you are looking for.")
    more = [f for f in form if f.name not in ("query", *COMMON_FILTERS)]
    named = named_entities([hit.memory for hit in hits])
    rows = [
        {"hit": hit, "marks": stare_marks(hit.memory.stare_scores, "marks"),
         "scores": stare_marks(hit.memory.stare_scores, "verbose"),
         "eligible": ELIGIBLE_WORDS.get(hit.eligible, hit.eligible),
         "valid": validity_words(hit.memory, short=True),
         "entities": named.get(hit.memory.pk, []),
         "found_by": " and ".join(hit.found_by), "placed_by": " → ".join(hit.placed_by)}
        for hit in hits
    ]  # fmt: skip
    return render(
        request,
        "memories/search.html",
        page_context(request, membership, form=form, rows=rows, errors=errors,
                 feedback=FeedbackForm(), labels=FEEDBACK_LABELS,
                 common=[form[name] for name in COMMON_FILTERS], more=more,
                 more_open=any(request.GET.get(f.name) or f.errors for f in more),
                 filters_set=sum(1 for k, v in request.GET.items() if v and k != "query")),
    )  # fmt: skip


@login_required
def memories_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Browse the workspace's memories without a query: the list's filters (in the URL), newest
    or most significant first, a page at a time; works without JavaScript."""
    reader = page_reader(request, slug)
    membership = reader.membership
    form = MemoryListForm(request.GET or None)
    fields = MemoryPageInput().fields
    data = {k: v for k, v in request.GET.items() if v != "" and k in fields and k != "page"}
    try:
        values = parse(MemoryPageInput, data, from_text=True)
        memories = memory_list(reader, values, timezone.now())
    except ValidationFailed as exc:
        form_errors(form, exc)
        memories = Memory.objects.none()
    page = paged(request, memories)
    query = "&".join(f"{k}={quote(v)}" for k, v in data.items())
    return render(
        request,
        "memories/memories.html",
        page_context(request, membership, form=form, page=page, query=query,
                 filters_set=len(data),
                 rows=[{"memory": m, "marks": stare_marks(m.stare_scores, "marks"),
                        "scores": stare_marks(m.stare_scores, "verbose")}
                       for m in page.object_list]),
    )  # fmt: skip


def _memory(reader: Reader, mem_id: str) -> Memory:
    try:
        return memory_get(reader, mem_id)
    except MemoryEngineError as exc:
        raise page_error(exc) from exc


@login_required
def memory_page(request: HttpRequest, slug: str, mem_id: str) -> HttpResponse:
    reader = page_reader(request, slug)
    membership = reader.membership
    memory = _memory(reader, mem_id)
    newer, older = supersession_chain(memory)
    links = memory_links(reader, memory)
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
                 validity=validity_words(memory),
                 scores_text=stare_marks(memory.stare_scores, "verbose"),
                 marks=stare_marks(memory.stare_scores, "marks"),
                 entities=memory_entities(memory), links=links,
                 enrichment=enrichment_state(memory),
                 neighbourhood=neighbourhood(memory, links), attributed=memory.claimant,
                 default_significance=DEFAULT_SIGNIFICANCE, protected=PROTECTED_SIGNIFICANCE,
                 metadata=_metadata_rows(memory)),
    )  # fmt: skip


def _metadata_rows(memory: Memory) -> list[dict[str, str]]:
    """Each metadata key with its value as JSON and, for a plain value, the Memories list
    filtered to it (the same filter as the API's ``metadata``)."""
    rows = []
    for key, value in sorted(memory.metadata.items()):
        plain = value is None or isinstance(value, str | int | float | bool)
        rows.append(
            {
                "key": key,
                "value": json.dumps(value, ensure_ascii=False),
                "query": quote(json.dumps({key: value}, ensure_ascii=False)) if plain else "",
            }
        )
    return rows


@login_required
def sources(request: HttpRequest, slug: str) -> HttpResponse:
    """Sources and their records (``memories.asymmetry.score``): writers and the entities claims are
    attributed to, most judged first, with their estimates shrunk toward the workspace's
    prior."""
    reader = page_reader(request, slug)
    membership = reader.membership
    form = SourceFilterForm(request.GET or None)
    kind, query = "", ""
    if form.is_bound and form.is_valid():
        kind, query = form.cleaned_data["kind"], form.cleaned_data["query"]
    records = source_records(reader)
    rows = source_list(records, kind=kind, query=query)
    return render(
        request,
        "memories/sources.html",
        page_context(request, membership, page=paged(request, rows), records=records,
                 filters=form, ranking_on=settings.MM_ASYMMETRY_RANKING),
    )  # fmt: skip


@login_required
def source_page(request: HttpRequest, slug: str, kind: str, key: str) -> HttpResponse:
    """One source's record, its records on topics and the events behind it; a source with no
    memory in the workspace is a 404."""
    reader = page_reader(request, slug)
    membership = reader.membership
    if kind not in ("writer", "entity"):
        raise Http404("No such kind of source.")
    records = source_records(reader)
    try:
        record = source_detail(records, kind=kind, key=key)
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    topics = sorted(record.on_topics.values(), key=lambda r: (-r.judged, r.name.lower()))
    events = source_events(reader, kind=kind, key=key)
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
    reader = page_reader(request, slug)
    memory = _memory(reader, mem_id)
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
            raise page_error(exc) from exc
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{FEEDBACK_LABELS[action]}: {memory.mem_id} ({reason})")
    return redirect(back)


@login_required
def compiled(request: HttpRequest, slug: str) -> HttpResponse:
    reader = page_reader(request, slug)
    membership = reader.membership
    form = CompileForm(request.GET or None)
    options = compile_options()
    if form.is_bound and form.is_valid():
        options = compile_options(
            **{k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
        )
    result = compiled_memory_file(reader, options=options)
    if request.GET.get("download") and not form.errors:
        response = HttpResponse(result.markdown, content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="MEMORY-{slug}.md"'
        return response
    texts = memory_texts(reader, [e.mem_id for e in [*result.included, *result.cut]])
    return render(
        request,
        "memories/compiled.html",
        page_context(request, membership, form=form, result=result,
                 included=[{"entry": e, "text": texts.get(e.mem_id, "")} for e in result.included],
                 cut=[{"entry": e, "text": texts.get(e.mem_id, "")} for e in result.cut]),
    )  # fmt: skip
