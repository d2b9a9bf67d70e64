"""Failures answer with the product's pages and are logged: a bug is a 500 page naming the request id,
a database that does not answer is a 503 page with Retry-After (JSON under /api/), a body over the
limit is a 413 page; every answer carries X-Request-ID, and Django's error lines are JSON with the
request id and the traceback. The pages render without a query: the database may be the failure."""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import OperationalError, connection
from django.urls import reverse

from reviewer.operations.logs import JsonLines

ROOT = Path(__file__).parents[3]
FAILURES = "tests.reviewer.operations.failure_urls"


@pytest.fixture
def failing(settings):
    settings.ROOT_URLCONF = FAILURES


@pytest.fixture
def logged():
    """The JSON lines written while the test runs, as the product's handler writes them."""

    class Lines(logging.Handler):
        lines: list[dict] = []

        def emit(self, record):
            self.lines.append(json.loads(self.format(record)))

    handler = Lines()
    handler.lines = []
    handler.setFormatter(JsonLines())
    logging.getLogger().addHandler(handler)
    yield handler.lines
    logging.getLogger().removeHandler(handler)


def refuse(execute, sql, params, many, context):
    """As a database that went away: ``with connection.execute_wrapper(refuse)`` fails every query."""
    raise OperationalError("the server is gone")


def test_a_bug_answers_the_500_page_with_the_request_id_and_logs_it_with_the_traceback(client, failing, logged):
    client.raise_request_exception = False
    response = client.get("/test-failures/bug/", HTTP_X_REQUEST_ID="edge-7f3a9c21")
    assert response.status_code == 500
    assert response["X-Request-ID"] == "edge-7f3a9c21"
    page = response.content.decode()
    assert "<h1>Server error</h1>" in page and "edge-7f3a9c21" in page and 'class="topbar"' in page
    [line] = [line for line in logged if line["logger"] == "django.request"]
    assert line["level"] == "ERROR" and line["status"] == 500
    assert (line["request_id"], line["method"], line["path"]) == ("edge-7f3a9c21", "GET", "/test-failures/bug/")
    assert "RuntimeError: a bug in a view" in line["exception"] and "Traceback" in line["exception"]


def test_the_database_going_away_answers_the_503_page_without_a_query(client, users, failing, logged):
    client.raise_request_exception = False
    client.force_login(users.lead)  # the page below first reads this session: the query that fails
    with connection.execute_wrapper(refuse):
        response = client.get(reverse("incidents"))
    assert response.status_code == 503 and response["Retry-After"] == "5"
    page = response.content.decode()
    assert "Unavailable for a moment" in page and response["X-Request-ID"] in page
    assert "Log out" not in page  # the layout for failures: no user, no navigation, nothing from the database
    [line] = [line for line in logged if line["logger"] == "django.request"]
    assert line["status"] == 503 and "the server is gone" in line["exception"]


def test_a_customer_on_the_status_page_is_sent_back_to_it_not_to_the_staff_dashboard(client, db, settings):
    client.raise_request_exception = False
    settings.STATUS_PAGE_NAME = "Acme"
    with connection.execute_wrapper(refuse):
        response = client.get(reverse("status"))
    assert response.status_code == 503
    page = response.content.decode()
    assert "Acme status" in page and "Back to the status page" in page
    assert "dashboard" not in page and "Gated review" not in page


def test_a_database_error_raised_by_a_view_is_a_503_too_and_a_bug_renders_without_a_query(client, db, failing):
    client.raise_request_exception = False
    with connection.execute_wrapper(refuse):
        assert client.get("/test-failures/database/").status_code == 503
        assert client.get("/test-failures/bug/").status_code == 500  # a page that queried would raise here


