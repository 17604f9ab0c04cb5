from django.apps import AppConfig


class ConsolidationConfig(AppConfig):
    name = "consolidation"
    verbose_name = "Consolidation"

    def ready(self) -> None:
        from consolidation.tasks import queue_after_import
        from memories.signals import bulk_imported

        bulk_imported.connect(queue_after_import, dispatch_uid="consolidation-after-import")
