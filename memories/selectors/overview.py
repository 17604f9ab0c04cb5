"""A workspace at a glance: its counts, its weeks and its latest changes (the dashboard's
overview)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, F, Func, IntegerField, Value
from django.db.models.functions import TruncWeek
from django.utils import timezone

from memories.models import Memory, ProvenanceEvent, Workspace

WEEKS_SHOWN = 12
RECENT_SHOWN = 10


@dataclass(frozen=True)
class Overview:
    total: int
    by_category: list[dict[str, Any]]
    by_type: list[dict[str, Any]]
    by_scope: list[dict[str, Any]]
    per_week: list[tuple[datetime, int]]  # Monday of each of the last WEEKS_SHOWN weeks
    significance: list[int]  # active memories per tenth of significance, 0.0-0.1 first
    recent: list[ProvenanceEvent]


def week_start(moment: datetime) -> datetime:
    """Monday 00:00 of the week, in the current time zone (as TruncWeek counts)."""
    local = timezone.localtime(moment)
    return (local - timedelta(days=local.weekday())).replace(
        hour=0, minute=0, second=0, microsecond=0
    )


def workspace_overview(workspace: Workspace, now: datetime | None = None) -> Overview:
    memories = Memory.objects.filter(workspace=workspace)
    this_week = week_start(now or timezone.now())
    weeks = [this_week - timedelta(weeks=n) for n in range(WEEKS_SHOWN - 1, -1, -1)]
    counted = {
        row["week"]: row["n"]
        for row in memories.filter(created_at__gte=weeks[0])
        .annotate(week=TruncWeek("created_at"))
        .values("week")
        .annotate(n=Count("id"))
    }
    buckets = dict(
        memories.filter(status=Memory.Status.ACTIVE)
        .annotate(
            bucket=Func(
                F("significance"),
                Value(0.0),
                Value(1.0),
                Value(10),
                function="width_bucket",
                output_field=IntegerField(),
            )
        )
        .values_list("bucket")
        .annotate(n=Count("id"))
    )
    # width_bucket puts 1.0 in an 11th bucket: it belongs with 0.9 to 1.0.
    significance = [
        buckets.get(b, 0) + (buckets.get(11, 0) if b == 10 else 0) for b in range(1, 11)
    ]
    # The counts are of the memories that are still there: forgotten and merged ones not.
    kept = memories.exclude(status__in=[Memory.Status.FORGOTTEN, Memory.Status.MERGED])
    return Overview(
        total=kept.count(),
        by_category=list(kept.values("category").annotate(n=Count("id")).order_by("-n")),
        by_type=list(kept.values("memory_type").annotate(n=Count("id")).order_by("-n")),
        by_scope=list(kept.values("scope__name").annotate(n=Count("id")).order_by("-n")),
        per_week=[(week, counted.get(week, 0)) for week in weeks],
        significance=significance,
        recent=list(
            ProvenanceEvent.objects.filter(workspace=workspace)
            .select_related("memory", "agent", "user", "subject_agent", "subject_entity")
            .order_by("-created_at", "-id")[:RECENT_SHOWN]
        ),
    )
