"""What a curator decides: an open item (a divergence, a supersession proposal) closed with a
status, a reason, who decided and when. Each model names its own two fields for the last two;
the service (``memories.services.decisions``) and the template (``_decision.html``) read them
through this mixin."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

OPEN = "open"


class CuratorDecision:
    """A model whose rows a curator decides once: its ``status`` starts ``open``; deciding sets
    it, with ``reason``, the deciding user and the time (``DECIDER`` and ``DECIDED_AT`` name
    those fields)."""

    DECIDER = "decided_by"
    DECIDED_AT = "decided_at"

    @property
    def is_open(self) -> bool:
        return self.status == OPEN

    @property
    def decider(self) -> Any:
        return getattr(self, self.DECIDER)

    @property
    def decided_on(self) -> Any:
        return getattr(self, self.DECIDED_AT)

    def decide(self, *, status: str, reason: str, user: Any) -> None:
        """Store the decision (the row should be locked and open: see ``deciding``)."""
        self.status, self.reason = status, reason
        setattr(self, self.DECIDER, user)
        setattr(self, self.DECIDED_AT, timezone.now())
        self.save(update_fields=["status", "reason", self.DECIDER, self.DECIDED_AT])
