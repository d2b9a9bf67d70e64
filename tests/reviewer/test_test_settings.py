"""The test settings under pytest-xdist: each process has its own Redis database, and the Celery app
of that process and of the worker subprocesses it starts (they inherit its environment) use it."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
# The settings first, as in every process of ours (django.setup(), pytest-django, the celery command).
SHOW = ("import os; from django.conf import settings; settings.CELERY_BROKER_URL; from reviewer.celery import app; "
        "print(app.conf.broker_url, os.environ.get('CELERY_BROKER_URL'))")


def broker_seen(**env) -> tuple[str, str]:
    """The broker URL of the Celery app in a fresh process with ``env``, and the one its subprocesses inherit."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PYTEST_XDIST_", "DJANGO_"))}
    out = subprocess.run([sys.executable, "-c", SHOW], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**base, "DJANGO_SETTINGS_MODULE": "reviewer.test_settings", **env})
    assert out.returncode == 0, out.stderr
    own, inherited = out.stdout.split()
    return own, inherited


def test_each_xdist_process_and_its_subprocesses_use_the_redis_database_named_after_it():
    url = "redis://127.0.0.1:6390/0"
    assert broker_seen(CELERY_BROKER_URL=url, PYTEST_XDIST_WORKER="gw0") == (url, url)
    assert broker_seen(CELERY_BROKER_URL=url, PYTEST_XDIST_WORKER="gw1") == ("redis://127.0.0.1:6390/1",) * 2


def test_without_xdist_the_broker_is_the_one_given():
    assert broker_seen(CELERY_BROKER_URL="redis://127.0.0.1:6390/3") == ("redis://127.0.0.1:6390/3",) * 2
    assert broker_seen(PYTEST_XDIST_WORKER="gw1") == ("filesystem://", "None")  # the embedded broker: no Redis
