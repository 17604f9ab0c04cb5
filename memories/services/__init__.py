"""Every change to workspaces, agents, members and memories goes through these functions.

Adapters (REST API, CLI, MCP, dashboard, admin, tasks) parse their input and call one of these;
each validates everything before it writes and writes in one transaction, so bad input changes
nothing. Each module does one job; the public names are also importable from here.
"""

from memories.services.bulk import (
    BulkResult,
    announce_import,
    bulk_prepare,
    bulk_store,
    remember_many,
)
from memories.services.entity_curation import (
    entity_merge,
    entity_retype,
    entity_split,
    entity_unmerge,
)
from memories.services.episodes import Episode, episode_before, episode_rows
from memories.services.erase import (
    ERASE_BY,
    Erasure,
    erase_selection,
    memories_erase,
    memories_erase_by_agent,
    memories_erase_by_user,
    memory_erase,
)
from memories.services.feedback import (
    CURATE_ACTIONS,
    FEEDBACK_ACTIONS,
    FEEDBACK_STEP,
    memory_curate_by_user,
    memory_feedback,
    memory_feedback_by_user,
    memory_forget,
    memory_forget_by_user,
)
from memories.services.members import membership_remove, membership_set
from memories.services.merge import MergeResult, memory_merge, memory_restore
from memories.services.placing import Placed, content_hash, lock_workspace, place
from memories.services.provenance import iso, provenance_event, record, record_many
from memories.services.relations import (
    DeclareResult,
    LinkResult,
    entities_declare,
    entity_declare,
    link_add,
    link_backfill,
    link_remove,
)
from memories.services.remember import RememberResult, remember
from memories.services.storing import store
from memories.services.supersede import supersede, supersession_undo
from memories.services.tenancy import (
    TOKEN_PREFIX,
    agent_authenticate,
    agent_create,
    agent_new_token,
    agent_reactivate,
    agent_revoke,
    hash_token,
    scope_get_or_create,
    workspace_get_or_create,
    workspace_of_token_hash,
)

__all__ = [
    "place",
    "remember",
    "store",
    "remember_many",
    "ERASE_BY",
    "Erasure",
    "erase_selection",
    "memories_erase",
    "memories_erase_by_agent",
    "memories_erase_by_user",
    "memory_erase",
    "CURATE_ACTIONS",
    "FEEDBACK_ACTIONS",
    "FEEDBACK_STEP",
    "TOKEN_PREFIX",
    "BulkResult",
    "DeclareResult",
    "LinkResult",
    "MergeResult",
    "entities_declare",
    "entity_declare",
    "entity_merge",
    "entity_retype",
    "entity_split",
    "entity_unmerge",
    "link_add",
    "link_backfill",
    "link_remove",
    "Episode",
    "Placed",
    "RememberResult",
    "agent_authenticate",
    "agent_create",
    "agent_new_token",
    "agent_reactivate",
    "agent_revoke",
    "bulk_prepare",
    "bulk_store",
    "announce_import",
    "content_hash",
    "episode_before",
    "episode_rows",
    "hash_token",
    "workspace_of_token_hash",
    "iso",
    "lock_workspace",
    "membership_remove",
    "membership_set",
    "memory_curate_by_user",
    "memory_feedback",
    "memory_feedback_by_user",
    "memory_forget",
    "memory_forget_by_user",
    "memory_merge",
    "memory_restore",
    "provenance_event",
    "record",
    "record_many",
    "scope_get_or_create",
    "supersede",
    "supersession_undo",
    "workspace_get_or_create",
]
