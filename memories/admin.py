"""Django admin for curation in bulk.

Memories are read-only here: every change goes through an action (important, demote, pin,
unpin, forget) that asks for a reason on an intermediate page and calls the services, so each
change has its provenance row, exactly as from the API.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html

from memories import services
from memories.auth_forms import AdminLoginForm
from memories.errors import MemoryEngineError
from memories.models import (
    CURATING_ROLES,
    Agent,
    Entity,
    Link,
    Membership,
    Memory,
    ProvenanceEvent,
    Scope,
    Workspace,
)
from memories.selectors import (
    last_admin_message,
    other_admins_exist,
    shared_scopes_for,
    user_may_manage_members,
    workspaces_with_role,
)
from memories.validity import ended_by_q, not_yet_valid_q, valid_at_q

TEXT_PREVIEW = 90
admin.site.login_form = AdminLoginForm  # throttled, as the dashboard's (memories.throttle)


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        label="Reason",
        help_text="Why; kept in each memory's history.",
        error_messages={"required": "A reason is required: say why."},
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("A reason is required: say why.")
        return reason


class WorkspaceScoped:
    """A staff user sees and changes, here as on the dashboard, only the workspaces where they
    have one of ``roles`` (curators and admins curate; admins manage members); a superuser
    sees every workspace. An object of another workspace is not in the queryset, so its page is
    the admin's "does not exist" and an action never selects it. ``workspace_path`` leads from
    the model to its workspace."""

    workspace_scoped = True  # the admin site leaves it to staff (meaning_memory.admin_site)
    workspace_path = "workspace"
    roles: tuple[str, ...] = CURATING_ROLES

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        allowed = workspaces_with_role(request.user, self.roles)
        if allowed is None:
            return queryset
        return queryset.filter(**{f"{self.workspace_path}__in": allowed})

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "workspace":
            allowed = workspaces_with_role(request.user, self.roles)
            if allowed is not None:
                kwargs["queryset"] = allowed
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


#: The workspace filter of a list: only the workspaces in the (scoped) list.
WORKSPACE_FILTER = ("workspace", admin.RelatedOnlyFieldListFilter)


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
        "text",
        "category",
        "memory_type",
        "source",
        "significance",
        "pinned",
        "status",
        "superseded_by",
        "created_at",
        "observed_at",
        "valid_from",
        "valid_until",
        *(f"{d}_{kind}" for d in "stare" for kind in ("score", "origin")),
        "session",
        "thread",
        "perspective",
        "attributed_to",
        "source_kind",
        "sig_self",
        "sig_external",
        "attribution",
        "episode_text",
        "follows",
        "embedding_summary",
        "metadata",
        "idempotency_key",
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


#: How much of a memory's text and of a reason the history's list shows, and a link's list.
EVENT_PREVIEW = 48
LINK_PREVIEW = 40


def cut(text: str, size: int) -> str:
    """``text`` on one line, at most ``size`` characters (an ellipsis where it was cut)."""
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1] + "…"


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


class MembershipInlineFormSet(BaseInlineFormSet):
    """The last-admin rule over the whole list: a workspace that has an admin keeps one."""

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        admins_before = Membership.objects.filter(
            workspace=self.instance, role=Membership.Role.ADMIN
        ).count()
        admins_after = sum(
            1
            for form in self.forms
            if form.cleaned_data
            and not form.cleaned_data.get("DELETE")
            and form.cleaned_data.get("role") == Membership.Role.ADMIN
        )
        if admins_before and not admins_after:
            raise forms.ValidationError(
                "The workspace must keep an admin: make another member admin first."
            )


class UsernameField(forms.ModelChoiceField):
    """A user typed by username; a stored membership's user (its id) is shown by username."""

    def prepare_value(self, value):
        if isinstance(value, int):
            value = self.queryset.filter(pk=value).first() or value
        return super().prepare_value(value)


