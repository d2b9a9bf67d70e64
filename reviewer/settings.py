"""One settings module; every deployment difference comes from the environment."""

import ipaddress
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {value!r}") from None


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def metrics_networks(value: str, token: str) -> list | None:
    """METRICS_ALLOWED_NETWORKS as networks; None for "any" (accepted only with a token)."""
    if value.strip().lower() == "any":
        if not token:
            raise ImproperlyConfigured("METRICS_ALLOWED_NETWORKS=any serves /metrics to every address: set "
                                       "METRICS_TOKEN too.")
        return None
    networks = []
    for item in (part.strip() for part in value.split(",")):
        if item:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ImproperlyConfigured(f"METRICS_ALLOWED_NETWORKS: {item!r} is not an address or a network "
                                           "such as 10.0.0.0/8") from None
    return networks


def secret_key() -> str:
    """SECRET_KEY, or the contents of the file SECRET_KEY_FILE names (the demo writes one in var/)."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = os.environ.get("SECRET_KEY_FILE")
    if path:
        try:
            key = Path(path).read_text().strip()
        except OSError as error:
            raise ImproperlyConfigured(f"SECRET_KEY_FILE {path!r} cannot be read: {error.strerror}") from None
        if not key:
            raise ImproperlyConfigured(f"SECRET_KEY_FILE {path!r} is empty")
        return key
    return BUILTIN_SECRET_KEY


DEBUG = envbool("DEBUG", False)
# Only for DEBUG on a laptop: with DEBUG off the product refuses to start with this key (below).
BUILTIN_SECRET_KEY = "insecure-local-only-key-set-SECRET_KEY-in-production"
SECRET_KEY = secret_key()
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost")

# Production fails closed: without DEBUG, a guessable key or a host wildcard is a refusal to start.
if not DEBUG:
    if SECRET_KEY == BUILTIN_SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set: with DEBUG off the product will not start on the built-in key. Set "
            "SECRET_KEY (or SECRET_KEY_FILE, a file holding it); `bash .ci/demo` makes one in var/.")
    if not ALLOWED_HOSTS or any("*" in host for host in ALLOWED_HOSTS):
        raise ImproperlyConfigured(
            f"ALLOWED_HOSTS must name this site's host names with DEBUG off (got {ALLOWED_HOSTS!r}); "
            "a wildcard lets any Host header in.")

# HTTPS deployments (README, Security): all off by default, as the demo serves plain HTTP on loopback.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
# Behind a TLS-terminating proxy: the header it sets, e.g. X-Forwarded-Proto (its value must be https).
if os.environ.get("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = (
        "HTTP_" + os.environ["SECURE_PROXY_SSL_HEADER"].strip().upper().replace("-", "_"), "https")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")
SESSION_COOKIE_HTTPONLY = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "csp",
    "axes",
    "ninja",  # serves the API docs' Swagger UI from static files, not a CDN
    "pgtrigger",  # the ledger's rows refuse UPDATE and DELETE at the database (PostgreSQL)
    "agents",
    "reviewer",
]

MIDDLEWARE = [
    "reviewer.middleware.RequestIdMiddleware",  # first: every answer and every log line of a request has its id
    "reviewer.middleware.ProbeMiddleware",  # /healthz and /readyz for probes by address, before the Host check
    "reviewer.middleware.TracingMiddleware",  # with tracing on, the request's span covers all that follows
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files (htmx, CSS) from the app itself, no CDN
    "reviewer.status.middleware.StatusPageMiddleware",  # the stored status page, before what it has no use for
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "reviewer.middleware.RefuseControlCharactersMiddleware",  # a NUL in a filter is a 400, not a 500
    "reviewer.middleware.ViewerTimezoneMiddleware",  # times in the viewer's zone (the ``tz`` cookie)
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into the lockout page
]

# Content-Security-Policy: scripts, styles and requests from this site only; no inline script or
# style anywhere (htmx's own indicator style is off in base.html's htmx-config).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    },
}

# /metrics (docs/operations.md, "Metrics"): served to the networks METRICS_ALLOWED_NETWORKS lists (CIDRs,
# loopback unless set; "any" drops the check, and then METRICS_TOKEN must be set) and, when METRICS_TOKEN is
# set, to requests carrying it as a bearer token.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "").strip()
METRICS_ALLOWED_NETWORKS = metrics_networks(os.environ.get("METRICS_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128"),
                                            METRICS_TOKEN)
# Prometheus scrapes over plain HTTP inside the network: answered, not redirected to HTTPS.
SECURE_REDIRECT_EXEMPT = [r"^metrics$"]

# An API token works for this many days after it is made (admin and `api_token` say until when).
API_TOKEN_DAYS = envint("API_TOKEN_DAYS", 90)

# Logins (django-axes): after AXES_FAILURE_LIMIT failures a username is locked at the address they came
# from (never everywhere: nobody locks another's account from elsewhere), and after AXES_IP_FAILURE_LIMIT
# failures from one address, any usernames, the address is; for AXES_COOLOFF_MINUTES (README,
# Security: unlock in admin or `axes_reset`). The ceiling is reviewer/accounts/lockout.py's. A failed single
# sign-on counts against the browser that started it, never against the address: past
# SSO_ADDRESS_FAILURE_LIMIT failed sign-ins from one address, each browser there gets one failure.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MINUTES", 15))
AXES_IP_FAILURE_LIMIT = envint("AXES_IP_FAILURE_LIMIT", 50)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_USERNAME_CALLABLE = "reviewer.accounts.lockout.attempted_username"
SSO_ADDRESS_FAILURE_LIMIT = envint("SSO_ADDRESS_FAILURE_LIMIT", 50)

# The processor seconds one policy-lab preview (admin, API) may use before it stops with a message.
POLICY_LAB_CPU_SECONDS = envint("POLICY_LAB_CPU_SECONDS", 20)
# The learning loop's miner (docs/learning-loop.md): a proposal needs this many distinct support leads
# and this many decisions behind it; each is replayed on the newest LEARNING_REPLAY_RUNS stored runs.
LEARNING_MIN_LEADS = envint("LEARNING_MIN_LEADS", 3)
LEARNING_MIN_DECISIONS = envint("LEARNING_MIN_DECISIONS", 5)
LEARNING_REPLAY_RUNS = envint("LEARNING_REPLAY_RUNS", 1000)
AXES_HANDLER = "reviewer.accounts.lockout.LockoutHandler"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The client address is REMOTE_ADDR; behind N trusted reverse proxies, the N-th address from the right
# of X-Forwarded-For (what the nearest proxy saw), never a value the client typed itself.
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 0)
if TRUSTED_PROXY_COUNT:
    AXES_IPWARE_META_PRECEDENCE_ORDER = ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"]
    AXES_IPWARE_PROXY_COUNT = TRUSTED_PROXY_COUNT
    AXES_IPWARE_PROXY_ORDER = "right-most"
else:
    AXES_IPWARE_META_PRECEDENCE_ORDER = ["REMOTE_ADDR"]

# Single sign-on through an OpenID Connect provider (reviewer/accounts/sso.py; docs/operations.md, "Single
# sign-on"): on when OIDC_RP_CLIENT_ID is set. mozilla-django-oidc reads the OIDC_* names below;
# the authorization code flow with state, nonce and PKCE (S256). The backend stays listed when SSO is
# off and then authenticates nobody.
AUTHENTICATION_BACKENDS.append("reviewer.accounts.sso.SsoBackend")
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "").strip()
SSO_ENABLED = bool(OIDC_RP_CLIENT_ID)
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_ISSUER = os.environ.get("OIDC_OP_ISSUER", "").strip()
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "").strip()
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "").strip()
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "").strip()
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "").strip()
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "").strip() or "RS256"
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "").strip() or "openid email profile"
OIDC_USE_PKCE = True
OIDC_AUTHENTICATION_CALLBACK_URL = "sso_callback"  # the URL name; its address is SITE_URL's (reviewer.accounts.sso)
OIDC_TIMEOUT = envint("OIDC_TIMEOUT_SECONDS", 10)
# The claim that lists a person's groups at the provider, and the name the login button shows.
SSO_GROUPS_CLAIM = os.environ.get("SSO_GROUPS_CLAIM", "").strip() or "groups"
SSO_PROVIDER_NAME = os.environ.get("SSO_PROVIDER_NAME", "").strip() or "single sign-on"
# Where a sign-in that did not complete lands: the login page, which says so.
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/?sso=failed"
SSO_SETTINGS = ("OIDC_RP_CLIENT_SECRET", "OIDC_OP_ISSUER", "OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT",
                "OIDC_OP_USER_ENDPOINT", "OIDC_OP_JWKS_ENDPOINT")
if SSO_ENABLED and (missing := [name for name in SSO_SETTINGS if not globals()[name]]):
    raise ImproperlyConfigured(f"OIDC_RP_CLIENT_ID is set, so single sign-on is on, but {', '.join(missing)} "
                               "is not set: docs/operations.md, \"Single sign-on\", lists what it needs.")
# LOCAL_LOGIN=off: no username and password logins, on the login page or the admin's; only single
# sign-on. Emergency access: set it back on and restart (docs/operations.md).
LOCAL_LOGIN = envbool("LOCAL_LOGIN", True)
if not LOCAL_LOGIN:
    if not SSO_ENABLED:
        raise ImproperlyConfigured("LOCAL_LOGIN is off but single sign-on is not configured (OIDC_RP_CLIENT_ID "
                                   "and the rest): nobody could log in.")
    # Sessions opened with a password end too; permissions come from the SSO backend (a ModelBackend).
    AUTHENTICATION_BACKENDS.remove("django.contrib.auth.backends.ModelBackend")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

ROOT_URLCONF = "reviewer.urls"

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
                "reviewer.desk.navigation.pending_count",
                "reviewer.desk.navigation.brakes",
                "reviewer.desk.navigation.ready_count",
            ],
        },
    },
]

WSGI_APPLICATION = "reviewer.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=envint("DATABASE_CONN_MAX_AGE", 0),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A connection per thread, kept between requests and tasks (opening one costs ~1 ms of a run's
    # ~25: the file, the PRAGMAs, Django's SQL functions); DATABASE_CONN_MAX_AGE overrides.
    DATABASES["default"]["CONN_MAX_AGE"] = envint("DATABASE_CONN_MAX_AGE", 600)
    # WAL lets the web process read while a worker writes a trace step.
    # synchronous=NORMAL is safe with WAL (a power cut may lose the last commits, never corrupt the
    # file) and spares each of a run's ~20 commits an fsync under the single write lock.
    # IMMEDIATE: a transaction that reads and then writes takes the write lock up front, so it
    # waits its turn (busy timeout) instead of failing at once with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
         "transaction_mode": "IMMEDIATE"}
    )
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and not DATABASES["default"]["CONN_MAX_AGE"]:
    # A pool per process (psycopg_pool through Django): a request or a run takes a connection when it
    # first queries and hands it back when it closes it (at the request's or task's end, and while a
    # run waits on the model: agents.observer), so 100 runs in flight share a few connections and
    # nobody pays a new server connection per task. DATABASE_POOL_MAX_SIZE=0 turns it off.
    if (pool_size := envint("DATABASE_POOL_MAX_SIZE", 20)) < 0:
        raise ValueError(f"DATABASE_POOL_MAX_SIZE must not be negative, got {pool_size}")
    # Pooled connections are checked before use (CONN_HEALTH_CHECKS: Django passes psycopg_pool's
    # check_connection; a dead one is replaced). Replacing them after a database restart must not
    # wait out psycopg_pool's backoff (doubling for 5 minutes: pages failed for minutes after the
    # database was back): an attempt gives up after 2 s, and the next request starts a new one.
    # The web waits WEB_DATABASE_POOL_TIMEOUT for a connection, then answers 503 (reviewer.operations.errors):
    # its threads never outnumber its pool, so a longer wait only means the database is away.
    # Workers, whose threads may outnumber their pool, wait their turn for DATABASE_POOL_TIMEOUT.
    # reviewer/wsgi.py, the web's entry point, sets SERVING_WEB.
    if pool_size:
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": min(envint("DATABASE_POOL_MIN_SIZE", 2), pool_size), "max_size": pool_size,
            "timeout": envint("WEB_DATABASE_POOL_TIMEOUT", 4) if envbool("SERVING_WEB", False)
            else envint("DATABASE_POOL_TIMEOUT", 30),
            "reconnect_timeout": 2,
        }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A server that does not answer (not even with a refusal) fails a connection attempt in seconds,
    # not the system's TCP timeout; a URL's own ?connect_timeout= wins.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 3)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# On for the status page's chrome in its languages (docs/status-page.md, 'Languages'): its views
# activate a language for their response only; with no LocaleMiddleware the rest stays English.
USE_I18N = True
LANGUAGES = [("en", "English"), ("fr", "Français"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")  # filled by collectstatic

# The site's own address, for the absolute links in notifications (no trailing slash needed).
SITE_URL = os.environ.get("SITE_URL") or "http://127.0.0.1:8000"

# The public status page (docs/status-page.md): the company name customers read on it, and how many
# updates its feed carries.
STATUS_PAGE_NAME = os.environ.get("STATUS_PAGE_NAME") or "Our service"
STATUS_FEED_ENTRIES = envint("STATUS_FEED_ENTRIES", 50)
# The status page's languages, the source (English) first; each needs its facts and claim families in
# agents.core.guard.translation and its chrome in locale/ (docs/translations.md).
STATUS_LANGUAGES = envlist("STATUS_LANGUAGES", "en,fr,de")
if not STATUS_LANGUAGES or STATUS_LANGUAGES[0] != "en" or not set(STATUS_LANGUAGES) <= {"en", "fr", "de"}:
    raise ValueError(f"STATUS_LANGUAGES must start with en and name only en, fr, de; got {STATUS_LANGUAGES}")
if not 1 <= STATUS_FEED_ENTRIES <= 1000:
    raise ValueError(f"STATUS_FEED_ENTRIES must be 1-1000, got {STATUS_FEED_ENTRIES}")
# How long each web process reuses a stored representation it read before asking the database again
# (0: ask on every request).
STATUS_PAGE_REUSE_SECONDS = envint("STATUS_PAGE_REUSE_SECONDS", 1)
# Minutes before a scheduled maintenance starts that its subscribers are reminded of it (0: never).
MAINTENANCE_REMINDER_MINUTES = envint("MAINTENANCE_REMINDER_MINUTES", 60)
if not 0 <= MAINTENANCE_REMINDER_MINUTES <= 7 * 24 * 60:
    raise ValueError(f"MAINTENANCE_REMINDER_MINUTES must be 0-10080, got {MAINTENANCE_REMINDER_MINUTES}")
if not 0 <= STATUS_PAGE_REUSE_SECONDS <= 60:
    raise ValueError(f"STATUS_PAGE_REUSE_SECONDS must be 0-60, got {STATUS_PAGE_REUSE_SECONDS}")
# The subscribe form's confirmation emails within SUBSCRIBE_LIMIT_WINDOW_MINUTES (docs/subscriptions.md):
# at most so many to one mailbox (a+x@d is a@d), to one domain, and asked by one client address. Past
# a limit the form answers as always and sends nothing.
SUBSCRIBE_LIMIT_WINDOW_MINUTES = envint("SUBSCRIBE_LIMIT_WINDOW_MINUTES", 60)
SUBSCRIBE_MAILBOX_LIMIT = envint("SUBSCRIBE_MAILBOX_LIMIT", 3)
SUBSCRIBE_DOMAIN_LIMIT = envint("SUBSCRIBE_DOMAIN_LIMIT", 100)
SUBSCRIBE_CLIENT_LIMIT = envint("SUBSCRIBE_CLIENT_LIMIT", 10)
# ... and to one host of a webhook or Slack subscription's URL (a Slack workspace counts as a host).
SUBSCRIBE_HOST_LIMIT = envint("SUBSCRIBE_HOST_LIMIT", 20)
for _name in ("SUBSCRIBE_LIMIT_WINDOW_MINUTES", "SUBSCRIBE_MAILBOX_LIMIT", "SUBSCRIBE_DOMAIN_LIMIT",
              "SUBSCRIBE_CLIENT_LIMIT", "SUBSCRIBE_HOST_LIMIT"):
    if globals()[_name] < 1:
        raise ValueError(f"{_name} must be 1 or more, got {globals()[_name]}")
# Webhook and Slack subscribers' URLs (reviewer/models/subscriber_urls.py): the hosts a Slack incoming
# webhook may be on, and the hosts or networks taken despite a private address (and only they over http).
SUBSCRIBER_SLACK_HOSTS = [host.lower() for host in envlist("SUBSCRIBER_SLACK_HOSTS", "hooks.slack.com")]
SUBSCRIBER_PRIVATE_ALLOWED = envlist("SUBSCRIBER_PRIVATE_ALLOWED")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# The LLM layer reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL,
# OPENAI_TIMEOUT_SECONDS, OPENAI_MAX_RETRIES, OPENAI_STRUCTURED_OUTPUT and LLM_BACKEND itself, in
# agents.core.llm.client.client_from_env: one reader, shared by the command line, the workers and the tests.

# One JSON object per line on stderr, for a log shipper (reviewer/operations/logs.py, docs/operations.md). With
# DEBUG off Django's own configuration would write nothing: here every 5xx answer and every unhandled
# exception of a request is a line with the request id and the traceback (django.request logs 4xx
# answers as warnings: left out, a 404 is the client's business); warnings of libraries (the
# connection pool's failed attempts) go out too.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "reviewer.operations.logs.JsonLines"}},
    "filters": {"quiet_probes": {"()": "reviewer.operations.logs.QuietProbes"}},  # no line per health-check answer
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["quiet_probes"]}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        # Each writes through the root's handler (a worker's root is Celery's); no handler of their own,
        # so a line is written once.
        "agents": {"level": os.environ.get("LOG_LEVEL", "INFO")},
        "django": {"handlers": [], "level": "WARNING"},  # instead of Django's DEBUG-only console
        "django.request": {"level": "ERROR"},
    },
}

# Celery. Without CELERY_BROKER_URL the broker is a folder on disk (kombu's
# filesystem transport): no server to install, and web process and workers share it.
VAR_DIR = Path(os.environ.get("VAR_DIR") or BASE_DIR / "var")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
CELERY_BROKER_FOLDER = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem"):
    CELERY_BROKER_TRANSPORT = "reviewer.operations.broker:Transport"  # the filesystem transport, written atomically
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_FOLDER),
        "data_folder_out": str(CELERY_BROKER_FOLDER),
        "control_folder": str(CELERY_BROKER_FOLDER / "control"),
        "polling_interval": 0.1,
    }
else:
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        # kombu's Redis transport, with a worker that survives a Redis restart (reviewer/operations/broker.py)
        CELERY_BROKER_TRANSPORT = "reviewer.operations.broker:RedisTransport"
    # Redis: a task whose worker died is delivered again after this long (late acknowledgement).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 900)}
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_IGNORE_RESULT = True
# A worker killed mid-run must not take its task with it: acknowledge after the run, one at a time.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A lost broker connection leaves the runs in flight running: they record their own outcome in the
# database, and a run delivered again finds itself finished (Celery 6 would cancel them by default).
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None  # a worker waits for its broker as long as it is away (every 2 s)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# How often beat sends each sweep: what a lost worker or message leaves waits at most this long past
# its own threshold (docs/operations.md, "Recovery times"). Each sweep is a few indexed queries.
SWEEP_SECONDS = envint("SWEEP_SECONDS", 5)
if SWEEP_SECONDS < 1:
    raise ValueError(f"SWEEP_SECONDS must be at least 1, got {SWEEP_SECONDS}")
CELERY_BEAT_SCHEDULE = {
    "sweep-lost-runs": {"task": "agents.tasks.sweep_lost_runs", "schedule": float(SWEEP_SECONDS)},
    # escalation deadlines: reminders and breaches (reviewer.alerts.deadlines), each at most once
    "sweep-deadlines": {"task": "reviewer.tasks.sweep_deadlines", "schedule": float(SWEEP_SECONDS)},
    "sweep-deliveries": {"task": "reviewer.tasks.sweep_deliveries", "schedule": float(SWEEP_SECONDS)},
    # the ledger (docs/ledger.md): verified and its head hash sent out hourly, pruned daily
    "verify-ledger": {"task": "reviewer.tasks.verify_ledger", "schedule": 3600.0},
    "anchor-ledger": {"task": "reviewer.tasks.anchor_ledger", "schedule": 3600.0},
    "prune-ledger": {"task": "reviewer.tasks.prune_ledger", "schedule": 86400.0},
    # the status page's uptime bars (docs/status-page.md, "Uptime history"): today's bar grows hourly
    "rebuild-status-page": {"task": "reviewer.tasks.rebuild_status_page", "schedule": 3600.0},
    # scheduled maintenance (docs/status-page.md): reminders, then the moves at its times
    "sweep-maintenance": {"task": "reviewer.tasks.sweep_maintenance", "schedule": 30.0},
}

# How many due deadline events (breaches, reminders, lost "opened" notices) one sweep takes, oldest
# deadline first; a sweep that takes a whole batch sends a follow-up at once for the rest.
DEADLINE_SWEEP_BATCH = envint("DEADLINE_SWEEP_BATCH", 200)
if DEADLINE_SWEEP_BATCH < 1:
    raise ValueError(f"DEADLINE_SWEEP_BATCH must be at least 1, got {DEADLINE_SWEEP_BATCH}")

# The ledger (docs/ledger.md). Its entries are kept LEDGER_RETENTION_DAYS, never fewer than six
# months (183 days), as the EU AI Act asks of a high-risk system's logs (Art. 19). Its head hash is
# sent hourly to LEDGER_ANCHOR_DESTINATION, one of OUTBOUND_DESTINATIONS (unset: nothing is sent).
LEDGER_MIN_RETENTION_DAYS = 183
LEDGER_RETENTION_DAYS = envint("LEDGER_RETENTION_DAYS", 400)
if LEDGER_RETENTION_DAYS < LEDGER_MIN_RETENTION_DAYS:
    raise ImproperlyConfigured(
        f"LEDGER_RETENTION_DAYS is {LEDGER_RETENTION_DAYS}: the ledger is kept at least "
        f"{LEDGER_MIN_RETENTION_DAYS} days (six months); set {LEDGER_MIN_RETENTION_DAYS} or more.")
LEDGER_ANCHOR_DESTINATION = os.environ.get("LEDGER_ANCHOR_DESTINATION", "").strip()

# Publishing: outbound destinations come from the operator's allowlist only (OUTBOUND_DESTINATIONS,
# read by reviewer.outbox.destinations); a declaration that does not parse stops every process at
# startup, with a message (ReviewerConfig.ready).
# The outbox: attempts before a delivery is dead-lettered, the first retry's delay (doubling after
# each failure, at most DELIVERY_BACKOFF_MAX_SECONDS), the request timeout, and the lease: how long an
# attempt holds its delivery to send and record the outcome. A send at most once (email, Slack) still
# `sending` when its lease ends is held by the next sweep; an at-least-once one is sent again a lease later.
# Keep the lease well above the send's timeouts (DELIVERY_TIMEOUT_SECONDS, EMAIL_TIMEOUT): a send still
# waiting for its answer when the lease ends is held although it may go through.
DELIVERY_MAX_ATTEMPTS = envint("DELIVERY_MAX_ATTEMPTS", 6)
DELIVERY_BACKOFF_SECONDS = envint("DELIVERY_BACKOFF_SECONDS", 10)
DELIVERY_BACKOFF_MAX_SECONDS = envint("DELIVERY_BACKOFF_MAX_SECONDS", 3600)
DELIVERY_TIMEOUT_SECONDS = envint("DELIVERY_TIMEOUT_SECONDS", 10)
DELIVERY_LEASE_SECONDS = envint("DELIVERY_LEASE_SECONDS", 20)
# Where a worker keeps a receiver's answer (an SMTP 250, an HTTP 2xx) the moment it arrives, before the
# database has it (reviewer.outbox.answers): a local disk the workers and the delivery sweep share.
DELIVERY_ANSWERS_DIR = Path(os.environ.get("DELIVERY_ANSWERS_DIR") or VAR_DIR / "outbox-answers")
# Email channel: Django's mail backends (the demo writes files into var/demo-mail/).
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or "django.core.mail.backends.smtp.EmailBackend"
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH") or str(VAR_DIR / "mail")  # the file backend's folder
EMAIL_HOST = os.environ.get("EMAIL_HOST") or "localhost"
EMAIL_PORT = envint("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL") or "status@localhost"

# A running run writes a heartbeat this often; one silent for RUN_STALE_SECONDS lost its worker.
RUN_HEARTBEAT_SECONDS = envint("RUN_HEARTBEAT_SECONDS", 5)
RUN_STALE_SECONDS = envint("RUN_STALE_SECONDS", 60)
