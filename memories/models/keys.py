"""Rows of a workspace's data, and the keys between two of its tables
(``meaning_memory.distribution.DISTRIBUTED``): what a distributed PostgreSQL needs of the ORM.

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

A row of those tables (``WorkspaceRow``) is saved by an UPDATE that names its workspace and
never sets it: Citus refuses to set the column a table is distributed by, to the value it
already holds too ("modifying the partition value of rows is not allowed"), and an UPDATE by id
alone asks every shard.
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


class WorkspaceRow(models.Model):
    """A row of a table of a workspace's data. It never moves to another workspace: saving it
    again updates it where its workspace is, every column but the workspace's."""

    class Meta:
        abstract = True

    def _do_update(self, base_qs, using, pk_val, values, update_fields, forced_update):
        # Django's own step of ``save()`` for an existing row (the values to set, by field);
        # when it updates nothing, Django inserts the row.
        kept = [value for value in values if value[0].name != WORKSPACE_FIELD]
        here = base_qs.filter(**{f"{WORKSPACE_FIELD}_id": getattr(self, f"{WORKSPACE_FIELD}_id")})
        if super()._do_update(here, using, pk_val, kept, update_fields, forced_update):
            return True
        if base_qs.filter(pk=pk_val).exists():
            raise ValueError(
                f"{self._meta.label} {pk_val} is in another workspace: a row never moves"
            )
        return False
