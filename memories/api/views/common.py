"""What the API's views share: errors as JSON whatever the client accepts."""

from __future__ import annotations

from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request


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
