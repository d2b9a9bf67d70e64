"""Test overrides, in one place. Worker subprocesses started by the tests use this module too."""

import os
from pathlib import Path
from urllib.parse import urlsplit

# The tests' own key (DEBUG is off in tests, so settings refuse the built-in one); manage.py and worker
# subprocesses started by the tests inherit it. Not a secret: it signs nothing outside the tests.
os.environ.setdefault("SECRET_KEY", "tests-only-key-4b1c9e0d7a6f5e3b2a1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e")

from reviewer.settings import *
from reviewer.settings import BASE_DIR, DATABASES

VAR_DIR = Path(os.environ.get("TEST_VAR_DIR") or BASE_DIR / "var" / "test")  # per-session: TEST_VAR_DIR
CELERY_BROKER_FOLDER = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_FOLDER),
        "data_folder_out": str(CELERY_BROKER_FOLDER),
        "control_folder": str(CELERY_BROKER_FOLDER / "control"),
        "polling_interval": 0.1,
    }
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
DELIVERY_ANSWERS_DIR = Path(os.environ.get("DELIVERY_ANSWERS_DIR") or VAR_DIR / "outbox-answers")

# Under pytest-xdist each process has its own Redis database, as it has its own test database
# (pytest-django names it with the process's suffix, _gw0, _gw1): process gwN uses database N, so one
# process's worker never takes another's tasks. Celery reads CELERY_BROKER_URL from the environment
# before its settings, so the environment says it too; worker subprocesses inherit it.
if CELERY_BROKER_URL.startswith("redis") and (xdist_process := os.environ.get("PYTEST_XDIST_WORKER")):
    CELERY_BROKER_URL = urlsplit(CELERY_BROKER_URL)._replace(path=f"/{int(xdist_process.removeprefix('gw'))}").geturl()
    os.environ["CELERY_BROKER_URL"] = CELERY_BROKER_URL

# Worker tests share the test database with a worker process, so SQLite's test database is a file.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_SQLITE_NAME") or str(VAR_DIR / "test-db.sqlite3")}

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
RUN_HEARTBEAT_SECONDS = envint("RUN_HEARTBEAT_SECONDS", 1)
RUN_STALE_SECONDS = envint("RUN_STALE_SECONDS", 4)
STATIC_ROOT = VAR_DIR / "static"  # created by tests/conftest.py; tests that need files run collectstatic

# Every request reads the stored status page afresh (tests/reviewer/status/test_caching.py sets it
# back to test the reuse itself).
STATUS_PAGE_REUSE_SECONDS = 0
