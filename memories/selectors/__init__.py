"""Reads: what an agent or a team member may see, and who may do what.

Each module answers one kind of question; the public names are also importable from here.
"""

from memories.selectors.memories import (
    CHAIN_MAX,
    enrichment_state,
    is_mem_id,
    memory_get,
    memory_history,
    memory_texts,
    supersession_chain,
)
from memories.selectors.overview import Overview, week_start, workspace_overview
from memories.selectors.permissions import (
    admin_everywhere,
    last_admin_message,
    membership_of,
    memberships_of,
    other_admins_exist,
    require_role,
    user_may,
    user_may_curate,
    user_may_manage_members,
    user_workspace_role,
    workspace_members,
    workspaces_with_role,
)
from memories.selectors.reader import Reader
from memories.selectors.tenancy import (
    agent_by_name,
    shared_scopes_for,
    workspace_agents,
    workspace_by_slug,
)
from memories.selectors.visibility import (
    SHARED_SCOPE_IDS_SQL,
    WORKSPACE_SCOPE_IDS_SQL,
    visible_scope_ids,
    with_private_scope,
)

__all__ = [
    "Reader",
    "CHAIN_MAX",
    "enrichment_state",
    "SHARED_SCOPE_IDS_SQL",
    "WORKSPACE_SCOPE_IDS_SQL",
    "Overview",
    "admin_everywhere",
    "agent_by_name",
    "is_mem_id",
    "last_admin_message",
    "membership_of",
    "memberships_of",
    "memory_get",
    "memory_history",
    "memory_texts",
    "other_admins_exist",
    "shared_scopes_for",
    "supersession_chain",
    "require_role",
    "user_may",
    "user_may_curate",
    "user_may_manage_members",
    "user_workspace_role",
    "visible_scope_ids",
    "week_start",
    "with_private_scope",
    "workspace_agents",
    "workspace_by_slug",
    "workspace_members",
    "workspace_overview",
    "workspaces_with_role",
]
