"""What the memory engine tells other apps, without importing them: they connect receivers in
their ``AppConfig.ready`` (consolidation queues a run after an import)."""

from django.dispatch import Signal

#: A bulk import stored new memories (the bulk API, ``mm_bulk_remember``, ``meaning-memory
#: seed``): sent with
#: ``workspace_id`` and ``stored`` (how many) once they are committed.
bulk_imported = Signal()
