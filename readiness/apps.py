from django.apps import AppConfig


class ReadinessConfig(AppConfig):
    name = "readiness"
    verbose_name = "Readiness"

    def ready(self) -> None:
        from readiness import system_checks  # noqa: F401 (registers the start-up checks)
