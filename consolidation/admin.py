"""Consolidation's records in the admin, read-only: its runs, the threads it found and the
supersessions it proposed (people act on them on the dashboard, where each action has its
rules and its history). Staff see the workspaces where they curate, as everywhere."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from consolidation.models import ConsolidationRun, SupersessionProposal
from memories.admin import WORKSPACE_FILTER, WorkspaceScoped
from memories.models import Thread


class ReadOnly:
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(WorkspaceScoped, ReadOnly, admin.ModelAdmin):
    # Narrow columns (the workspace is a filter, the phases are on each run's page): the list
    # fits a 1400 px screen.
    list_display = ("run_id", "status", "trigger", "phase_count", "dry_run", "started", "took")
    list_filter = ("status", "trigger", WORKSPACE_FILTER)
    list_select_related = ("workspace",)
    search_fields = ("run_id", "error")
    date_hierarchy = "created_at"

    @admin.display(description="phases")
    def phase_count(self, run: ConsolidationRun) -> int:
        return len(run.phases)

    @admin.display(description="started", ordering="created_at")
    def started(self, run: ConsolidationRun) -> str:
        return f"{run.created_at:%Y-%m-%d %H:%M}"

    @admin.display(description="took")
    def took(self, run: ConsolidationRun) -> str:
        if run.started_at is None or run.finished_at is None:
            return "—"
        return f"{(run.finished_at - run.started_at).total_seconds():.1f} s"


@admin.register(Thread)
class ThreadAdmin(WorkspaceScoped, ReadOnly, admin.ModelAdmin):
    list_display = ("title", "status", "size", "sessions", "first", "last", "scope")
    list_filter = ("status", WORKSPACE_FILTER)
    list_select_related = ("scope",)
    search_fields = ("thread_id", "title", "label")
    exclude = ("centroid",)

    @admin.display(description="first seen", ordering="first_seen")
    def first(self, thread: Thread) -> str:
        return f"{thread.first_seen:%Y-%m-%d}"

    @admin.display(description="last seen", ordering="last_seen")
    def last(self, thread: Thread) -> str:
        return f"{thread.last_seen:%Y-%m-%d}"


@admin.register(SupersessionProposal)
class SupersessionProposalAdmin(WorkspaceScoped, ReadOnly, admin.ModelAdmin):
    # Narrow columns (the workspace is a filter): the list fits a 1400 px screen.
    list_display = ("proposal_id", "status", "attribute", "rule", "created_at")
    list_filter = ("status", "attribute", WORKSPACE_FILTER)
    list_select_related = ("workspace",)
    search_fields = ("proposal_id", "rule")
