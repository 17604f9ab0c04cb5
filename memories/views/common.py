"""What every dashboard page shares: the workspace's membership, the page's context,
errors as form errors or pages, paging and charts."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.forms import Form
from django.http import Http404, HttpRequest
from django.utils import timezone

from memories.compile.render import MARK_THRESHOLD
from memories.errors import MemoryEngineError, ValidationFailed
from memories.kinds import ENTITY_TYPES
from memories.models import Membership
from memories.presenters import error_status
from memories.selectors import memberships_of
from memories.selectors.reader import Reader

FEEDBACK_LABELS = {
    "important": "Important",
    "demote": "Demote",
    "pin": "Pin",
    "unpin": "Unpin",
    "forget": "Forget",
}


def page_reader(request: HttpRequest, slug: str, action: str = "read") -> Reader:
    """The page's reader: the user as a member of its workspace whose role allows ``action``;
    404 when the user does not see the workspace, 403 when the role is below the action's."""
    try:
        return Reader.of_member(request.user, slug, action)
    except MemoryEngineError as exc:
        raise page_error(exc) from exc


def page_membership(request: HttpRequest, slug: str) -> Membership:
    """The user's membership of the page's workspace (its reader's); 404 when the user does
    not see it."""
    return page_reader(request, slug).membership


def page_error(exc: MemoryEngineError) -> Exception:
    """The page's answer to an engine error that is not a form error, by the one table of
    statuses (``presenters.error_status``): 404 and 403 as Django's own pages."""
    status = error_status(exc)
    if status == 404:
        return Http404(exc.message)
    if status == 403:
        return PermissionDenied(exc.message)
    return exc


def error_text(exc: ValidationFailed) -> str:
    """A ValidationFailed as a message for a page without a form field to put it under."""
    return " ".join(message for messages_ in exc.errors.values() for message in messages_)


def posted_id(request: HttpRequest, name: str) -> int:
    """A row's id posted by a button; 404 for anything that cannot be one (as for a row that
    does not exist)."""
    value = request.POST.get(name, "")
    if not (value.isdigit() and len(value) < 19):
        raise Http404("No such row.")
    return int(value)


def form_errors(form: Form, exc: ValidationFailed, *, rename: dict[str, str] | None = None) -> None:
    """A ValidationFailed as the form's errors: each field's under it, the rest on top."""
    for field, field_errors in exc.errors.items():
        field = (rename or {}).get(field, field)
        message = " ".join(field_errors)
        head, _, within = field.partition(".")
        if field not in form.fields and head in form.fields and within:
            field, message = head, f"{within}: {message}"  # a path inside the field's value
        if field not in form.errors or field not in form.fields:
            form.add_error(field if field in form.fields else None, message)


def page_context(request: HttpRequest, membership: Membership, **extra: Any) -> dict[str, Any]:
    """What every workspace page's template gets (the navigation, the role) and ``extra``."""
    return {
        "membership": membership,
        "workspace": membership.workspace,
        "can_curate": membership.can_curate,
        "is_admin": membership.role == Membership.Role.ADMIN,
        "workspaces": memberships_of(request.user),
        "entity_types": ENTITY_TYPES,
        "mark_threshold": MARK_THRESHOLD,
        **extra,
    }


def paged(request: HttpRequest, items, size: int = 25):
    paginator = Paginator(items, size)
    return paginator.get_page(request.GET.get("page"))


#: A bar chart's frame (SVG units): the y axis's labels on the left, bars 100 high from
#: ``BAR_TOP``, the x axis's labels below, each bar's value above it.
BAR_LEFT, BAR_TOP, BAR_HEIGHT, BAR_STEP = 30, 14, 100, 36


def bars(points: list[tuple[str, int]]) -> dict[str, Any]:
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


#: The months the entity page's chart shows: at least the last 6, at most the last 24.
CHART_MONTHS = (6, 24)


def by_month(moments) -> list[tuple[str, int]]:
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


def by_day(memories) -> list[tuple[Any, list[Any]]]:
    """Memories (in the order given) grouped by the day each was written, for a timeline."""
    days: list[tuple[Any, list[Any]]] = []
    for memory in memories:
        day = memory.created_at.date()
        if not days or days[-1][0] != day:
            days.append((day, []))
        days[-1][1].append(memory)
    return days


def validity_words(memory, *, short: bool = False) -> str:
    """A memory's validity window in plain words ("valid from 2026-03-01, with no end")."""
    fmt = "%Y-%m-%d" if short else "%Y-%m-%d %H:%M"
    start, end = memory.valid_from, memory.valid_until
    if start is None and end is None:
        return "always" if short else "valid with no start or end given"
    if end is None:
        return f"from {start:{fmt}}" if short else f"valid from {start:{fmt}}, with no end"
    if start is None:
        return f"until {end:{fmt}}" if short else f"valid until {end:{fmt}}"
    return (
        f"{start:{fmt}} to {end:{fmt}}" if short else f"valid from {start:{fmt}} until {end:{fmt}}"
    )
