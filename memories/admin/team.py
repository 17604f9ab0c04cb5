"""Workspaces, scopes, agents and members."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest

from memories import services
from memories.admin.common import (
    WORKSPACE_FILTER,
    NoDeleting,
    WorkspaceScoped,
)
from memories.errors import MemoryEngineError
from memories.models import (
    Agent,
    Membership,
    Scope,
    Workspace,
)
from memories.selectors import (
    last_admin_message,
    other_admins_exist,
    shared_scopes_for,
    user_may_manage_members,
)


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
        description="Reactivate the selected agents with new tokens", permissions=["change"]
    )
    def reactivate(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        tokens = self._each(request, queryset, services.agent_reactivate, "Reactivated")
        for agent, token in tokens:
            # Shown once, as createagent prints it: the revoked token stays revoked.
            self.message_user(
                request, f"New token of {agent.name} (shown once): {token}", messages.WARNING
            )

    def _each(self, request: HttpRequest, queryset: QuerySet[Agent], service, done: str) -> list:
        """Through the service, so each change is recorded; all or none. What each call
        returned."""
        try:
            with transaction.atomic():
                returned = [
                    service(user=request.user, workspace=agent.workspace, agent_id=agent.pk)
                    for agent in queryset.select_related("workspace")
                ]
        except MemoryEngineError as exc:
            self.message_user(request, f"Nothing changed: {exc.message}", messages.ERROR)
            return []
        self.message_user(request, f"{done}: {len(returned)} agents.")
        return returned

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
