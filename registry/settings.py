"""Settings, all from the environment. See docs/configuration.md for every variable."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from registry.env import (
    env_bool,
    env_duration,
    env_int,
    env_list,
    env_lockout_parameters,
    env_networks,
    env_str,
    parse_contract_store,
    parse_database_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "demo-only-insecure-secret-key"  # noqa: S105 - DEBUG demo only
# Former keys, while sessions and audit seals made with them still matter (docs/operations.md).
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS")

ALLOWED_HOSTS = [h.strip() for h in env_str("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h.strip()]
if DEBUG:
    ALLOWED_HOSTS += ["testserver", "[::1]"]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env_str("CSRF_TRUSTED_ORIGINS").split(",") if o.strip()]

SITE_NAME = env_str("SITE_NAME", "Dataset registry")
LIST_PAGE_SIZE = env_int("LIST_PAGE_SIZE", 100, minimum=1)  # rows per page of every list page
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_prometheus",
    "django_fsm",  # its admin integration (change_requests/admin.py) asks to be installed
    "registry",
    "contracts_app",
    "change_requests",
    "lanes",
    "lineage",
    "freshness",
    "incidents",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # Endpoints listed with registry.hooks.hot_path leave the chain here.
    "registry.middleware.HotPathMiddleware",
    # A NUL in a path, query string or body is a 400 here, not a 500 in a query.
    "registry.middleware.RefuseNulMiddleware",
    # /api/ answers its 404s and 405s in JSON, whoever raised them.
    "registry.middleware.JsonApiErrorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "registry.urls"
WSGI_APPLICATION = "registry.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "registry.views.site_context",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL", "sqlite:///var/registry.sqlite3")
DATABASES = {"default": parse_database_url(DATABASE_URL, base_dir=BASE_DIR)}
if "postgresql" in DATABASES["default"]["ENGINE"]:
    # PostgreSQL's JIT compiles a plan when its estimated cost is high, which the
    # registry's short statements on large tables often are: a count on the dataset list
    # took 3.5 s with it and 0.2 s without. `?options=-c jit=on` in the URL turns it back on.
    DATABASES["default"]["OPTIONS"].setdefault("options", "-c jit=off")
# PostgreSQL: the role the app serves as, granted its rights by `migrate` (run as the
# tables' owner); it gets only SELECT and INSERT on the audit log (docs/operations.md).
DATABASE_SERVING_ROLE = env_str("DATABASE_SERVING_ROLE")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
# People land on their inbox: what they and their teams must act on now.
LOGIN_REDIRECT_URL = "inbox"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "static"

# --- REST API -------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Bearer first: DRF takes the first class's challenge for its 401s.
        "registry.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["registry.api.permissions.ScopedToken"],
    # drf-spectacular's, listing the errors each operation can answer (registry/api/schema.py).
    "DEFAULT_SCHEMA_CLASS": "registry.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "registry.api.pagination.KeysetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "registry.api.errors.exception_handler",
    # JSON within bounds (registry.jsonbody): depth, integer size, no lone surrogates.
    "DEFAULT_PARSER_CLASSES": [
        "registry.api.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Dataset registry API",
    "DESCRIPTION": "Teams, datasets, consumers, contracts, change requests, lineage and freshness.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Celery ----------------------------------------------------------------
# Without a broker (the embedded demo) tasks run in-process, eagerly.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or None
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ACKS_LATE = True
# Ride out a broker restart: keep reconnecting, at start-up too, for as long as it takes,
# and survive the moment the connection goes (registry/broker.py).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT = "registry.broker:Transport"
# A message the worker took and did not acknowledge goes back to the queue after this
# long; deadline tasks are scheduled at most FRESHNESS_ETA_HORIZON ahead, well below it.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_duration("CELERY_VISIBILITY_TIMEOUT", "1h").total_seconds()}
FRESHNESS_SWEEP_INTERVAL = env_duration("FRESHNESS_SWEEP_INTERVAL", "15s")
# Apps add their beat entries in their own blocks below, by readable name.
CELERY_BEAT_SCHEDULE: dict[str, dict] = {}

# --- Contract store --------------------------------------------------------
CONTRACT_STORE = parse_contract_store(
    env_str("CONTRACT_STORE", "var/contract-store"), base_dir=BASE_DIR
)
S3_ENDPOINT_URL = env_str("S3_ENDPOINT_URL") or None
S3_REGION = env_str("S3_REGION", "us-east-1")
S3_ACCESS_KEY_ID = env_str("S3_ACCESS_KEY_ID") or env_str("AWS_ACCESS_KEY_ID")
S3_SECRET_ACCESS_KEY = env_str("S3_SECRET_ACCESS_KEY") or env_str("AWS_SECRET_ACCESS_KEY")
CONTRACTS_ROOT = Path(env_str("CONTRACTS_ROOT", str(BASE_DIR / "fixtures" / "contracts")))

# --- Column usage (who reads what; registry/usage.py) -------------------------
# A column a job read counts for this long after it was last seen reading it.
COLUMN_USAGE_WINDOW = env_duration("COLUMN_USAGE_WINDOW", "30d")

# --- Change requests and notifications -------------------------------------
CHANGE_REQUEST_DEADLINE = env_duration("CHANGE_REQUEST_DEADLINE", "7d")
CHANGE_REQUEST_REMINDER_BEFORE = env_duration("CHANGE_REQUEST_REMINDER_BEFORE", "1d")
# How long PostgreSQL may spend planning one consumer's SQL when a change is verified on a scratch schema.
CHANGE_REQUEST_VERIFY_TIMEOUT = env_duration("CHANGE_REQUEST_VERIFY_TIMEOUT", "2s")
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "registry@localhost")
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(BASE_DIR / "var" / "mail"))  # for the file-based backend

# YAML people send (the propose page, contract and ODCS files, the demo's teams file) is read
# within these bounds by registry_client.safeyaml, which also refuses anchors and aliases.
YAML_MAX_BYTES = env_int("YAML_MAX_BYTES", 1024 * 1024, minimum=1024)
YAML_MAX_DEPTH = env_int("YAML_MAX_DEPTH", 100, minimum=10)

# --- Lineage ---------------------------------------------------------------
# /metrics answers a bearer token equal to METRICS_TOKEN, or a signed-in governance admin;
# METRICS_PUBLIC opens it to anyone, on purpose only (DEBUG does not: the demo runs on shared hosts).
# The database-derived series are computed at most once per METRICS_CACHE_SECONDS.
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
METRICS_PUBLIC = env_bool("METRICS_PUBLIC", False)
METRICS_CACHE_SECONDS = env_int("METRICS_CACHE_SECONDS", 5, minimum=0)
# A RunEvent further ahead of this clock is refused (422): it would pin its run's state.
LINEAGE_MAX_FUTURE_SKEW = env_duration("LINEAGE_MAX_FUTURE_SKEW", "1d")
# Bounded work per request: datasets (inputs + outputs) one event may name, events per batch.
LINEAGE_MAX_DATASETS_PER_EVENT = env_int("LINEAGE_MAX_DATASETS_PER_EVENT", 1000, minimum=1)
LINEAGE_MAX_BATCH_EVENTS = env_int("LINEAGE_MAX_BATCH_EVENTS", 1000, minimum=1)
LINEAGE_MAX_BODY_BYTES = env_int("LINEAGE_MAX_BODY_BYTES", 5 * 1024 * 1024, minimum=1024)
# A request's total work (413 past any, naming the setting): gzip members, and the datasets
# first seen, the facets and the schema/column lineage fields its events name together.
LINEAGE_MAX_GZIP_MEMBERS = env_int("LINEAGE_MAX_GZIP_MEMBERS", 100, minimum=1)
LINEAGE_MAX_REQUEST_NEW_DATASETS = env_int("LINEAGE_MAX_REQUEST_NEW_DATASETS", 1000, minimum=1)
LINEAGE_MAX_REQUEST_FACETS = env_int("LINEAGE_MAX_REQUEST_FACETS", 50_000, minimum=1)
LINEAGE_MAX_REQUEST_COLUMNS = env_int("LINEAGE_MAX_REQUEST_COLUMNS", 100_000, minimum=1)
# Request bytes per API token (registry.ratelimit): a bucket of BURST bytes refilled at
# BYTES_PER_SECOND, charged with every body (refused ones, and 429s, too); empty, 429. 0 disables.
LINEAGE_TOKEN_BYTES_PER_SECOND = env_int("LINEAGE_TOKEN_BYTES_PER_SECOND", 2 * 1024 * 1024, minimum=0)
LINEAGE_TOKEN_BURST_BYTES = env_int("LINEAGE_TOKEN_BURST_BYTES", 16 * 1024 * 1024, minimum=0)
# What a dataset first seen costs the token's bucket, in bytes (charged once it is stored).
LINEAGE_TOKEN_NEW_DATASET_BYTES = env_int("LINEAGE_TOKEN_NEW_DATASET_BYTES", 16 * 1024, minimum=0)
# A second bucket, of the bytes read of bodies refused as unreadable or too large (400, 413):
# a pipeline sends few; a token past it is answered 429 whatever it sends. 0 disables it.
LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND = env_int("LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND", 64 * 1024, minimum=0)
LINEAGE_TOKEN_REFUSED_BURST_BYTES = env_int("LINEAGE_TOKEN_REFUSED_BURST_BYTES", 1024 * 1024, minimum=0)
# A 429 of the budget is answered after up to HOLD_MS (never past its Retry-After), in at most
# HOLD_SLOTS threads of a process at once: a client that resends at once sends about once a second.
LINEAGE_TOKEN_REFUSAL_HOLD_MS = env_int("LINEAGE_TOKEN_REFUSAL_HOLD_MS", 1000, minimum=0)
LINEAGE_TOKEN_REFUSAL_HOLD_SLOTS = env_int("LINEAGE_TOKEN_REFUSAL_HOLD_SLOTS", 4, minimum=0)
# Where the buckets are shared by every server process (a Redis URL); empty, each process keeps
# its own and a token gets the rate once per process. Defaults to a Redis CELERY_BROKER_URL.
LINEAGE_TOKEN_BUDGET_REDIS_URL = env_str(
    "LINEAGE_TOKEN_BUDGET_REDIS_URL",
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "")
# Graph walks use PostgreSQL prepared statements; turn off behind a
# transaction-pooling PgBouncer.
LINEAGE_PREPARED_STATEMENTS = env_bool("LINEAGE_PREPARED_STATEMENTS", True)
# Raw events on PostgreSQL: one partition per month of event time (lineage.partitions), made
# this many months ahead by beat (and by each prune_lineage_events run).
LINEAGE_EVENT_PARTITIONS_AHEAD = env_int("LINEAGE_EVENT_PARTITIONS_AHEAD", 3, minimum=1)
CELERY_BEAT_SCHEDULE["lineage-raw-event-partitions"] = {
    "task": "lineage.create_raw_event_partitions",
    "schedule": env_duration("LINEAGE_EVENT_PARTITIONS_INTERVAL", "6h").total_seconds(),
}
# Column usage from each event's facets and SQL (docs/lineage.md, "Column usage").
LINEAGE_COLUMN_USAGE = env_bool("LINEAGE_COLUMN_USAGE", True)
# The sql job facet is parsed up to this size; a longer query reads all/unknown columns.
LINEAGE_SQL_MAX_BYTES = env_int("LINEAGE_SQL_MAX_BYTES", 100_000, minimum=0)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(LINEAGE_MAX_BODY_BYTES * 4, 2_621_440)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}

# --- Change-request clock (contracts_app) -----------------------------------
# How often beat looks for requests to remind or escalate; the deadline and the
# reminder lead time are CHANGE_REQUEST_DEADLINE and CHANGE_REQUEST_REMINDER_BEFORE above.
CHANGE_REQUEST_CLOCK_INTERVAL = env_duration("CHANGE_REQUEST_CLOCK_INTERVAL", "60s")
# First retry of a failed e-mail or webhook after about this long, doubling up to 30 minutes.
CHANGE_REQUEST_RETRY_BACKOFF = env_duration("CHANGE_REQUEST_RETRY_BACKOFF", "30s")
# Webhooks reach public addresses only; these networks are let through too, for an
# internal receiver (docs/operations.md, "Webhook targets").
WEBHOOK_ALLOWED_NETWORKS = env_networks("WEBHOOK_ALLOWED_NETWORKS")
if CHANGE_REQUEST_CLOCK_INTERVAL.total_seconds() < 1:
    raise ImproperlyConfigured("CHANGE_REQUEST_CLOCK_INTERVAL must be at least 1s")
if CHANGE_REQUEST_REMINDER_BEFORE >= CHANGE_REQUEST_DEADLINE:
    raise ImproperlyConfigured(
        "CHANGE_REQUEST_REMINDER_BEFORE must be shorter than CHANGE_REQUEST_DEADLINE "
        f"(got {CHANGE_REQUEST_REMINDER_BEFORE} and {CHANGE_REQUEST_DEADLINE})"
    )
# The inbox's daily digest (change_requests.digest): the hour (UTC) beat sends it
# (its beat entry, a crontab, is added by registry/celery.py).
INBOX_DIGEST_HOUR = env_int("INBOX_DIGEST_HOUR", 7, minimum=0)
if INBOX_DIGEST_HOUR > 23:
    raise ImproperlyConfigured(f"INBOX_DIGEST_HOUR must be an hour of the day, 0 to 23 (got {INBOX_DIGEST_HOUR})")
CELERY_BEAT_SCHEDULE["change-requests-clock"] = {
    "task": "contracts_app.change_request_clock",
    "schedule": CHANGE_REQUEST_CLOCK_INTERVAL.total_seconds(),
    # A pass that waited longer than an interval is superseded by the next one: without
    # this, passes queued faster than the workers run them (two beats, a slow database)
    # pile up in the broker ahead of the deliveries and deadline tasks.
    "options": {"expires": CHANGE_REQUEST_CLOCK_INTERVAL.total_seconds()},
}

# --- Lanes (docs/lanes.md) ----------------------------------------------------
# How often beat queues the 30/7/1-day sunset reminders and sends unsent ones (each
# reminder is sent once per lane, team, step and sunset, however often it runs).
LANE_REMINDER_INTERVAL = env_duration("LANE_REMINDER_INTERVAL", "1h")
if LANE_REMINDER_INTERVAL.total_seconds() < 1:
    raise ImproperlyConfigured("LANE_REMINDER_INTERVAL must be at least 1s")
CELERY_BEAT_SCHEDULE["lanes-sunset-reminders"] = {
    "task": "lanes.sunset_reminders",
    "schedule": LANE_REMINDER_INTERVAL.total_seconds(),
    "options": {"expires": LANE_REMINDER_INTERVAL.total_seconds()},  # as the change-request clock's
}

# --- Freshness ---------------------------------------------------------------
# FRESHNESS_SWEEP_INTERVAL (above, with Celery): how often beat sweeps for due datasets.
# Deadlines within FRESHNESS_ETA_HORIZON get a Celery task with that eta; later ones
# are scheduled by a later sweep (keep it below the broker's visibility timeout).
FRESHNESS_ETA_HORIZON = env_duration("FRESHNESS_ETA_HORIZON", "2m")
FRESHNESS_SWEEP_BATCH = env_int("FRESHNESS_SWEEP_BATCH", 10_000, minimum=1)
# The in-process evaluator (a thread in `runserver`, or `manage.py evaluate_freshness
# --loop`) runs when no broker is configured; set to 0 to turn the thread off.
FRESHNESS_IN_PROCESS_EVALUATOR = env_bool("FRESHNESS_IN_PROCESS_EVALUATOR", not CELERY_BROKER_URL)
if FRESHNESS_SWEEP_INTERVAL.total_seconds() < 1:
    raise ImproperlyConfigured("FRESHNESS_SWEEP_INTERVAL must be at least 1s")
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {})["FreshnessStatusEnum"] = (
    "freshness.constants.FreshnessStatus")
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["DecidedByEnum"] = "registry.jobs.DecidedBy"
CELERY_BEAT_SCHEDULE["freshness-sweep"] = {
    "task": "freshness.sweep",
    "schedule": FRESHNESS_SWEEP_INTERVAL.total_seconds(),
    # A sweep that waited longer than an interval is superseded by the next one.
    "options": {"expires": FRESHNESS_SWEEP_INTERVAL.total_seconds()},
}

# --- Login limits (django-axes; docs/operations.md, "Login limits") ----------------
# Failed password logins (the login page and the admin's) are counted per username
# and client address; at the limit, logins from there are refused with 429 for
# LOGIN_LOCKOUT, even with the right password. A success resets the count.
INSTALLED_APPS += ["axes"]
MIDDLEWARE += ["axes.middleware.AxesMiddleware"]  # last, as django-axes asks
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = env_duration("LOGIN_LOCKOUT", "15m")
AXES_LOCKOUT_PARAMETERS = env_lockout_parameters("LOGIN_LOCKOUT_PARAMETERS", "username+ip_address")
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registry/lockout.html"
# django-axes prints an "AXES: BEGIN …" banner when it starts and logs every attribute of a
# failed login in verbose mode: worth it in the web server's log, noise on every command's output.
AXES_VERBOSE = sys.argv[1:2] == ["runserver"] or Path(sys.argv[0]).name in ("gunicorn", "uvicorn", "daphne")
# Behind a proxy, the client's address is the last entry the proxy appends to this header.
LOGIN_CLIENT_IP_HEADER = env_str("LOGIN_CLIENT_IP_HEADER")
AXES_CLIENT_IP_CALLABLE = "registry.auth.login_client_ip"
if AXES_COOLOFF_TIME.total_seconds() < 1:
    raise ImproperlyConfigured("LOGIN_LOCKOUT must be at least 1s")

# --- HTTPS (docs/operations.md, "HTTPS") ---------------------------------------------
# HTTPS=1 when the site is served over HTTPS (TLS ending here or at a proxy): secure
# cookies, a redirect from http, and HSTS. Each can be set on its own too.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
# Probes and Prometheus scrape over plain http inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS)
SECURE_HSTS_SECONDS = int(env_duration("SECURE_HSTS_SECONDS", "365d" if HTTPS else "0").total_seconds())
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
# A TLS-ending proxy tells Django the request was https with this header (e.g. HTTP_X_FORWARDED_PROTO).
_proxy_ssl_header = env_str("SECURE_PROXY_SSL_HEADER")
SECURE_PROXY_SSL_HEADER = (_proxy_ssl_header, "https") if _proxy_ssl_header else None

# --- Content-Security-Policy (django-csp; docs/operations.md) ----------------------
# Pages load scripts and styles from this site's static files only; a <style>
# element the page draws (the lineage graph) carries the request's nonce.
# The API docs pages (Swagger UI, Redoc) relax it for themselves (registry/urls.py).
from csp.constants import NONCE, NONE, SELF  # noqa: E402 - this block's own import

MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1, "csp.middleware.CSPMiddleware")
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
