"""The database settings as a server loads them (a fresh process, the product settings module): a
connection pool on PostgreSQL whose connections are checked and replaced without a long backoff, a
short wait for the web and a longer one for workers, kept connections on SQLite, and a clear error
for a bad pool size."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
SHOW = ("from django.conf import settings; import json; "
        "db = settings.DATABASES['default']; "
        "print(json.dumps({'age': db['CONN_MAX_AGE'], 'pool': db.get('OPTIONS', {}).get('pool')}))")
WEB_SHOW = "import reviewer.wsgi; " + SHOW  # as gunicorn loads the web app


def load(show=f"import django; django.setup(); {SHOW}", **env):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "DJANGO_", "WEB_", "SERVING_"))}
    return subprocess.run([sys.executable, "-c", show], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**base, "DJANGO_SETTINGS_MODULE": "reviewer.settings", "DEBUG": "true", **env})


def shown(**env) -> dict:
    out = load(**env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_postgresql_gets_a_pool_of_twenty_by_default_and_no_kept_connections():
    assert shown(DATABASE_URL="postgres://u:p@db.internal:5432/gated") == {
        "age": 0, "pool": {"min_size": 2, "max_size": 20, "timeout": 30, "reconnect_timeout": 2}}


def test_the_web_waits_seconds_for_a_pooled_connection_where_workers_wait_their_turn():
    url = "postgres://u:p@db.internal:5432/gated"
    web = load(WEB_SHOW, DATABASE_URL=url, SECRET_KEY="k" * 50)
    assert web.returncode == 0, web.stderr
    assert json.loads(web.stdout.strip().splitlines()[-1])["pool"]["timeout"] == 4
    web = load(WEB_SHOW, DATABASE_URL=url, SECRET_KEY="k" * 50, WEB_DATABASE_POOL_TIMEOUT="2",
               DATABASE_POOL_TIMEOUT="60")
    assert json.loads(web.stdout.strip().splitlines()[-1])["pool"]["timeout"] == 2
    assert shown(DATABASE_URL=url, WEB_DATABASE_POOL_TIMEOUT="2", DATABASE_POOL_TIMEOUT="60")["pool"]["timeout"] == 60


def test_pooled_connections_are_checked_and_connecting_gives_up_within_seconds():
    """Django hands psycopg_pool its own check (check_connection) when health checks are on; the
    pool options must not name it again (a second ``check`` is a TypeError in Django's pool)."""
    show = ("import django; django.setup(); from django.db import connection; "
            "from psycopg_pool import ConnectionPool; db = connection.settings_dict; "
            "print(connection.pool._check is ConnectionPool.check_connection, "
            "db['OPTIONS']['connect_timeout'], 'check' in db['OPTIONS']['pool'])")
    out = load(show, DATABASE_URL="postgres://u:p@db.internal:5432/gated")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-3:] == ["True", "3", "False"]
    out = load(show, DATABASE_URL="postgres://u:p@db.internal:5432/gated?connect_timeout=10")
    assert out.stdout.split()[-2] == "10"


def test_the_pool_follows_its_variables_and_zero_turns_it_off():
    url = "postgres://u:p@db.internal:5432/gated"
    assert shown(DATABASE_URL=url, DATABASE_POOL_MAX_SIZE="8", DATABASE_POOL_MIN_SIZE="12",
                 DATABASE_POOL_TIMEOUT="5")["pool"] == {"min_size": 8, "max_size": 8, "timeout": 5,
                                                        "reconnect_timeout": 2}
    assert shown(DATABASE_URL=url, DATABASE_POOL_MAX_SIZE="0") == {"age": 0, "pool": None}
    # Kept connections per thread instead: Django refuses a pool together with them.
    assert shown(DATABASE_URL=url, DATABASE_CONN_MAX_AGE="60") == {"age": 60, "pool": None}


def test_a_negative_pool_size_is_refused_with_its_name():
    out = load(DATABASE_URL="postgres://u:p@db.internal:5432/gated", DATABASE_POOL_MAX_SIZE="-1")
    assert out.returncode != 0 and "DATABASE_POOL_MAX_SIZE must not be negative" in out.stderr


def test_sqlite_keeps_each_threads_connection():
    assert shown() == {"age": 600, "pool": None}  # no DATABASE_URL: SQLite
    assert shown(DATABASE_CONN_MAX_AGE="0")["age"] == 0
