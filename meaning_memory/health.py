"""Liveness and readiness, for whatever watches the engine.

``/healthz`` says the web process answers; it touches nothing else, so it stays cheap and
green while the database is away (a process restart would not help). ``/readyz`` says whether
the engine can do its work now: the database answers, and a worker ran its heartbeat job
(``memories.tasks.heartbeat``, every minute) within ``MM_READY_WORKER_SECONDS``. It answers
503 with what is wrong otherwise; a web process that started less than that long ago and has
seen no heartbeat yet reports the worker as ``starting`` and is ready.
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils import timezone

from memories.database_errors import unavailable
from memories.tasks import HEARTBEAT

STARTED = time.monotonic()


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    ready = True
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
        checks["worker"], worker_ok = _worker()
        ready = worker_ok
    except Exception as exc:
        trouble = unavailable(exc)
        if trouble is None:
            raise
        checks["database"] = trouble.message
        checks["worker"] = "unknown (the database does not answer)"
        ready = False
    answer = JsonResponse(
        {"status": "ready" if ready else "unavailable", **checks}, status=200 if ready else 503
    )
    if not ready:
        answer["Retry-After"] = "5"
    return answer


def _worker() -> tuple[str, bool]:
    from django_q.models import Success

    limit = settings.MM_READY_WORKER_SECONDS
    last = (
        Success.objects.filter(func=HEARTBEAT)
        .order_by("-stopped")
        .values_list("stopped", flat=True)
        .first()
    )
    if last is not None:
        age = (timezone.now() - last) / timedelta(seconds=1)
        if age <= limit:
            return f"ok (heartbeat {age:.0f} s ago)", True
        return f"no heartbeat for {age:.0f} s (MM_READY_WORKER_SECONDS={limit})", False
    if time.monotonic() - STARTED < limit:
        return "starting (no heartbeat yet)", True
    return f"no heartbeat in {limit} s (is a worker running?)", False
