"""A curator's decision on an open item (``memories.models.decisions.CuratorDecision``): the
reason it needs, and the item locked and still open while the decision and what it changes are
written."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import transaction

from memories import rules
from memories.errors import ValidationFailed
from memories.models.decisions import CuratorDecision


def decision_reason(reason: str | None, hint: str) -> tuple[str, str | None]:
    """The reason without the spaces around it, and what is wrong with it (``hint`` says what
    to give) or None."""
    reason = (reason or "").strip()
    return reason, rules.reason_given(reason, hint)


@contextmanager
def deciding(item: CuratorDecision, *, decided: Callable[[Any], tuple[str, str]]) -> Iterator[Any]:
    """Inside one transaction, ``item`` read again and locked; decided already, it is refused
    (ValidationFailed on the field and with the message ``decided`` gives for it) and nothing
    is written."""
    with transaction.atomic():
        locked = (
            type(item).objects.select_for_update().get(workspace_id=item.workspace_id, pk=item.pk)
        )
        if not locked.is_open:
            raise ValidationFailed.single(*decided(locked))
        yield locked
