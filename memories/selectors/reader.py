"""Who reads, as one value: the workspace, the scopes the reader sees (all of them for a team
member), and who it is. Made only by ``Reader.of_agent``, ``Reader.of_member`` (which checks
the member's role) and ``Reader.of_engine`` (the engine's own work and an operator's command at
the machine), so an adapter never works out what a reader sees: it asks for its reader and
hands it on (the contract in ``pyproject.toml`` and ``test_layers.py`` keep visibility and
roles out of the adapters and the presenters). Every selector that reads takes one, as do the
read operations (search, list, compile, traverse); a service that acts for an agent reads
through ``Reader.of_agent`` of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from memories.errors import NotFound
from memories.models import Agent, Membership, Workspace
from memories.selectors.permissions import membership_of, require_role, user_may
from memories.selectors.visibility import visible_scope_ids

#: Only this module's constructors hold it.
_MADE_HERE = object()


@dataclass(frozen=True)
class Reader:
    workspace: Workspace
    #: The scopes whose memories it reads; None: every scope of the workspace (a member).
    scope_ids: tuple[int, ...] | None
    agent: Agent | None = None
    #: A team member's membership (its user and role); None for an agent.
    membership: Membership | None = None
    _made: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._made is not _MADE_HERE:
            raise TypeError(
                "a Reader is made by Reader.of_agent, Reader.of_member or Reader.of_engine only"
            )

    @classmethod
    def of_agent(cls, agent: Agent) -> Reader:
        """An agent: its private scope and the shared scopes it belongs to."""
        return cls(
            workspace=agent.workspace,
            scope_ids=tuple(visible_scope_ids(agent)),
            agent=agent,
            _made=_MADE_HERE,
        )

    @classmethod
    def of_member(cls, user: Any, workspace: Workspace | str, action: str = "read") -> Reader:
        """A team member of ``workspace`` (it or its slug) whose role allows ``action``: the
        whole workspace. NotFound when the user is no member (a workspace it does not see is
        one that does not exist), Forbidden when the role is below the action's."""
        slug = workspace.slug if isinstance(workspace, Workspace) else workspace
        if not getattr(user, "is_authenticated", False):
            raise NotFound("No such workspace.")
        membership = membership_of(user, slug)
        if action != "read":
            require_role(user, membership.workspace, action)
        return cls(
            workspace=membership.workspace,
            scope_ids=None,
            membership=membership,
            _made=_MADE_HERE,
        )

    @classmethod
    def of_engine(cls, workspace: Workspace) -> Reader:
        """The engine itself (consolidation, the readiness checks) or an operator's command at
        the machine: the whole workspace, no one's role."""
        return cls(workspace=workspace, scope_ids=None, _made=_MADE_HERE)

    @property
    def workspace_id(self) -> int:
        return self.workspace.pk

    @property
    def user(self) -> Any:
        return self.membership.user if self.membership is not None else None

    @property
    def role(self) -> str | None:
        return self.membership.role if self.membership is not None else None

    @property
    def scope_list(self) -> list[int] | None:
        """``scope_ids`` as a list, as a statement's array parameter takes it."""
        return None if self.scope_ids is None else list(self.scope_ids)

    @property
    def is_agent(self) -> bool:
        return self.agent is not None

    def sees(self, queryset: QuerySet, prefix: str = "") -> QuerySet:
        """``queryset`` (of a workspace's rows) narrowed to this reader's workspace and scopes;
        ``prefix`` leads from the row to its memory (``"first__"``), empty for memories."""
        queryset = queryset.filter(workspace_id=self.workspace_id)
        if self.scope_ids is not None:
            queryset = queryset.filter(**{f"{prefix}scope_id__in": self.scope_ids})
        return queryset

    def may(self, action: str) -> bool:
        """Whether this member's role allows ``action`` (a key of ``ROLE_FOR``); an agent acts
        through the API's own rules, never a member's."""
        return self.membership is not None and user_may(self.user, self.workspace, action)

    def require(self, action: str) -> None:
        """Forbidden unless this member's role allows ``action`` (NotFound for an agent)."""
        if self.membership is None:
            raise NotFound("No such workspace.")
        require_role(self.user, self.workspace, action)
