"""Entities and links, read-only; the enrichments still to come, retried by a curator."""

from __future__ import annotations

from django.contrib import admin
from django.utils import timezone

from memories.admin.common import (
    LINK_PREVIEW,
    WORKSPACE_FILTER,
    ReadOnlyAdmin,
    WorkspaceScoped,
    cut,
)
from memories.models import (
    Entity,
    Link,
    MemoryEnrichment,
)


@admin.register(Entity)
class EntityAdmin(WorkspaceScoped, ReadOnlyAdmin):
    # Narrow columns (the workspace is a filter): the list fits a 1400 px screen.
    list_display = ("name", "kind", "declared", "origin", "merged_into", "created_at")
    list_filter = (WORKSPACE_FILTER, "kind", "declared", "origin")
    search_fields = ("name", "normalized", "entity_id")
    list_select_related = ("workspace", "merged_into")
    fields = (
        "entity_id",
        "workspace",
        "kind",
        "typed_by",
        "name",
        "aliases",
        "declared",
        "origin",
        "created_by_agent",
        "created_by_user",
        "merged_into",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields


@admin.register(Link)
class LinkAdmin(WorkspaceScoped, ReadOnlyAdmin):
    # Narrow columns: the list fits a 1400 px screen (the ids are on each link's page).
    list_display = ("source_preview", "kind", "target", "origin", "weight", "removed")
    list_filter = (WORKSPACE_FILTER, "kind", "origin")
    search_fields = ("link_id", "source__mem_id", "target_memory__mem_id", "target_entity__name")
    list_select_related = ("source", "target_memory", "target_entity")
    fields = (
        "link_id",
        "workspace",
        "source",
        "kind",
        "target_memory",
        "target_entity",
        "weight",
        "origin",
        "agent",
        "user",
        "evidence",
        "created_at",
        "removed_at",
    )
    readonly_fields = fields

    @admin.display(description="from")
    def source_preview(self, link: Link) -> str:
        return cut(link.source.text, LINK_PREVIEW)

    @admin.display(description="to")
    def target(self, link: Link) -> str:
        if link.target_memory_id:
            return cut(link.target_memory.text, LINK_PREVIEW)
        return f"{link.target_entity.name} ({link.target_entity.kind})"

    @admin.display(description="removed", ordering="removed_at")
    def removed(self, link: Link) -> str:
        return f"{link.removed_at:%Y-%m-%d}" if link.removed_at else "—"


@admin.register(MemoryEnrichment)
class MemoryEnrichmentAdmin(WorkspaceScoped, ReadOnlyAdmin):
    """The memories whose enrichment (entities, links, claimant, A score) is still to come or
    was given up on (``memories.services.enricher``): a curator retries the failed ones."""

    list_display = ("memory_preview", "state", "attempts", "error", "created_at", "next_at")
    list_filter = (WORKSPACE_FILTER, "state")
    list_select_related = ("memory", "workspace")
    search_fields = ("memory__mem_id", "last_error")
    fields = ("memory", "workspace", "agent", "state", "attempts", "last_error", "given")
    readonly_fields = fields
    actions = ("retry",)

    @admin.display(description="memory")
    def memory_preview(self, row: MemoryEnrichment) -> str:
        return f"{row.memory.mem_id}: {cut(row.memory.text, LINK_PREVIEW)}"

    @admin.display(description="last error")
    def error(self, row: MemoryEnrichment) -> str:
        return cut(row.last_error, LINK_PREVIEW * 2)

    @admin.action(description="Try the selected enrichments again now", permissions=["view"])
    def retry(self, request, queryset) -> None:
        done = queryset.update(
            state=MemoryEnrichment.State.PENDING,
            attempts=0,
            last_error="",
            next_at=timezone.now(),
        )
        self.message_user(request, f"{done} enrichments will be tried again in a moment.")
