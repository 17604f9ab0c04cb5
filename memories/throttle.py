"""Login throttling: after ``MM_LOGIN_MAX_FAILURES`` failed logins in a row for one user name,
or from one address, further attempts are refused for ``MM_LOGIN_LOCKOUT_SECONDS`` (the right
password included), with a message saying so. A successful login clears its user name's count.
The counts live in the database, so every process of the engine shares them."""

from __future__ import annotations

import unicodedata
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories.models import LoginThrottle


def keys(username: str, address: str) -> list[str]:
    """The counts a login attempt adds to: its user name's, as the login reads it (Django's
    user name field folds compatibility characters, NFKC: full-width "ｖｉｃｔｉｍ" logs in as
    "victim"; case and surrounding space count as one name too), and its address's."""
    name = unicodedata.normalize("NFKC", username).strip().casefold()
    return [f"user:{name[:150]}", f"address:{address[:45]}"]


def locked_for(username: str, address: str) -> int:
    """Seconds left before these may try again; 0 when they may now."""
    now = timezone.now()
    until = (
        LoginThrottle.objects.filter(key__in=keys(username, address), locked_until__gt=now)
        .order_by("-locked_until")
        .values_list("locked_until", flat=True)
        .first()
    )
    return int((until - now).total_seconds()) + 1 if until else 0


@transaction.atomic
def failed(username: str, address: str) -> None:
    """Count one failed login for the user name and the address; lock those that reach the
    limit."""
    now = timezone.now()
    for key in keys(username, address):
        row, _ = LoginThrottle.objects.select_for_update().get_or_create(key=key)
        row.failures += 1
        if row.failures >= settings.MM_LOGIN_MAX_FAILURES:
            row.locked_until = now + timedelta(seconds=settings.MM_LOGIN_LOCKOUT_SECONDS)
            row.failures = 0
        row.save()


def succeeded(username: str) -> None:
    LoginThrottle.objects.filter(key=keys(username, "")[0]).delete()
