"""Episodes: the memories just before a new one in its session, indexed with it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from memories.models import Memory

#: How mature the episodes written here are, read by the readiness registry.
READINESS = {"E/anchor": "beta"}


@dataclass(frozen=True)
class Episode:
    text: str  # the texts before the memory, oldest first, one per line
    follows_id: int | None  # the memory just before it


def episode_before(*, workspace_id: int, scope_id: int, session: str, before: datetime) -> Episode:
    """The last ``MM_EPISODE_WINDOW`` memories of ``session`` in the scope written up to
    ``before`` (forgotten ones left out); empty without a session. A new memory's full-text
    index holds their texts too, at a lower weight, and its episode vector is that of their
    texts and its own (see ``Memory.episode_text``)."""
    rows = episode_rows(
        workspace_id=workspace_id, scope_id=scope_id, session=session, before=before
    )
    return Episode("\n".join(text for _, text in rows), rows[-1][0] if rows else None)


def episode_rows(
    *, workspace_id: int, scope_id: int, session: str, before: datetime
) -> list[tuple[int, str]]:
    """The (pk, text) of the memories of ``episode_before``, oldest first."""
    if not session or not settings.MM_EPISODE_WINDOW:
        return []
    rows = list(
        Memory.objects.filter(
            workspace_id=workspace_id, scope_id=scope_id, session=session, created_at__lte=before
        )
        .exclude(status=Memory.Status.FORGOTTEN)
        .order_by("-created_at", "-id")
        .values_list("pk", "text")[: settings.MM_EPISODE_WINDOW]
    )
    return list(reversed(rows))
