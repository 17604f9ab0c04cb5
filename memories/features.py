"""The engine's opt-in features, each refused while its setting is off (Forbidden, naming the
setting). A gate is checked in the core, where the feature's reads and writes are (the
selectors and services an agent's request reaches), never by an adapter: every way in is
refused alike. (The team's dashboard shows what was found while a feature was on.)"""

from __future__ import annotations

from django.conf import settings

from memories.errors import Forbidden


def require_divergence() -> None:
    if not settings.MM_DIVERGENCE:
        raise Forbidden(
            "divergence detection is switched off on this engine (MM_DIVERGENCE); an operator "
            "turns it on."
        )


def require_traversal() -> None:
    """Traversal is opt-in: refused, naming the setting, while it is off."""
    if not settings.MM_TRAVERSAL:
        raise Forbidden(
            "traversal is switched off on this engine (MM_TRAVERSAL); an operator turns it on."
        )
