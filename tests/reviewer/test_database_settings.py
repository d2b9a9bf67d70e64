"""The database settings as a server loads them (a fresh process, the product settings module): a
connection pool on PostgreSQL, kept connections on SQLite, and a clear error for a bad pool size."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
SHOW = ("from django.conf import settings; import json; "
        "db = settings.DATABASES['default']; "
        "print(json.dumps({'age': db['CONN_MAX_AGE'], 'pool': db.get('OPTIONS', {}).get('pool')}))")


def load(**env):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "DJANGO_"))}
    return subprocess.run([sys.executable, "-c", f"import django; django.setup(); {SHOW}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**base, "DJANGO_SETTINGS_MODULE": "reviewer.settings", "DEBUG": "true", **env})


def shown(**env) -> dict:
    out = load(**env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_postgresql_gets_a_pool_of_twenty_by_default_and_no_kept_connections():
    assert shown(DATABASE_URL="postgres://u:p@db.internal:5432/gated") == {
        "age": 0, "pool": {"min_size": 2, "max_size": 20, "timeout": 30}}


def test_the_pool_follows_its_variables_and_zero_turns_it_off():
    url = "postgres://u:p@db.internal:5432/gated"
    assert shown(DATABASE_URL=url, DATABASE_POOL_MAX_SIZE="8", DATABASE_POOL_MIN_SIZE="12",
                 DATABASE_POOL_TIMEOUT="5")["pool"] == {"min_size": 8, "max_size": 8, "timeout": 5}
    assert shown(DATABASE_URL=url, DATABASE_POOL_MAX_SIZE="0") == {"age": 0, "pool": None}
    # Kept connections per thread instead: Django refuses a pool together with them.
    assert shown(DATABASE_URL=url, DATABASE_CONN_MAX_AGE="60") == {"age": 60, "pool": None}


def test_a_negative_pool_size_is_refused_with_its_name():
    out = load(DATABASE_URL="postgres://u:p@db.internal:5432/gated", DATABASE_POOL_MAX_SIZE="-1")
    assert out.returncode != 0 and "DATABASE_POOL_MAX_SIZE must not be negative" in out.stderr


def test_sqlite_keeps_each_threads_connection():
    assert shown() == {"age": 600, "pool": None}  # no DATABASE_URL: SQLite
    assert shown(DATABASE_CONN_MAX_AGE="0")["age"] == 0
