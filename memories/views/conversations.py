"""A conversation's page: a session's memories as a timeline, with their speakers, and what
consolidation made of it (the facts true now, what changed, the entities and threads)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from memories.models import Memory
from memories.selectors.hub import session_hub
from memories.views.common import by_day, page_context, page_reader, paged

#: Memories a page of the timeline shows, in the conversation's order.
TIMELINE_PAGE = 100


@login_required
@require_GET
def conversation_page(request: HttpRequest, slug: str, session: str) -> HttpResponse:
    """The session ``session``: 404 when the reader sees none of its memories (another
    workspace's session, another agent's private one, or none of that name)."""
    reader = page_reader(request, slug)
    memories = reader.sees(Memory.objects.filter(session=session)).defer(*Memory.UNREAD_ON_PAGES)
    if not memories.exists():
        raise Http404("No such conversation.")
    timeline = memories.select_related("scope", "attributed_to").order_by("created_at", "id")
    page = paged(request, timeline, size=TIMELINE_PAGE)
    days = by_day(page.object_list)
    return render(
        request,
        "memories/conversation.html",
        page_context(request, reader.membership, session=session, page=page, days=days,
                 hub=session_hub(reader, memories, timezone.now())),
    )  # fmt: skip
