"""Divergences as a reader may see them: an agent sees one only when it sees both memories (a
divergence with a memory it cannot see does not exist for it); a team member sees the
workspace's."""

from __future__ import annotations

from django.db.models import QuerySet

from memories.errors import NotFound
from memories.features import require_divergence
from memories.models import Divergence
from memories.selectors.reader import Reader


def divergences_visible(reader: Reader, status: str | None = None) -> QuerySet[Divergence]:
    """Newest first, with both memories (and their scopes) loaded. An agent's read needs the
    opt-in feature on."""
    if reader.is_agent:
        require_divergence()
    rows = Divergence.objects.select_related("first__scope", "second__scope", "link", "closed_by")
    rows = reader.sees(reader.sees(rows, "first__"), "second__")
    if status:
        rows = rows.filter(status=status)
    return rows.order_by("-created_at", "-id")


def divergence_get(reader: Reader, divergence_id: str) -> Divergence:
    """One divergence by its public id; one the reader may not see is NotFound, like a missing
    one."""
    divergence = divergences_visible(reader).filter(divergence_id=divergence_id).first()
    if divergence is None:
        raise NotFound(f"no divergence {divergence_id!r}")
    return divergence