def test_the_api_answers_503_in_json_when_it_cannot_get_a_connection(client, monkeypatch, logged):
    def away():
        raise OperationalError("couldn't get a connection after 4.00 sec")

    client.raise_request_exception = False
    monkeypatch.setattr(connection, "ensure_connection", away)
    response = client.get("/api/incidents", HTTP_AUTHORIZATION="Bearer gr_whatever")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    body = response.json()
    assert body["request_id"] == response["X-Request-ID"] and "database" in body["message"]


@pytest.mark.parametrize("incoming", ["", "short", "has space in it", "x" * 65, "<script>alert(1)</script>",
                                      "line\nbreak-12345"])
def test_an_unsafe_or_missing_request_id_is_replaced_by_a_new_one(client, incoming):
    response = client.get(reverse("login"), HTTP_X_REQUEST_ID=incoming)
    assert response.status_code == 200
    assert response["X-Request-ID"] != incoming and len(response["X-Request-ID"]) == 32


def test_a_safe_request_id_from_a_proxy_is_kept(client):
    assert client.get(reverse("login"), HTTP_X_REQUEST_ID="lb:1-2_3.abcd")["X-Request-ID"] == "lb:1-2_3.abcd"


@pytest.mark.parametrize("htmx", [False, True])
def test_a_form_over_the_size_limit_answers_413_with_a_page(client, users, demo_data, settings, htmx):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    client.force_login(users.ops)
    url = reverse("start_run", args=[next(iter(demo_data))])
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.post(url, {"pipeline": "reflection", "goal": "x" * 3000}, **headers)
    assert response.status_code == 413
    page = response.content.decode()
    assert "<h1>Too large</h1>" in page and "larger than the 2.0\xa0KB this site accepts" in page


def test_keys_in_links_never_reach_a_log_line():
    record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "Internal Server Error: %s",
                               ("/status/unsubscribe/9f0c3a52-7d4e-4a8b-9c1d-2e3f4a5b6c7d/",), None)
    line = json.loads(JsonLines().format(record))
    assert line["message"] == "Internal Server Error: /status/unsubscribe/<key>/"


def test_model_keys_and_encoded_link_keys_never_reach_a_log_line(monkeypatch):
    key = "sk-live-4f9c2e7a1b8d6e3f"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    copies = [key.upper(), "s - k _ l . i \n v e-4f9c2e7a1b8d6e3f", "sk%2Dlive%2D4f9c2e7a1b8d6e3f",
              base64.b64encode(f"user:{key}".encode()).decode(), "9f0c3a52%2D7d4e%2D4a8b%2D9c1d%2D2e3f4a5b6c7d"]
    record = logging.LogRecord("httpx", logging.WARNING, __file__, 1, "refused: %s", (" | ".join(copies),), None)
    line = json.loads(JsonLines().format(record))
    assert line["message"].count("[redacted]") == 4 and line["message"].endswith("<key>")
    assert "4f9c2e7a1b8d6e3f" not in line["message"]


def test_with_debug_off_a_500_leaves_one_json_line_on_stderr():
    """The settings as a server loads them, in a fresh process: Django's own logging would write nothing."""
    script = ("import django; django.setup(); from django.conf import settings; from django.test import Client; "
              f"settings.ROOT_URLCONF = {FAILURES!r}; "
              "print(Client(raise_request_exception=False).get('/test-failures/bug/').status_code)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEBUG"))}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**env, "DJANGO_SETTINGS_MODULE": "reviewer.test_settings", "DEBUG": "false",
                              "ALLOWED_HOSTS": "testserver"})
    assert out.stdout.split()[-1] == "500", out.stderr
    lines = [json.loads(line) for line in out.stderr.splitlines() if line.startswith("{")]
    assert [(line["logger"], line["status"]) for line in lines] == [("django.request", 500)], out.stderr
    assert "RuntimeError: a bug in a view" in lines[0]["exception"] and len(lines[0]["request_id"]) == 32


def test_the_api_docs_need_no_database(client):
    """No ``db`` fixture: a query here fails the test."""
    assert client.get("/api/openapi.json").status_code == 200 and client.get("/api/docs").status_code == 200
