"""Health checks for a load balancer, an orchestrator or a service manager (docs/operations.md,
"Health checks"); unauthenticated, and quiet in the logs (``reviewer.operations.logs.QuietProbes``).

``/healthz``: the process is alive and answers requests. It touches no database and no broker, so a
database outage never makes an orchestrator restart healthy web processes.

``/readyz``: this process can do its work: the database answers, the broker takes connections and
every migration is applied. 200 with the checks as JSON, or 503 naming the one that failed. Each check
is bounded in time (the database's connect_timeout, BROKER_CHECK_SECONDS for the broker).
"""

from __future__ import annotations

import os

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from kombu import Connection

BROKER_CHECK_SECONDS = 2.0
# Once every migration is applied it stays so for this process's code: the check then costs nothing.
_migrated = False


@never_cache
@require_safe
def healthz(request):
    return HttpResponse("ok\n", content_type="text/plain; charset=utf-8")


def database_answers() -> str | None:
    """None when the database answers a query, else what went wrong."""
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any failure is the answer, named
        return f"the database does not answer ({type(error).__name__})"
    return None


def migrations_applied() -> str | None:
    global _migrated
    if _migrated:
        return None
    connection = connections[DEFAULT_DB_ALIAS]
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        names = ", ".join(f"{migration.app_label}.{migration.name}" for migration, _ in plan[:3])
        more = f" and {len(plan) - 3} more" if len(plan) > 3 else ""
        return f"{len(plan)} unapplied migration(s): {names}{more} (run manage.py migrate)"
    _migrated = True
    return None


def broker_reachable() -> str | None:
    """None when the Celery broker takes a connection within BROKER_CHECK_SECONDS. The embedded
    broker is a folder, made on first use as reviewer.celery makes it: it must be there and writable."""
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem"):
        folder = settings.CELERY_BROKER_FOLDER
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as error:
            return f"the broker folder {folder} cannot be made ({error.strerror})"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"the broker folder {folder} is not writable"
        return None
    # The plain transport of the URL's scheme: connecting is all this asks of it.
    options = {"socket_timeout": BROKER_CHECK_SECONDS, "socket_connect_timeout": BROKER_CHECK_SECONDS}
    try:
        with Connection(url, connect_timeout=BROKER_CHECK_SECONDS, transport_options=options) as conn:
            conn.ensure_connection(max_retries=0, timeout=BROKER_CHECK_SECONDS)  # one try, no retry
    except Exception as error:  # any failure is the answer, named
        return f"the broker does not answer ({type(error).__name__})"
    return None


@never_cache
@require_safe
def readyz(request):
    database = database_answers()
    problems = {"database": database,
                "migrations": migrations_applied() if database is None else None,
                "broker": broker_reachable()}
    checks = {name: problem or "ok" for name, problem in problems.items()}
    if database is not None:
        checks["migrations"] = "not checked: the database does not answer"
    failed = [name for name, problem in problems.items() if problem]
    if failed:
        return JsonResponse({"status": "unavailable", "failed": failed, "checks": checks}, status=503)
    return JsonResponse({"status": "ok", "checks": checks})
