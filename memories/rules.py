"""Field rules shared by the services and the input serializers, so each message exists once.

Each function returns the message for a broken rule, or None.
"""

from __future__ import annotations

import math
from datetime import datetime

from django.conf import settings
from django.utils import timezone


def unit_interval(value: float | None) -> str | None:
    if value is None:
        return None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return f"must be between 0 and 1 (got {value})."
    return None


def memory_text(value: str | None) -> str | None:
    text = (value or "").strip()
    if not text:
        return "must not be empty."
    if len(text) > settings.MM_MAX_TEXT_CHARS:
        return f"must be at most {settings.MM_MAX_TEXT_CHARS} characters (got {len(text)})."
    return None


def not_in_future(value: datetime | None) -> str | None:
    if value is not None and value > timezone.now():
        return "must not be in the future."
    return None


def window(valid_from: datetime | None, valid_until: datetime | None) -> str | None:
    """The message for ``valid_until`` when the window is empty or reversed."""
    if valid_from and valid_until and not valid_from < valid_until:
        return "must be after valid_from."
    return None
