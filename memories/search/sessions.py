"""The session cap of a search's recipe (``Recipe.session_cap``, MM_SEARCH_SESSION_CAP): at
most that many memories of one session in the order before the rest, so that a question whose
answer spans sessions is not answered by one session's turns alone."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from memories.search.hydration import SearchHit


def capped(hits: list[SearchHit], *, cap: int, limit: int) -> list[SearchHit]:
    """``hits`` in their order, except that past the first ``cap`` of a session, its memories
    follow every other hit (in their order, marked ``capped``); the first ``limit``. A memory
    with no session is a session of its own. ``cap`` 0: no cap."""
    if cap <= 0:
        return hits[:limit]
    held: dict[tuple, int] = defaultdict(int)
    first, rest = [], []
    for hit in hits:
        session = (True, hit.memory.session) if hit.memory.session else (False, hit.memory.pk)
        held[session] += 1
        if held[session] <= cap:
            first.append(hit)
        else:
            rest.append(replace(hit, capped=True))
    return (first + rest)[:limit]
