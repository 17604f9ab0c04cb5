"""What the API's views share: a page of a list, and errors as JSON whatever the client accepts."""

from __future__ import annotations

from django.core.paginator import Paginator
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request

from memories import rules


def page_of(items, values: dict) -> tuple[list, dict[str, int]]:
    """One page of a queryset (``page``, ``page_size``) and where it stands."""
    size = values.get("page_size", rules.PAGE_SIZE_DEFAULT)
    paginator = Paginator(items, size)
    number = values.get("page", 1)
    page = paginator.page(number) if number <= max(paginator.num_pages, 1) else None
    return (list(page.object_list) if page else []), {
        "page": number,
        "page_size": size,
        "pages": paginator.num_pages,
        "count": paginator.count,
    }


class ErrorsAsJson(BaseContentNegotiation):
    """Errors are JSON whatever the client accepts; a success picks its own representation."""

    def select_parser(self, request: Request, parsers: list) -> object:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: list, format_suffix=None):
        return renderers[0], renderers[0].media_type


def preferred(accept: str) -> str:
    """``json`` when the Accept header prefers application/json to text/markdown (by q value;
    a tie or neither named gives markdown)."""
    quality = {"application/json": 0.0, "text/markdown": 0.0}
    for part in accept.split(","):
        media_type, *params = (piece.strip() for piece in part.split(";"))
        if media_type in quality:
            q = next((p[2:] for p in params if p.startswith("q=")), "1")
            try:
                quality[media_type] = max(quality[media_type], float(q))
            except ValueError:
                continue
    return "json" if quality["application/json"] > quality["text/markdown"] else "markdown"
