"""``/readyz``: ready when the database answers and a worker ran its heartbeat job lately; a 503
saying which is wrong otherwise. ``/healthz`` touches nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_q.models import Task

from meaning_memory import health
from memories.tasks import HEARTBEAT, ensure_schedules, heartbeat


def beat(seconds_ago: float) -> None:
    stopped = timezone.now() - timedelta(seconds=seconds_ago)
    Task.objects.create(
        id=f"beat-{seconds_ago}",
        name=f"beat-{seconds_ago}",
        func=HEARTBEAT,
        started=stopped,
        stopped=stopped,
        success=True,
        result=heartbeat(),
    )


@pytest.fixture
def long_running(monkeypatch):
    """A web process that started long before the heartbeat limit."""
    monkeypatch.setattr(health, "STARTED", health.STARTED - 10_000)


@pytest.mark.django_db
def test_ready_with_a_recent_heartbeat(long_running):
    beat(30)
    answer = Client().get("/readyz")
    assert answer.status_code == 200
    assert answer.json()["database"] == "ok"
    assert answer.json()["worker"].startswith("ok (heartbeat 30 s ago)")


@pytest.mark.django_db
def test_not_ready_when_the_worker_stopped_beating(long_running, settings):
    settings.MM_READY_WORKER_SECONDS = 120
    beat(300)
    answer = Client().get("/readyz")
    assert answer.status_code == 503 and answer["Retry-After"] == "5"
    assert answer.json()["status"] == "unavailable"
    assert "no heartbeat for 300 s (MM_READY_WORKER_SECONDS=120)" in answer.json()["worker"]


@pytest.mark.django_db
def test_a_process_just_started_waits_for_the_first_heartbeat(long_running):
    assert Client().get("/readyz").status_code == 503  # long running, never a heartbeat
    health.STARTED = health.time.monotonic()
    answer = Client().get("/readyz")
    assert answer.status_code == 200 and answer.json()["worker"].startswith("starting")


@pytest.mark.django_db
def test_the_heartbeat_is_scheduled_every_minute():
    from django_q.models import Schedule

    ensure_schedules()
    ensure_schedules()
    schedule = Schedule.objects.get(func=HEARTBEAT)
    assert (schedule.schedule_type, schedule.minutes, schedule.repeats) == ("I", 1, -1)


def test_healthz_needs_no_database():
    assert Client().get("/healthz").json() == {"status": "ok"}
