"""The team dashboard: server-rendered pages over the same services and selectors as the API.

A page belongs to one workspace (``/w/<slug>/…``) and needs a membership in it; anything else,
a workspace the user is not a member of or a memory of another workspace, is a 404. Viewers
read; curators and admins also give feedback and manage agents (a viewer's forged POST is a
403, and nothing changes).
"""

from memories.views.common import page_context, page_membership

__all__ = ["page_context", "page_membership"]
