"""A list a page at a time, by number (``page`` from 1, ``page_size``): the one paging of the
API's lists, the MCP tools and the commands. (The REST memory list alone pages by cursor: a
page there stays put while memories are written.)"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator

from memories import rules


def page_request(values: dict[str, Any]) -> tuple[int, int]:
    """The page's number and size a request asks for, with their defaults."""
    return values.get("page", 1), values.get("page_size", rules.PAGE_SIZE_DEFAULT)


def page_of(items: Any, values: dict[str, Any]) -> tuple[list, dict[str, int]]:
    """One page of a queryset and where it stands: how many pages, how many items in all (a
    page past the last is empty)."""
    number, size = page_request(values)
    paginator = Paginator(items, size)
    page = paginator.page(number) if number <= max(paginator.num_pages, 1) else None
    return (list(page.object_list) if page else []), {
        "page": number,
        "page_size": size,
        "pages": paginator.num_pages,
        "count": paginator.count,
    }


def page_with_more(items: Any, values: dict[str, Any]) -> tuple[list, dict[str, Any]]:
    """One page of a queryset and whether another follows, counting nothing (one row more is
    read): for a list too long to count on every page."""
    number, size = page_request(values)
    rows = list(items[(number - 1) * size : number * size + 1])
    return rows[:size], {"page": number, "page_size": size, "more": len(rows) > size}
