from django.apps import AppConfig


class ConsolidationConfig(AppConfig):
    name = "consolidation"
    verbose_name = "Consolidation"

    def ready(self) -> None:
        from consolidation.erasure import forget_erased, purge_tables
        from consolidation.tasks import queue_after_import
        from memories.signals import bulk_imported, erasing, purging

        bulk_imported.connect(queue_after_import, dispatch_uid="consolidation-after-import")
        erasing.connect(forget_erased, dispatch_uid="consolidation-erasing")
        purging.connect(purge_tables, dispatch_uid="consolidation-purging")
