"""Start-up checks (``manage.py check``) with stable ids and a hint."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import connection
from django.db.utils import OperationalError


@register(Tags.database)
def check_pgvector(app_configs, **kwargs):  # type: ignore[no-untyped-def]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            available = cursor.fetchone() is not None
    except OperationalError as exc:
        return [
            Error(
                f"cannot connect to PostgreSQL: {exc}",
                id="memories.E001",
                hint="Check DATABASE_URL, or unset it to use the embedded server.",
            )
        ]
    if not available:
        return [
            Error(
                "the pgvector extension is not available on this PostgreSQL server",
                id="memories.E002",
                hint="Install pgvector on the server (https://github.com/pgvector/pgvector) "
                "or unset DATABASE_URL to use the embedded server, which has it.",
            )
        ]
    return check_search_settings()


def check_search_settings() -> list[Warning]:
    """Searches rely on each connection starting with pgvector's search settings (libpq
    ``options``, see ``meaning_memory.db.search_options``); a pooler may drop them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('hnsw.ef_search', true), "
            "current_setting('hnsw.iterative_scan', true)"
        )
        found = cursor.fetchone()
    expected = (str(settings.MM_HNSW_EF_SEARCH), "relaxed_order")
    if found == expected:
        return []
    return [
        Warning(
            f"database connections start with hnsw.ef_search={found[0]} and "
            f"hnsw.iterative_scan={found[1]}, not {expected[0]} and {expected[1]}: "
            "vector search will find fewer of the right memories",
            id="memories.W001",
            hint="A connection pooler between the engine and PostgreSQL must pass the libpq "
            "'options' startup parameter through, or set both on the database: ALTER DATABASE "
            f"... SET hnsw.ef_search = {expected[0]}; ... SET hnsw.iterative_scan = "
            "relaxed_order.",
        )
    ]


@register()
def check_embedder(app_configs, **kwargs):  # type: ignore[no-untyped-def]
    from memories.embeddings import EmbedderError, check_embedder_available

    try:
        check_embedder_available()
    except EmbedderError as exc:
        hint = (
            "Reinstall requirements.txt."
            if settings.MM_EMBEDDER == "local"
            else "Set MM_EMBEDDER_URL, MM_EMBEDDER_MODEL and MM_EMBEDDER_API_KEY."
        )
        return [Error(f"embedder not loadable: {exc}", id="memories.E003", hint=hint)]
    return []