class UserByName:
    """A member is named by username, typed (no list or search of the engine's users: the
    users' admin is for superusers only, see ``meaning_memory.admin_site``)."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            return UsernameField(
                queryset=db_field.remote_field.model.objects.all(),
                to_field_name=db_field.remote_field.model.USERNAME_FIELD,
                widget=forms.TextInput,
                label="Username",
                error_messages={"invalid_choice": "No user has this username."},
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class MembershipInline(UserByName, admin.TabularInline):
    """A workspace's members, changed here only by its admins (and superusers), through the
    same service as the dashboard's members page (``services.membership_set`` / ``_remove``)."""

    model = Membership
    formset = MembershipInlineFormSet
    extra = 0

    def _manages(self, request, obj) -> bool:
        return obj is not None and user_may_manage_members(request.user, obj)

    def has_add_permission(self, request, obj=None):
        return self._manages(request, obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return self._manages(request, obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._manages(request, obj) and super().has_delete_permission(request, obj)


class NoDeleting:
    """Workspaces, scopes and agents are not deleted here: a deletion would take memories and
    their history with it, or leave history without its actor. Deactivate an agent instead."""

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Workspace)
class WorkspaceAdmin(WorkspaceScoped, NoDeleting, admin.ModelAdmin):
    workspace_path = "pk"
    list_display = ("slug", "name", "created_at")
    search_fields = ("slug", "name")
    readonly_fields = ("slug", "created_at")
    inlines = (MembershipInline,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a workspace comes with its first agent (`createagent`)

    def save_formset(self, request, form, formset, change) -> None:
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        save_memberships(request, form.instance, formset)


@admin.register(Scope)
class ScopeAdmin(WorkspaceScoped, NoDeleting, admin.ModelAdmin):
    list_display = ("name", "workspace", "kind", "created_at")
    list_filter = ("kind", WORKSPACE_FILTER)
    list_select_related = ("workspace",)
    search_fields = ("name", "workspace__slug")
    # A scope holds memories: moving or renaming it would move them across workspaces.
    readonly_fields = ("name", "workspace", "kind", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # scopes come with agents (their memberships)


@admin.register(Agent)
class AgentAdmin(WorkspaceScoped, NoDeleting, admin.ModelAdmin):
    list_display = ("name", "workspace", "token_prefix", "is_active", "created_at")
    list_filter = ("is_active", WORKSPACE_FILTER)
    list_select_related = ("workspace",)
    search_fields = ("name", "workspace__slug")
    readonly_fields = (
        "name",
        "workspace",
        "token_prefix",
        "token_hash",
        "private_scope",
        "is_active",
        "created_at",
    )
    filter_horizontal = ("scopes",)
    actions = ("revoke", "reactivate")

    @admin.action(description="Revoke the tokens of the selected agents", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        self._each(request, queryset, services.agent_revoke, "Revoked")

    @admin.action(
        description="Reactivate the tokens of the selected agents", permissions=["change"]
    )
    def reactivate(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        self._each(request, queryset, services.agent_reactivate, "Reactivated")

    def _each(self, request: HttpRequest, queryset: QuerySet[Agent], service, done: str) -> None:
        """Through the service, so each change is recorded; all or none."""
        try:
            with transaction.atomic():
                for agent in queryset.select_related("workspace"):
                    service(user=request.user, workspace=agent.workspace, agent_id=agent.pk)
        except MemoryEngineError as exc:
            self.message_user(request, f"Nothing changed: {exc.message}", messages.ERROR)
            return
        self.message_user(request, f"{done}: {queryset.count()} agents.")

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "scopes":
            kwargs["queryset"] = shared_scopes_for(request.resolver_match.kwargs.get("object_id"))
        return super().formfield_for_manytomany(db_field, request, **kwargs)


def save_memberships(request: HttpRequest, workspace: Workspace, formset) -> None:
    """A members formset saved through the services (validated already: see the formset):
    additions and role changes first, then removals, so that handing the admin role over in
    one save works. A member's row names one user: changing it removes that member and adds
    the other."""
    formset.save(commit=False)
    removed = [membership.pk for membership in formset.deleted_objects]
    # New admins first: the role can then pass from one member to another in this save.
    ordered = sorted(
        formset.forms,
        key=lambda f: (f.cleaned_data or {}).get("role") != Membership.Role.ADMIN,
    )
    for member_form in ordered:
        data = member_form.cleaned_data
        if not data or data.get("DELETE") or not member_form.has_changed():
            continue
        before = member_form.instance
        if before.pk and "user" in member_form.changed_data:
            removed.append(before.pk)
        services.membership_set(
            by=request.user,
            workspace=workspace,
            username=data["user"].get_username(),
            role=data["role"],
        )
    for membership_id in removed:
        services.membership_remove(
            by=request.user, workspace=workspace, membership_id=membership_id
        )


class MembershipForm(forms.ModelForm):
    """The last-admin rule, as a form error, before anything is saved."""

    class Meta:
        model = Membership
        fields = ("user", "workspace", "role")

    def clean(self) -> dict:
        data = super().clean()
        old = self.instance
        if (
            old.pk
            and old.role == Membership.Role.ADMIN
            and data.get("role") != Membership.Role.ADMIN
            and not other_admins_exist(old)
        ):
            self.add_error("role", last_admin_message(old))
        user = data.get("user")
        if user is not None and not user.is_active:
            self.add_error("user", f"{user} is not an active user.")
        return data


@admin.register(Membership)
class MembershipAdmin(UserByName, WorkspaceScoped, admin.ModelAdmin):
    """Members one by one, through the same services as the dashboard's members page: the
    last admin cannot be demoted or removed."""

    roles = (Membership.Role.ADMIN,)
    form = MembershipForm
    list_display = ("user", "workspace", "role", "created_at")
    list_filter = ("role", WORKSPACE_FILTER)
    list_select_related = ("user", "workspace")

    def get_readonly_fields(self, request, obj=None):
        # A membership is a user in a workspace: another user or workspace is another row.
        return ("user", "workspace") if obj is not None else ()

    def save_model(self, request, obj, form, change) -> None:
        saved = services.membership_set(
            by=request.user,
            workspace=obj.workspace,
            username=obj.user.get_username(),
            role=obj.role,
        )
        obj.pk = saved.pk

    def has_delete_permission(self, request, obj=None) -> bool:
        if obj is not None and obj.role == Membership.Role.ADMIN and not other_admins_exist(obj):
            return False  # the last admin stays
        return super().has_delete_permission(request, obj)

    def delete_model(self, request, obj) -> None:
        services.membership_remove(by=request.user, workspace=obj.workspace, membership_id=obj.pk)

    def delete_queryset(self, request, queryset) -> None:
        for membership in queryset.select_related("user", "workspace"):
            try:
                with transaction.atomic():
                    self.delete_model(request, membership)
            except MemoryEngineError as exc:
                self.message_user(request, f"{membership}: {exc.message}", messages.ERROR)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Listed and read here; changed through the dashboard and the API, whose services keep
    the history."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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
