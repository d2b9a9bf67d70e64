"""The web as production serves it (gunicorn, reviewer/gunicorn_conf.py, DEBUG off, the connection
pool) while its PostgreSQL stops and starts again: pages answer the product's 503 page with
Retry-After within seconds and the API a JSON 503, each logged as a JSON line with its request id;
the first request once the database is back answers 200, and so does the first after a restart
that no request saw."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import requests

from tests.factories import PASSWORD, wait_for
from tests.services import ROOT, django_call, free_port, migrate, product_env

pytestmark = pytest.mark.postgres

FAIL_FAST_SECONDS = 5


@pytest.fixture
def web(private_postgres, tmp_path):
    """gunicorn with the documented production command (docs/running.md), one process of 4 threads."""
    env = product_env(tmp_path, private_postgres.url(), "filesystem://", ALLOWED_HOSTS="127.0.0.1",
                      WEB_CONCURRENCY="1", GUNICORN_THREADS="4")
    (tmp_path / "var" / "static").mkdir(parents=True)
    migrate(env)
    django_call(env, "from reviewer.roles import SUPPORT_LEAD\nfrom tests.factories import make_user\n"
                     "make_user('lead', group=SUPPORT_LEAD)")
    port = free_port()
    log_path = tmp_path / "web.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:reviewer.gunicorn_conf", "--bind",
                                    f"127.0.0.1:{port}", "reviewer.wsgi"], cwd=ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def answers():
        assert process.poll() is None, log_path.read_text()
        try:
            return requests.get(f"{base}/accounts/login/", timeout=10).status_code == 200
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or its process still loading
            return False

    wait_for(answers, 60, 0.2, "gunicorn to serve")
    yield base, log_path
    process.terminate()
    process.wait(timeout=20)


def logged_in(base: str) -> requests.Session:
    session = requests.Session()
    session.get(f"{base}/accounts/login/", timeout=10)
    response = session.post(f"{base}/accounts/login/", timeout=10, allow_redirects=False,
                            data={"username": "lead", "password": PASSWORD,
                                  "csrfmiddlewaretoken": session.cookies["csrftoken"]})
    assert response.status_code == 302, response.text[-2000:]
    return session


def timed_get(session: requests.Session, url: str, **headers) -> tuple[requests.Response, float]:
    started = time.monotonic()
    response = session.get(url, timeout=60, headers=headers)
    return response, time.monotonic() - started


def json_lines(log_path) -> list[dict]:
    return [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]


def test_the_web_fails_fast_while_the_database_is_away_and_the_first_request_after_it_is_back_succeeds(
        private_postgres, web):
    base, log_path = web
    session = logged_in(base)
    assert session.get(f"{base}/incidents/", timeout=10).status_code == 200

    private_postgres.stop()
    page, seconds = timed_get(session, f"{base}/incidents/", **{"X-Request-ID": "drill-page-0001"})
    assert page.status_code == 503 and seconds < FAIL_FAST_SECONDS, (page.status_code, seconds)
    assert "Unavailable for a moment" in page.text and "drill-page-0001" in page.text
    assert page.headers["Retry-After"] == "5" and page.headers["X-Request-ID"] == "drill-page-0001"
    api, seconds = timed_get(session, f"{base}/api/incidents")
    assert api.status_code == 503 and seconds < FAIL_FAST_SECONDS, (api.status_code, seconds)
    assert api.headers["Retry-After"] == "5" and api.json()["request_id"] == api.headers["X-Request-ID"]
    logged = {line.get("request_id"): line for line in json_lines(log_path) if line["logger"] == "django.request"}
    assert logged["drill-page-0001"]["status"] == 503 and "OperationalError" in logged["drill-page-0001"]["exception"]
    assert logged[api.headers["X-Request-ID"]]["path"] == "/api/incidents"

    private_postgres.start()
    first = session.get(f"{base}/incidents/", timeout=10)
    assert first.status_code == 200, first.text[-2000:]

    private_postgres.restart()  # no request while it was away: the pool still holds the dead connections
    first, seconds = timed_get(session, f"{base}/incidents/")
    assert first.status_code == 200, (seconds, first.text[-2000:])
