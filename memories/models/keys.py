"""Keys between two tables of a workspace's data (``meaning_memory.distribution.DISTRIBUTED``).

Each such key is composite in the database (``workspace_id`` and the id, migrations
``memories`` 0029-0030), but Django joins along a key by the id alone. A distributed
PostgreSQL (Citus, docs/SCALING.md) runs a join on one node only when it matches the column the
tables are distributed by: ``ON link.target_entity_id = entity.id`` joins every shard of one
table with every shard of the other ("complex joins are only supported when all distributed
tables are co-located and joined on their distribution columns"). Along these keys every join
also matches ``workspace_id``, which on one PostgreSQL changes no answer: the database's own
composite key already holds both ends in one workspace.

In migrations they are plain ``ForeignKey`` and ``OneToOneField`` (``deconstruct``): the
columns and constraints are the same, only the joins the ORM writes differ.
"""

from __future__ import annotations

from django.db import models
from django.db.models.expressions import Col
from django.db.models.lookups import Exact

#: The column every table of a workspace's data is distributed by.
WORKSPACE_FIELD = "workspace"


class _SameWorkspace:
    def get_extra_restriction(self, alias, related_alias):
        """``alias`` is the table the key points at, ``related_alias`` the table holding it
        (both ways a join is made). None where Django gives one side only (the first join of
        an ``exclude()``'s subquery, trimmed away): nothing to match there."""
        if alias is None or related_alias is None:
            return None
        pointed_at = self.remote_field.model._meta.get_field(WORKSPACE_FIELD)
        holding = self.model._meta.get_field(WORKSPACE_FIELD)
        return Exact(Col(alias, pointed_at), Col(related_alias, holding))


class WorkspaceForeignKey(_SameWorkspace, models.ForeignKey):
    """A ``ForeignKey`` between two tables of a workspace's data (the module's docstring)."""

    def deconstruct(self):
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.ForeignKey", args, kwargs


class WorkspaceOneToOneField(_SameWorkspace, models.OneToOneField):
    """A ``OneToOneField`` between two tables of a workspace's data (the module's docstring)."""

    def deconstruct(self):
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.OneToOneField", args, kwargs
