"""/healthz and /readyz: alive without the database; ready only with the database, the broker and every
migration; quiet in the logs."""

import logging
import socket
import time

import pytest
from django.db import connection
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.log import log_response

from reviewer.operations import health
from reviewer.operations.logs import QuietProbes


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def unmigrated_check(monkeypatch):
    """Every /readyz looks at the migrations again (a process remembers once they are all applied)."""
    monkeypatch.setattr(health, "_migrated", False)


def test_healthz_answers_ok_without_touching_the_database(client):
    # No db fixture: pytest-django makes any query here an error.
    response = client.get("/healthz")
    assert (response.status_code, response.content) == (200, b"ok\n")
    assert "no-cache" in response["Cache-Control"]


def test_healthz_needs_no_login_and_refuses_a_post(client):
    assert client.get("/healthz").status_code == 200
    assert client.post("/healthz").status_code == 405


def test_a_probe_by_address_over_plain_http_is_answered(client, db, settings):
    """A load balancer sends its own Host (an address ALLOWED_HOSTS does not list) and plain HTTP."""
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz", HTTP_HOST="10.0.0.9:8000").status_code == 200
    assert client.get("/readyz", HTTP_HOST="10.0.0.9:8000").status_code == 200
    assert client.get("/accounts/login/", HTTP_HOST="10.0.0.9:8000").status_code == 400  # pages keep the check


def test_readyz_is_200_with_its_checks_when_all_is_well(client, db, unmigrated_check):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "migrations": "ok", "broker": "ok"}}


def test_readyz_is_503_naming_an_unapplied_migration(client, db, unmigrated_check):
    with connection.cursor() as cursor:  # undone with the test's transaction
        cursor.execute("SELECT MAX(name) FROM django_migrations WHERE app = 'reviewer'")
        newest = cursor.fetchone()[0]
        cursor.execute("DELETE FROM django_migrations WHERE app = 'reviewer' AND name = %s", [newest])
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["migrations"]
    assert body["checks"]["migrations"] == f"1 unapplied migration(s): reviewer.{newest} (run manage.py migrate)"
    assert body["checks"]["database"] == body["checks"]["broker"] == "ok"


def test_readyz_is_503_naming_a_broker_that_does_not_answer_within_its_bound(client, db, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{closed_port()}/0"
    started = time.monotonic()
    response = client.get("/readyz")
    assert time.monotonic() - started < health.BROKER_CHECK_SECONDS + 2
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["broker"]
    assert body["checks"]["broker"].startswith("the broker does not answer (")


def test_a_503_of_readyz_writes_no_log_line_while_other_error_answers_do(client, db, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{closed_port()}/0"
    logged, written = [], []
    everything, console = logging.Handler(), logging.Handler()  # console: filtered as settings.LOGGING's
    everything.emit, console.emit = logged.append, written.append
    console.addFilter(QuietProbes())
    logger = logging.getLogger("django.request")
    logger.addHandler(everything)
    logger.addHandler(console)
    try:
        assert client.get("/readyz").status_code == 503  # Django logs it as an error, with the request
        log_response("Service Unavailable: %s", "/inbox/", response=HttpResponse(status=503),
                     request=RequestFactory().get("/inbox/"))
    finally:
        logger.removeHandler(everything)
        logger.removeHandler(console)
    assert [r.getMessage() for r in logged] == ["Service Unavailable: /readyz", "Service Unavailable: /inbox/"]
    assert [r.getMessage() for r in written] == ["Service Unavailable: /inbox/"]
