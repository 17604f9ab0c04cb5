"""Django admin for curation in bulk.

Memories are read-only here: every change goes through an action (important, demote, pin,
unpin, forget) that asks for a reason on an intermediate page and calls the services, so each
change has its provenance row, exactly as from the API.
"""

from django.contrib import admin

from memories.admin import memory, relations, team  # noqa: F401 (they register)
from memories.admin.common import WORKSPACE_FILTER, WorkspaceScoped
from memories.auth_forms import AdminLoginForm

admin.site.login_form = AdminLoginForm  # throttled, as the dashboard's (memories.throttle)

__all__ = ["WORKSPACE_FILTER", "WorkspaceScoped"]
