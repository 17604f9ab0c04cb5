"""Start-up checks (``manage.py check``) with stable ids and a hint."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.utils import OperationalError

from memories.compile import decay_policy
from memories.embeddings import EmbedderError, check_embedder_available
from memories.scorer import skipped_categories, skipped_dimensions


@register(Tags.database)
def check_pgvector(app_configs, **kwargs):
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
    """Searches rely on each connection starting with their settings (libpq ``options``, see
    ``meaning_memory.db.search_options``); a pooler may drop them."""
    names = ["hnsw.ef_search", "hnsw.iterative_scan"]
    expected = [str(settings.MM_HNSW_EF_SEARCH), "relaxed_order"]
    if settings.MM_SEARCH_PREPARED:
        names.append("plan_cache_mode")
        expected.append("force_generic_plan")
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join("current_setting(%s, true)" for _ in names), names)
        found = list(cursor.fetchone())
    if found == expected:
        return []
    wrong = [
        (name, got, want)
        for name, got, want in zip(names, found, expected, strict=True)
        if got != want
    ]
    return [
        Warning(
            "database connections start with "
            + ", ".join(f"{name}={got}, not {want}" for name, got, want in wrong)
            + ": search will find fewer of the right memories or take longer",
            id="memories.W001",
            hint="A connection pooler between the engine and PostgreSQL must pass the libpq "
            "'options' startup parameter through, or set these on the database: "
            + "; ".join(f"ALTER DATABASE ... SET {name} = {want}" for name, _, want in wrong)
            + ".",
        )
    ]


@register()
def check_embedder(app_configs, **kwargs):
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


@register()
def check_decay(app_configs, **kwargs):
    try:
        decay_policy()
    except ImproperlyConfigured as exc:
        return [
            Error(
                str(exc),
                id="memories.E004",
                hint="Write category:preset pairs separated by commas, e.g. "
                "MM_DECAY_CATEGORIES=event:fast,decision:never.",
            )
        ]
    return []


@register()
def check_scorer(app_configs, **kwargs):
    try:
        skipped_dimensions()
        skipped_categories()
    except ImproperlyConfigured as exc:
        return [
            Error(
                str(exc),
                id="memories.E005",
                hint="Comma-separated letters (s,t,a,r,e) or categories, or 'none'; unset for "
                "the defaults of the scorer's calibration.",
            )
        ]
    return []
