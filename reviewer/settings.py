"""One settings module; every deployment difference comes from the environment."""

import os
from pathlib import Path

import dj_database_url

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


DEBUG = envbool("DEBUG", False)
# The embedded default is for a laptop; production sets its own key.
SECRET_KEY = os.environ.get("SECRET_KEY") or "insecure-local-only-key-set-SECRET_KEY-in-production"
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "ninja",  # serves the API docs' Swagger UI from static files, not a CDN
    "agents",
    "reviewer",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files (htmx, CSS) from the app itself, no CDN
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "reviewer.middleware.RefuseControlCharactersMiddleware",  # a NUL in a filter is a 400, not a 500
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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
                "reviewer.context_processors.navigation",
            ],
        },
    },
]

WSGI_APPLICATION = "reviewer.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=envint("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while a worker writes a trace step.
    # synchronous=NORMAL is safe with WAL (a power cut may lose the last commits, never corrupt the
    # file) and spares each of a run's ~20 commits an fsync under the single write lock.
    # IMMEDIATE: a transaction that reads and then writes takes the write lock up front, so it
    # waits its turn (busy timeout) instead of failing at once with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
         "transaction_mode": "IMMEDIATE"}
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")  # filled by collectstatic

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# The LLM layer (SPEC §5.3) reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL,
# OPENAI_TIMEOUT_SECONDS, OPENAI_MAX_RETRIES, OPENAI_STRUCTURED_OUTPUT and LLM_BACKEND itself, in
# agents.core.llm.client.client_from_env: one reader, shared by the command line, the workers and the tests.

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "agents": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    },
}

# Celery (SPEC §2, §10). Without CELERY_BROKER_URL the broker is a folder on disk (kombu's
# filesystem transport): no server to install, and web process and workers share it.
VAR_DIR = Path(os.environ.get("VAR_DIR") or BASE_DIR / "var")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
CELERY_BROKER_FOLDER = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem"):
    CELERY_BROKER_TRANSPORT = "reviewer.broker:Transport"  # the filesystem transport, written atomically
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_FOLDER),
        "data_folder_out": str(CELERY_BROKER_FOLDER),
        "control_folder": str(CELERY_BROKER_FOLDER / "control"),
        "polling_interval": 0.1,
    }
else:
    # Redis: a task whose worker died is delivered again after this long (late acknowledgement).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 900)}
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_IGNORE_RESULT = True
# A worker killed mid-run must not take its task with it: acknowledge after the run, one at a time.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "sweep-lost-runs": {"task": "agents.tasks.sweep_lost_runs", "schedule": 30.0},
}

# A running run writes a heartbeat this often; one silent for RUN_STALE_SECONDS lost its worker.
RUN_HEARTBEAT_SECONDS = envint("RUN_HEARTBEAT_SECONDS", 5)
RUN_STALE_SECONDS = envint("RUN_STALE_SECONDS", 60)
