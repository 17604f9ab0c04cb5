"""What the memory engine tells other apps, without importing them: they connect receivers in
their ``AppConfig.ready`` (consolidation queues a run after an import)."""

from django.dispatch import Signal

#: An import stored new memories (the bulk API and ``mm_bulk_remember``, ``meaning-memory seed``
#: and ``import``): sent by ``services.bulk.announce_import`` with ``workspace_id`` and
#: ``stored`` (how many) once they are committed.
bulk_imported = Signal()

#: Memories are about to be erased for good (``memories.services.erase``), inside its
#: transaction: sent with ``workspace_id`` and ``memory_pks`` while their rows still exist, so
#: that an app that copied their words (consolidation's threads, word counts and compiled
#: files) removes them in the same transaction.
erasing = Signal()

#: ``meaning-memory purge`` runs (sent with ``full``): an app vacuums (or, ``full``, rewrites)
#: the tables an erasure deletes from, and answers with their names.
purging = Signal()
