"""What every admin of the engine shares: scoping to the user's workspaces, a reason form,
read-only and no-deleting admins, previews."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from memories.models import (
    CURATING_ROLES,
)
from memories.selectors import (
    workspaces_with_role,
)

TEXT_PREVIEW = 90


#: How much of a memory's text and of a reason the history's list shows, and a link's list.
EVENT_PREVIEW = 48


LINK_PREVIEW = 40


def cut(text: str, size: int) -> str:
    """``text`` on one line, at most ``size`` characters (an ellipsis where it was cut)."""
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1] + "…"


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


class NoDeleting:
    """Workspaces, scopes and agents are not deleted here: a deletion would take memories and
    their history with it, or leave history without its actor. Deactivate an agent instead."""

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    """Listed and read here; changed through the dashboard and the API, whose services keep
    the history."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
