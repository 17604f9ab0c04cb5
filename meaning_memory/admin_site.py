"""The admin site: what is not scoped by workspace is for superusers only.

The engine's own admins (``memories.admin.WorkspaceScoped``) show a staff user only the
workspaces where their role allows it, whatever Django permissions they hold. Every other
model registered here (Django's users and groups, the worker's schedules, tasks and queue,
anything a later app adds) would answer to Django's global permissions alone, which know no
workspace: a staff user holding ``auth.change_user`` could make themselves superuser, one
holding ``django_q.add_schedule`` could have the worker call any function. So the site wraps
every admin that does not declare ``workspace_scoped`` in :class:`SuperuserOnly`: a staff user
neither sees nor opens it, permissions or not.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest


def is_superuser(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and user.is_superuser)


class SuperuserOnly:
    """An admin that only an active superuser sees or changes."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_superuser(request) and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return is_superuser(request) and super().has_add_permission(request, *args)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request) and super().has_delete_permission(request, obj)


def guarded(admin_class: type[admin.ModelAdmin]) -> type[admin.ModelAdmin]:
    """``admin_class`` itself when it is scoped by workspace; else it for superusers only."""
    if getattr(admin_class, "workspace_scoped", False):
        return admin_class
    return type(f"SuperuserOnly{admin_class.__name__}", (SuperuserOnly, admin_class), {})


class EngineAdminSite(admin.AdminSite):
    def register(self, model_or_iterable, admin_class=None, **options) -> None:
        super().register(model_or_iterable, guarded(admin_class or admin.ModelAdmin), **options)


class EngineAdminConfig(AdminConfig):
    default_site = "meaning_memory.admin_site.EngineAdminSite"
