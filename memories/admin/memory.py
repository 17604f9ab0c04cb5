"""Memories and their history: read-only, changed by actions that ask a reason."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html

from memories import services
from memories.admin.common import (
    EVENT_PREVIEW,
    TEXT_PREVIEW,
    WORKSPACE_FILTER,
    ReasonForm,
    WorkspaceScoped,
    cut,
)
from memories.errors import MemoryEngineError
from memories.models import PLAIN_FIELDS, TIME_FIELDS, Memory, ProvenanceEvent
from memories.temporal.validity import ended_by_q, not_yet_valid_q, valid_at_q


class ValidityFilter(admin.SimpleListFilter):
    title = "validity"
    parameter_name = "validity"

    def lookups(self, request, model_admin):
        return [("now", "valid now"), ("expired", "expired"), ("future", "not yet valid")]

    def queryset(self, request, queryset):
        now = timezone.now()
        chosen = {"now": valid_at_q, "expired": ended_by_q, "future": not_yet_valid_q}
        if self.value() in chosen:
            return queryset.filter(chosen[self.value()](now))
        return queryset


class ProvenanceInline(admin.TabularInline):
    model = ProvenanceEvent
    fields = ("created_at", "action", "actor", "old_values", "new_values", "reason")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("created_at", "id")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("agent", "user")

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


def _feedback_action(action: str, label: str):
    def run(modeladmin, request, queryset):
        return modeladmin.with_reason(request, queryset, action, label)

    run.__name__ = f"feedback_{action}"
    run.short_description = label
    run.allowed_permissions = ("change",)
    return run


@admin.register(Memory)
class MemoryAdmin(WorkspaceScoped, admin.ModelAdmin):
    # Few and narrow columns, so the list fits a laptop's screen beside the admin's menu and
    # filters, whatever the rows hold (admin.css breaks long words in a cell) (pinned, memory
    # type and workspace are filters; the scope names its workspace; the mem_id is on the
    # memory's page and found by the search box.)
    class Media:
        css = {"all": ("memories/admin.css",)}

    list_display = (
        "preview",
        "scope",
        "category",
        "status",
        "sig",
        "validity",
        "written",
    )
    list_display_links = ("preview",)
    list_filter = (
        "category",
        "memory_type",
        "status",
        "pinned",
        "source_kind",
        ValidityFilter,
        WORKSPACE_FILTER,
    )
    list_select_related = ("workspace", "scope__workspace")
    search_fields = ("mem_id", "text", "source")
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-id")
    list_per_page = 50
    show_full_result_count = False  # no COUNT(*) of a large table on every page
    exclude = ("embedding", "episode_embedding", "search_vector")
    readonly_fields = (
        "mem_id",
        "workspace",
        "scope",
        *PLAIN_FIELDS,
        "superseded_by",
        *TIME_FIELDS,
        *(f"{d}_{kind}" for d in "stare" for kind in ("score", "origin")),
        "attributed_to",
        "follows",
        "embedding_summary",
        "content_hash",
        "updated_at",
    )
    inlines = (ProvenanceInline,)
    actions = (
        _feedback_action("important", "Mark important (significance halfway to 1)"),
        _feedback_action("demote", "Demote (significance halved)"),
        _feedback_action("pin", "Pin (always in the compiled file)"),
        _feedback_action("unpin", "Unpin"),
        _feedback_action("forget", "Forget (soft delete)"),
    )

    @admin.display(description="text")
    def preview(self, memory: Memory) -> str:
        return cut(memory.text, TEXT_PREVIEW)

    @admin.display(description="sig.", ordering="significance")
    def sig(self, memory: Memory) -> str:
        """Significance to two places (the memory's page has it whole)."""
        return f"{memory.significance:.2f}"

    @admin.display(description="valid")
    def validity(self, memory: Memory) -> str:
        if memory.valid_from is None and memory.valid_until is None:
            return "always"
        start = f"{memory.valid_from:%Y-%m-%d}" if memory.valid_from else "always"
        end = f"{memory.valid_until:%Y-%m-%d}" if memory.valid_until else "open"
        return f"{start} → {end}"

    @admin.display(description="written", ordering="created_at")
    def written(self, memory: Memory) -> str:
        return f"{memory.created_at:%Y-%m-%d}"

    @admin.display(description="embedding")
    def embedding_summary(self, memory: Memory) -> str:
        if memory.embedding is None:
            return "none"
        return format_html(
            "{} dimensions, model {}{}",
            len(memory.embedding),
            memory.embedding_model or "?",
            " (and an episode vector)" if memory.episode_embedding is not None else "",
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # memories are written by agents (API, MCP, seed)

    def has_delete_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        return False  # forget instead: the memory and its history stay

    def with_reason(
        self, request: HttpRequest, queryset: QuerySet[Memory], action: str, label: str
    ) -> HttpResponse | None:
        """The intermediate page: ask for a reason, then apply ``action`` to every selected
        memory through the services, all or none."""
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            reason = form.cleaned_data["reason"]
            try:
                with transaction.atomic():
                    for memory in queryset:
                        services.memory_curate_by_user(
                            user=request.user, memory_pk=memory.pk, action=action, reason=reason
                        )
            except MemoryEngineError as exc:
                self.message_user(request, f"Nothing changed: {exc.message}", messages.ERROR)
                return None
            self.message_user(request, f"{label}: {queryset.count()} memories, with the reason.")
            return None
        return TemplateResponse(
            request,
            "admin/memories/memory/with_reason.html",
            {
                **self.admin_site.each_context(request),
                "title": label,
                "action": request.POST.get("action"),
                "label": label,
                "memories": queryset.select_related("workspace"),
                "form": form,
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            },
        )


@admin.register(ProvenanceEvent)
class ProvenanceEventAdmin(WorkspaceScoped, admin.ModelAdmin):
    # Narrow columns (the workspace is a filter): the list fits a 1400 px screen.
    list_display = ("when", "action", "subject", "actor", "why")
    list_filter = ("action", WORKSPACE_FILTER)
    list_select_related = (
        "memory",
        "agent",
        "user",
        "workspace",
        "subject_agent",
        "subject_entity",
    )
    search_fields = ("memory__mem_id", "reason")
    date_hierarchy = "created_at"
    show_full_result_count = False

    @admin.display(description="when", ordering="created_at")
    def when(self, event: ProvenanceEvent) -> str:
        return f"{event.created_at:%Y-%m-%d %H:%M}"

    @admin.display(description="about")
    def subject(self, event: ProvenanceEvent) -> str:
        if event.memory_id:
            return cut(event.memory.text, EVENT_PREVIEW)
        if event.subject_agent_id:
            return f"agent {event.subject_agent.name}"
        if event.subject_entity_id:
            return f"entity {event.subject_entity.name}"
        return f"memory {event.new_values.get('erased', '?')} (erased)"

    @admin.display(description="reason")
    def why(self, event: ProvenanceEvent) -> str:
        return cut(event.reason, EVENT_PREVIEW)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
