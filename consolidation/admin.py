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
    list_display = ("run_id", "status", "trigger", "phases", "dry_run", "created_at",
                    "finished_at", "workspace")  # fmt: skip
    list_filter = ("status", "trigger", WORKSPACE_FILTER)
    list_select_related = ("workspace",)
    search_fields = ("run_id", "error")
    date_hierarchy = "created_at"


@admin.register(Thread)
class ThreadAdmin(WorkspaceScoped, ReadOnly, admin.ModelAdmin):
    list_display = ("thread_id", "title", "status", "size", "sessions", "first_seen",
                    "last_seen", "scope")  # fmt: skip
    list_filter = ("status", WORKSPACE_FILTER)
    list_select_related = ("scope",)
    search_fields = ("thread_id", "title", "label")
    exclude = ("centroid",)


@admin.register(SupersessionProposal)
class SupersessionProposalAdmin(WorkspaceScoped, ReadOnly, admin.ModelAdmin):
    list_display = ("proposal_id", "status", "attribute", "rule", "created_at", "workspace")
    list_filter = ("status", "attribute", WORKSPACE_FILTER)
    list_select_related = ("workspace",)
    search_fields = ("proposal_id", "rule")
